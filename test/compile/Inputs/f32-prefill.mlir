func.func @f32_prefill(%q: memref<?x4x?x64xf32>, %k: memref<?x4x?x64xf32>,
                        %v: memref<?x4x?x64xf32>, %o: memref<?x4x?x64xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf32>) k(%k : memref<?x4x?x64xf32>)
                 v(%v : memref<?x4x?x64xf32>) -> o(%o : memref<?x4x?x64xf32>)
  return
}
