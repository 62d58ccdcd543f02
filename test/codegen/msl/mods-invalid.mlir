// What the msl tier cannot print of a score_mod / mask_mod region (it
// prints them through EmitC as MSL functions): Metal has no double, the
// captures' f16 would need MSL's names, a math op without a Metal
// function, a NaN constant under fast math. (Ops off the region list, which
// EmitC could not convert, are refused by the verifier.)
// RUN: attn-translate --attn-to-msl %s -split-input-file -verify-diagnostics

func.func @f64_value(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                     %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
              -> o(%o : memref<?x8x?x64xf16>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{the msl tier prints score_mod regions with f32, integer and index values only (Metal has no f64, and f16/bf16 values are not printed yet); 'arith.extf' yields 'f64'}}
    %wide = arith.extf %s : f32 to f64
    %r = arith.truncf %wide : f64 to f32
    attn.yield %r : f32
  }
  return
}

// -----

func.func @f16_capture(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                       %v: memref<?x8x?x64xf16>, %w: memref<?xf16>,
                       %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{the msl tier loads captures of f32 or integer elements; a capture of score_mod has type 'memref<?xf16>'}}
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>) captures(%w : memref<?xf16>)
              -> o(%o : memref<?x8x?x64xf16>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %c: memref<?xf16>):
    %x = memref.load %c[%j] : memref<?xf16>
    %y = arith.extf %x : f16 to f32
    %r = arith.addf %s, %y : f32
    attn.yield %r : f32
  }
  return
}

// -----

func.func @no_metal_function(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                             %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
              -> o(%o : memref<?x8x?x64xf16>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{the msl tier has no Metal function for 'math.erf' in score_mod}}
    %r = math.erf %s : f32
    attn.yield %r : f32
  }
  return
}

// -----

func.func @nan_constant(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                        %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{the msl tier cannot print a NaN constant in a mod region (Metal's fast math assumes none)}}
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
              -> o(%o : memref<?x8x?x64xf16>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %nan = arith.constant 0x7FC00000 : f32
    %r = arith.addf %s, %nan : f32
    attn.yield %r : f32
  }
  return
}
