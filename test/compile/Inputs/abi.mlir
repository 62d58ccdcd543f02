// Kernels for abi_check.c: a prefill with LSE, a paged decode (workspace)
// and a prefill reading [B, S, H, D] memory through a strided layout.
func.func @prefill(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>,
                   %v: memref<?x2x?x64xf16>, %o: memref<?x4x?x64xf16>,
                   %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
                 lse(%lse : memref<?x4x?xf32>) mask = <causal>
  return
}

func.func @decode(%q: memref<?x8x1x64xf16>, %k: memref<?x2x16x64xf16>,
                  %v: memref<?x2x16x64xf16>, %table: memref<?x?xi32>,
                  %lens: memref<?xi32>, %o: memref<?x8x1x64xf16>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x16x64xf16>)
                 v(%v : memref<?x2x16x64xf16>)
                 block_table(%table : memref<?x?xi32>)
                 kv_lens(%lens : memref<?xi32>) -> o(%o : memref<?x8x1x64xf16>)
  return
}

// The paged decode again with attention sinks: the C functions take
// `sinks` before o, and the combine reads it.
func.func @sinks_decode(%q: memref<?x8x1x64xf16>, %k: memref<?x2x16x64xf16>,
                        %v: memref<?x2x16x64xf16>, %table: memref<?x?xi32>,
                        %lens: memref<?xi32>, %sinks: memref<8xf32>,
                        %o: memref<?x8x1x64xf16>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x16x64xf16>)
                 v(%v : memref<?x2x16x64xf16>)
                 block_table(%table : memref<?x?xi32>)
                 kv_lens(%lens : memref<?xi32>) sinks(%sinks : memref<8xf32>)
              -> o(%o : memref<?x8x1x64xf16>)
  return
}

func.func @strided(%o: memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>,
                   %q: memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>,
                   %k: memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>,
                   %v: memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>) {
  attn.attention q(%q : memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>)
                 k(%k : memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>)
                 v(%v : memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>)
              -> o(%o : memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>)
  return
}

// ALiBi slopes and per-token document ids as captures: the C functions
// take them as capture0 / capture1 with their strides, and the dynamic
// dims of capture0 as sizes of their own.
func.func @documents(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>,
                     %v: memref<?x2x?x64xf16>, %ids: memref<?x?xi32>,
                     %slopes: memref<4xf32>, %o: memref<?x4x?x64xf16>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>)
                 captures(%ids, %slopes : memref<?x?xi32>, memref<4xf32>)
              -> o(%o : memref<?x4x?x64xf16>) mask = <causal>
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %doc: memref<?x?xi32>, %sl: memref<4xf32>):
    %slope = memref.load %sl[%h] : memref<4xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %bias = arith.mulf %slope, %df : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index,
       %doc: memref<?x?xi32>, %sl: memref<4xf32>):
    %qd = memref.load %doc[%b, %i] : memref<?x?xi32>
    %kd = memref.load %doc[%b, %j] : memref<?x?xi32>
    %same = arith.cmpi eq, %qd, %kd : i32
    attn.yield %same : i1
  }
  return
}
