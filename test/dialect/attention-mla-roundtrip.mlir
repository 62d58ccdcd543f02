// attn.attention with V as the first Dv columns of K (`v_from_k`: MLA's
// latent cache) parses, prints and parses again to the same IR, in the
// custom and the generic syntax; so does the L1 load_kv of a V tile
// narrower than its source rows.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// DeepSeek-V3's absorbed decode over a paged latent cache.
// CHECK-LABEL: func.func @paged_mla
// CHECK: attn.attention q(%{{.*}} : memref<?x16x?x576xbf16>) k(%{{.*}} : memref<?x1x64x576xbf16>) v_from_k block_table(%{{.*}} : memref<?x?xi32>) kv_lens(%{{.*}} : memref<?xi32>) -> o(%{{.*}} : memref<?x16x?x512xbf16>) lse(%{{.*}} : memref<?x16x?xf32>) scale = 1.352000e-01 mask = <causal, bottom_right>{{$}}
func.func @paged_mla(%q: memref<?x16x?x576xbf16>, %ckv: memref<?x1x64x576xbf16>,
                     %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                     %o: memref<?x16x?x512xbf16>, %lse: memref<?x16x?xf32>) {
  attn.attention q(%q : memref<?x16x?x576xbf16>)
                 k(%ckv : memref<?x1x64x576xbf16>) v_from_k
                 block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x16x?x512xbf16>) lse(%lse : memref<?x16x?xf32>)
                 scale = 0.1352 mask = <causal, bottom_right>
  return
}

// An fp8 latent cache: k_scale dequantizes V too.
// CHECK-LABEL: func.func @fp8_mla
// CHECK: k(%{{.*}} : memref<?x1x64x576xf8E4M3FN>) v_from_k block_table({{.*}} k_scale(%{{.*}} : memref<?x1x64xf32>) -> o(
func.func @fp8_mla(%q: memref<?x16x1x576xbf16>, %ckv: memref<?x1x64x576xf8E4M3FN>,
                   %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                   %ks: memref<?x1x64xf32>, %o: memref<?x16x1x512xbf16>) {
  attn.attention q(%q : memref<?x16x1x576xbf16>)
                 k(%ckv : memref<?x1x64x576xf8E4M3FN>) v_from_k
                 block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                 k_scale(%ks : memref<?x1x64xf32>)
              -> o(%o : memref<?x16x1x512xbf16>) scale = 0.1352
  return
}

// The L1 V tile: each latent row's first 512 columns.
// CHECK-LABEL: func.func @v_tile
// CHECK: attn.load_kv %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] length %{{.*}} block_table %{{.*}} : memref<?x1x64x576xbf16>, memref<?x?xi32> -> tensor<64x512xbf16>
func.func @v_tile(%ckv: memref<?x1x64x576xbf16>, %bt: memref<?x?xi32>, %i: index) -> tensor<64x512xbf16> {
  %t = attn.load_kv %ckv[%i, %i, %i] length %i block_table %bt : memref<?x1x64x576xbf16>, memref<?x?xi32> -> tensor<64x512xbf16>
  return %t : tensor<64x512xbf16>
}
