// attn-tile under `v_from_k` (MLA's latent cache): the V tile is a second
// attn.load_kv of K's buffer whose tile is Dv (512) columns of K's 576,
// and a quantized K's k_scale dequantizes it too; no V operand exists.
// RUN: attn-opt %s --attn-tile="block-q=16 block-kv=32" | FileCheck %s

// CHECK-LABEL: func.func @paged_mla
// CHECK-SAME: (%[[Q:.*]]: memref<?x16x1x576xbf16>, %[[C:.*]]: memref<?x1x64x576xbf16>, %[[BT:.*]]: memref<?x?xi32>
// CHECK: scf.for
// CHECK: %[[KT:.*]] = attn.load_kv %[[C]][{{.*}}] length {{.*}} block_table %[[BT]] : memref<?x1x64x576xbf16>, memref<?x?xi32> -> tensor<32x576xbf16>
// CHECK: %[[VT:.*]] = attn.load_kv %[[C]][{{.*}}] length {{.*}} block_table %[[BT]] : memref<?x1x64x576xbf16>, memref<?x?xi32> -> tensor<32x512xbf16>
// CHECK: attn.qk {{.*}}%[[KT]]
// CHECK: attn.pv {{.*}}%[[VT]]
func.func @paged_mla(%q: memref<?x16x1x576xbf16>, %ckv: memref<?x1x64x576xbf16>,
                     %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                     %o: memref<?x16x1x512xbf16>) {
  attn.attention q(%q : memref<?x16x1x576xbf16>)
                 k(%ckv : memref<?x1x64x576xbf16>) v_from_k
                 block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x16x1x512xbf16>) scale = 0.1352
  return
}

// CHECK-LABEL: func.func @fp8_mla
// CHECK-SAME: %[[KS:[^:]*]]: memref<?x1x64xf32>
// CHECK: attn.load_kv {{.*}} scale(%[[KS]] : memref<?x1x64xf32>) : memref<?x1x64x576xf8E4M3FN>, memref<?x?xi32> -> tensor<32x576xf32>
// CHECK: attn.load_kv {{.*}} scale(%[[KS]] : memref<?x1x64xf32>) : memref<?x1x64x576xf8E4M3FN>, memref<?x?xi32> -> tensor<32x512xf32>
func.func @fp8_mla(%q: memref<?x16x1x576xf32>, %ckv: memref<?x1x64x576xf8E4M3FN>,
                   %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                   %ks: memref<?x1x64xf32>, %o: memref<?x16x1x512xf32>) {
  attn.attention q(%q : memref<?x16x1x576xf32>)
                 k(%ckv : memref<?x1x64x576xf8E4M3FN>) v_from_k
                 block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                 k_scale(%ks : memref<?x1x64xf32>)
              -> o(%o : memref<?x16x1x512xf32>) scale = 0.1352
  return
}
