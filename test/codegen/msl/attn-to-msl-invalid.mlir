// What the msl tier cannot do is refused with a diagnostic that names the
// rule and what is supported.
// RUN: attn-translate --attn-to-msl %s -split-input-file -verify-diagnostics
// RUN: not attn-translate --attn-to-msl --msl-kernel=wide %s -split-input-file 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not attn-translate --attn-to-msl --msl-splits=-2 %s -split-input-file 2>&1 | FileCheck %s --check-prefix=SPLITS

// KIND: error: option 'msl-kernel' must be auto, prefill, decode or vector, got 'wide'
// SPLITS: error: option 'msl-splits' must be in [-1, 64] (-1: by Sk, 0: no split-K), got -2

func.func @d36(%q: memref<?x4x?x36xf16>, %k: memref<?x4x?x36xf16>,
               %v: memref<?x4x?x36xf16>, %o: memref<?x4x?x36xf16>) {
  // expected-error @+1 {{the msl tier needs head dims that are multiples of 8 up to 256 (simdgroup_matrix 8x8); got D = 36, Dv = 36}}
  attn.attention q(%q : memref<?x4x?x36xf16>) k(%k : memref<?x4x?x36xf16>)
                 v(%v : memref<?x4x?x36xf16>) -> o(%o : memref<?x4x?x36xf16>)
  return
}

// -----

func.func @d512(%q: memref<?x4x?x512xf16>, %k: memref<?x4x?x512xf16>,
                %v: memref<?x4x?x512xf16>, %o: memref<?x4x?x512xf16>) {
  // expected-error @+1 {{the msl tier needs head dims that are multiples of 8 up to 256 (simdgroup_matrix 8x8); got D = 512, Dv = 512}}
  attn.attention q(%q : memref<?x4x?x512xf16>) k(%k : memref<?x4x?x512xf16>)
                 v(%v : memref<?x4x?x512xf16>) -> o(%o : memref<?x4x?x512xf16>)
  return
}

// -----

func.func @strided_offset(%q: memref<?x8x?x64xf16, strided<[?, 64, 512, 1], offset: ?>>,
                          %k: memref<?x8x?x64xf16>, %v: memref<?x8x?x64xf16>,
                          %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{the msl tier takes strided buffers with unit innermost stride and offset 0 (bind the buffer at the view's start); operand 'q' has layout strided<[?, 64, 512, 1], offset: ?>}}
  attn.attention q(%q : memref<?x8x?x64xf16, strided<[?, 64, 512, 1], offset: ?>>)
                 k(%k : memref<?x8x?x64xf16>) v(%v : memref<?x8x?x64xf16>)
              -> o(%o : memref<?x8x?x64xf16>)
  return
}

// -----

func.func @strided_lse(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                       %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>,
                       %lse: memref<?x8x?xf32, strided<[?, ?, 1]>>) {
  // expected-error @+1 {{the msl tier takes contiguous row-major buffers; operand 'lse' has layout strided<[?, ?, 1]> (view it as a contiguous memref)}}
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
                 lse(%lse : memref<?x8x?xf32, strided<[?, ?, 1]>>)
  return
}

// -----

func.func @too_much_threadgroup_memory(
    %q: memref<?x4x?x128xf32>, %k: memref<?x4x?x128xf32>,
    %v: memref<?x4x?x128xf32>, %o: memref<?x4x?x128xf32>) {
  // expected-error @+1 {{the msl tier needs 65536 bytes of threadgroup memory for D = 128, Dv = 128, f32, tiles 64x64; Metal allows 32768}}
  attn.attention q(%q : memref<?x4x?x128xf32>) k(%k : memref<?x4x?x128xf32>)
                 v(%v : memref<?x4x?x128xf32>) -> o(%o : memref<?x4x?x128xf32>)
                 schedule = <block_q = 64, block_kv = 64>
  return
}

// -----

func.func @block_q_128(%q: memref<?x4x?x32xf16>, %k: memref<?x4x?x32xf16>,
                       %v: memref<?x4x?x32xf16>, %o: memref<?x4x?x32xf16>) {
  // expected-error @+1 {{the msl tier needs block_q in {8, 16, 32, 64} and block_kv in {8, 16, 32, 64}; got block_q = 128, block_kv = 32}}
  attn.attention q(%q : memref<?x4x?x32xf16>) k(%k : memref<?x4x?x32xf16>)
                 v(%v : memref<?x4x?x32xf16>) -> o(%o : memref<?x4x?x32xf16>)
                 schedule = <block_q = 128>
  return
}

// -----

func.func @decode_block_q(%q: memref<?x4x1x32xf16>, %k: memref<?x4x?x32xf16>,
                          %v: memref<?x4x?x32xf16>, %o: memref<?x4x1x32xf16>) {
  // expected-error @+1 {{the msl tier's vector decode takes one row per threadgroup (block_q = 1); got block_q = 16}}
  attn.attention q(%q : memref<?x4x1x32xf16>) k(%k : memref<?x4x?x32xf16>)
                 v(%v : memref<?x4x?x32xf16>) -> o(%o : memref<?x4x1x32xf16>)
                 schedule = <block_q = 16>
  return
}

// -----

// expected-error @+1 {{kernel function 'two_ops' holds 2 attn.attention, 0 attn.cache_append and 0 attn.merge_states; a kernel function holds at most one of each}}
func.func @two_ops(%q: memref<?x4x?x32xf16>, %k: memref<?x4x?x32xf16>,
                   %v: memref<?x4x?x32xf16>, %o: memref<?x4x?x32xf16>) {
  attn.attention q(%q : memref<?x4x?x32xf16>) k(%k : memref<?x4x?x32xf16>)
                 v(%v : memref<?x4x?x32xf16>) -> o(%o : memref<?x4x?x32xf16>)
  attn.attention q(%q : memref<?x4x?x32xf16>) k(%k : memref<?x4x?x32xf16>)
                 v(%v : memref<?x4x?x32xf16>) -> o(%o : memref<?x4x?x32xf16>)
  return
}

// -----

// expected-error @+1 {{--attn-to-msl found no attn.attention, attn.cache_append or attn.merge_states: it takes an L0 spec (func.func holding one of them)}}
module {
  func.func @empty() {
    return
  }
}

// -----

func.func @local_output(%q: memref<2x4x8x32xf16>, %k: memref<2x4x8x32xf16>,
                        %v: memref<2x4x8x32xf16>) {
  %o = memref.alloc() : memref<2x4x8x32xf16>
  // expected-error @+1 {{the msl tier binds each operand to a kernel buffer; operand 'o' must be an argument of the function}}
  attn.attention q(%q : memref<2x4x8x32xf16>) k(%k : memref<2x4x8x32xf16>)
                 v(%v : memref<2x4x8x32xf16>) -> o(%o : memref<2x4x8x32xf16>)
  return
}

// -----

func.func @packed_dynamic_strides(%q: memref<?x8x64xf16, strided<[?, 64, 1]>>,
                                  %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>,
                                  %cq: memref<?xi32>, %ck: memref<?xi32>,
                                  %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{the msl tier takes a packed (varlen) operand with static strides only; operand 'q' has layout strided<[?, 64, 1]>}}
  attn.attention q(%q : memref<?x8x64xf16, strided<[?, 64, 1]>>) k(%k : memref<?x2x64xf16>)
                 v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<?xi32>)
                 cu_seqlens_k(%ck : memref<?xi32>) -> o(%o : memref<?x8x64xf16>)
  return
}

// -----

func.func @merge_offset(%op: memref<2x?x4x64xf16>, %lp: memref<2x?x4xf32>,
                        %o: memref<?x4x64xf16, strided<[256, 64, 1], offset: 8>>) {
  // expected-error @+1 {{the msl tier's merge takes buffers in the default memory space that start at their first element (offset 0); operand 'o' is 'memref<?x4x64xf16, strided<[256, 64, 1], offset: 8>>'}}
  attn.merge_states o_parts(%op : memref<2x?x4x64xf16>) lse_parts(%lp : memref<2x?x4xf32>)
                 -> o(%o : memref<?x4x64xf16, strided<[256, 64, 1], offset: 8>>)
  return
}

// -----

// Quantized K/V caches run on the CPU pipeline only, so far.
func.func @fp8_kv(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf8E4M3FN>,
                  %v: memref<?x4x?x64xf8E4M3FN>, %o: memref<?x4x?x64xf16>) {
  // expected-error @+1 {{the msl tier does not lower a quantized K/V cache ('f8E4M3FN') yet; the CPU pipeline (attn-to-cpu) runs it}}
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf8E4M3FN>)
                 v(%v : memref<?x4x?x64xf8E4M3FN>) -> o(%o : memref<?x4x?x64xf16>)
  return
}

// -----

// V read from K's leading columns (MLA) runs on the CPU and NVIDIA only, so
// far.
func.func @mla(%q: memref<?x16x1x128xf16>, %ckv: memref<?x1x?x128xf16>,
               %o: memref<?x16x1x64xf16>) {
  // expected-error @+1 {{the msl tier does not read V from K's leading columns (v_from_k, MLA's latent cache) yet; the CPU pipeline (attn-to-cpu) and the NVIDIA tiers run it}}
  attn.attention q(%q : memref<?x16x1x128xf16>) k(%ckv : memref<?x1x?x128xf16>) v_from_k
              -> o(%o : memref<?x16x1x64xf16>)
  return
}

// -----

func.func @append_i8(%kn: memref<?x2x1x64xf16>, %vn: memref<?x2x1x64xf16>,
                     %lens: memref<?xi32>, %kc: memref<?x2x?x64xi8>,
                     %vc: memref<?x2x?x64xi8>) {
  // expected-error @+1 {{the msl tier does not lower a quantizing cache append ('i8' cache) yet; the CPU pipeline (attn-to-cpu) runs it}}
  attn.cache_append k_new(%kn : memref<?x2x1x64xf16>) v_new(%vn : memref<?x2x1x64xf16>)
                    kv_lens(%lens : memref<?xi32>)
                 -> k_cache(%kc : memref<?x2x?x64xi8>) v_cache(%vc : memref<?x2x?x64xi8>)
  return
}
