// Causal prefill of a GQA-4 layer (8 query heads, 2 K/V heads of 128)
// over TensorRT-LLM-style int8 K/V: each element an i8 integer times its
// K/V head's f32 scale ([2]). Runs on the CPU pipeline; the NVIDIA
// prefill tiers do not dequantize yet and refuse it by name (so does
// attn-compile), as does Metal.
func.func @int8_prefill(%q: memref<?x8x?x128xf16>, %k: memref<?x2x?x128xi8>,
                        %v: memref<?x2x?x128xi8>, %k_scale: memref<2xf32>,
                        %v_scale: memref<2xf32>, %o: memref<?x8x?x128xf16>,
                        %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x128xf16>) k(%k : memref<?x2x?x128xi8>)
                 v(%v : memref<?x2x?x128xi8>)
                 k_scale(%k_scale : memref<2xf32>) v_scale(%v_scale : memref<2xf32>)
              -> o(%o : memref<?x8x?x128xf16>) lse(%lse : memref<?x8x?xf32>)
                 mask = <causal, bottom_right>
  return
}
