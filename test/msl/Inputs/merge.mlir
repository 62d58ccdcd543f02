// attn.merge_states specs for the msl tier's merge kernel (merge.test).

// f16 parts and O, N and T dynamic, with the LSE.
func.func @dyn_f16(%op: memref<?x?x4x64xf16>, %lp: memref<?x?x4xf32>,
                   %o: memref<?x4x64xf16>, %l: memref<?x4xf32>) {
  attn.merge_states o_parts(%op : memref<?x?x4x64xf16>) lse_parts(%lp : memref<?x?x4xf32>)
                 -> o(%o : memref<?x4x64xf16>) lse(%l : memref<?x4xf32>)
  return
}

// f32 partials into bf16, N static, no LSE; Dv 160: five pieces of four
// for 32 threads a row, so a thread's second piece.
func.func @two_f32_bf16(%op: memref<2x?x2x160xf32>, %lp: memref<2x?x2xf32>,
                        %o: memref<?x2x160xbf16>) {
  attn.merge_states o_parts(%op : memref<2x?x2x160xf32>) lse_parts(%lp : memref<2x?x2xf32>)
                 -> o(%o : memref<?x2x160xbf16>)
  return
}

// A head dim of 6: scalar pieces.
func.func @d6_f32(%op: memref<?x5x3x6xf32>, %lp: memref<?x5x3xf32>,
                  %o: memref<5x3x6xf32>, %l: memref<5x3xf32>) {
  attn.merge_states o_parts(%op : memref<?x5x3x6xf32>) lse_parts(%lp : memref<?x5x3xf32>)
                 -> o(%o : memref<5x3x6xf32>) lse(%l : memref<5x3xf32>)
  return
}

// Strided: FlashInfer's [T, N, H, Dv] parts (the T stride dynamic),
// vLLM's [N, H, T] LSEs and an [H, T] LSE out (H-major, dynamic).
func.func @strided_f16(%op: memref<?x?x4x64xf16, strided<[256, ?, 64, 1]>>,
                       %lp: memref<?x?x4xf32, strided<[?, 1, ?]>>,
                       %o: memref<?x4x64xf16>,
                       %l: memref<?x4xf32, strided<[1, ?]>>) {
  attn.merge_states o_parts(%op : memref<?x?x4x64xf16, strided<[256, ?, 64, 1]>>)
                 lse_parts(%lp : memref<?x?x4xf32, strided<[?, 1, ?]>>)
                 -> o(%o : memref<?x4x64xf16>) lse(%l : memref<?x4xf32, strided<[1, ?]>>)
  return
}

// Static strides only: token-major parts, O rows padded to 384.
func.func @static_strides_f32(%op: memref<2x?x2x160xf32, strided<[320, 640, 160, 1]>>,
                              %lp: memref<2x?x2xf32>,
                              %o: memref<?x2x160xbf16, strided<[384, 160, 1]>>) {
  attn.merge_states o_parts(%op : memref<2x?x2x160xf32, strided<[320, 640, 160, 1]>>)
                 lse_parts(%lp : memref<2x?x2xf32>)
                 -> o(%o : memref<?x2x160xbf16, strided<[384, 160, 1]>>)
  return
}
