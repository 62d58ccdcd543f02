// score_mod / mask_mod regions run on the CPU only so far: the msl tier
// refuses a spec that has one, naming the reason.
// RUN: attn-translate --attn-to-msl %s -split-input-file -verify-diagnostics

func.func @softcap_region(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                          %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{the msl tier cannot lower score_mod or mask_mod regions yet (CPU only so far: attn-to-cpu)}}
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
              -> o(%o : memref<?x8x?x64xf16>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %cap = arith.constant 30.0 : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %cap : f32
    attn.yield %r : f32
  }
  return
}

// -----

func.func @document(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                    %v: memref<?x8x?x64xf16>, %doc: memref<?xi32>,
                    %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{the msl tier cannot lower score_mod or mask_mod regions yet}}
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>) captures(%doc : memref<?xi32>)
              -> o(%o : memref<?x8x?x64xf16>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: memref<?xi32>):
    %di = memref.load %d[%i] : memref<?xi32>
    %dj = memref.load %d[%j] : memref<?xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  }
  return
}
