// attn.cache_append in its custom form: contiguous and paged caches,
// ragged appends (new_lens), dynamic dims, strided new tokens, and the
// slot-mapping form.
// RUN: attn-opt %s | FileCheck %s
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s -mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @contiguous
// CHECK: attn.cache_append k_new(%{{.*}} : memref<2x8x1x128xf16>) v_new(%{{.*}} : memref<2x8x1x128xf16>) kv_lens(%{{.*}} : memref<2xi32>) -> k_cache(%{{.*}} : memref<2x8x4096x128xf16>) v_cache(%{{.*}} : memref<2x8x4096x128xf16>)
func.func @contiguous(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>,
                      %lens: memref<2xi32>, %kc: memref<2x8x4096x128xf16>,
                      %vc: memref<2x8x4096x128xf16>) {
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>)
                    kv_lens(%lens : memref<2xi32>)
                 -> k_cache(%kc : memref<2x8x4096x128xf16>) v_cache(%vc : memref<2x8x4096x128xf16>)
  return
}

// CHECK-LABEL: func.func @paged_ragged
// CHECK: attn.cache_append k_new(%{{.*}} : memref<?x8x?x128xbf16>) v_new(%{{.*}} : memref<?x8x?x64xbf16>) block_table(%{{.*}} : memref<?x?xi32>) kv_lens(%{{.*}} : memref<?xi32>) new_lens(%{{.*}} : memref<?xi32>) -> k_cache(%{{.*}} : memref<?x8x16x128xbf16>) v_cache(%{{.*}} : memref<?x8x16x64xbf16>)
func.func @paged_ragged(%kn: memref<?x8x?x128xbf16>, %vn: memref<?x8x?x64xbf16>,
                        %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                        %n: memref<?xi32>, %kc: memref<?x8x16x128xbf16>,
                        %vc: memref<?x8x16x64xbf16>) {
  attn.cache_append k_new(%kn : memref<?x8x?x128xbf16>) v_new(%vn : memref<?x8x?x64xbf16>)
                    block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                    new_lens(%n : memref<?xi32>)
                 -> k_cache(%kc : memref<?x8x16x128xbf16>) v_cache(%vc : memref<?x8x16x64xbf16>)
  return
}

// New tokens as a [B, S, H, D] buffer viewed as [B, H, S, D].
// CHECK-LABEL: func.func @strided_new
// CHECK: attn.cache_append k_new(%{{.*}} : memref<?x4x?x64xf32, strided<[?, 64, 256, 1]>>)
func.func @strided_new(%kn: memref<?x4x?x64xf32, strided<[?, 64, 256, 1]>>,
                       %vn: memref<?x4x?x64xf32, strided<[?, 64, 256, 1]>>,
                       %lens: memref<?xi32>, %kc: memref<?x4x?x64xf32>,
                       %vc: memref<?x4x?x64xf32>) {
  attn.cache_append k_new(%kn : memref<?x4x?x64xf32, strided<[?, 64, 256, 1]>>)
                    v_new(%vn : memref<?x4x?x64xf32, strided<[?, 64, 256, 1]>>)
                    kv_lens(%lens : memref<?xi32>)
                 -> k_cache(%kc : memref<?x4x?x64xf32>) v_cache(%vc : memref<?x4x?x64xf32>)
  return
}

// The slot-mapping form: packed tokens, one slot each.
// CHECK-LABEL: func.func @slots
// CHECK: attn.cache_append k_new(%{{.*}} : memref<?x8x128xf16>) v_new(%{{.*}} : memref<?x8x128xf16>) slot_mapping(%{{.*}} : memref<?xi32>) -> k_cache(%{{.*}} : memref<?x8x16x128xf16>) v_cache(%{{.*}} : memref<?x8x16x128xf16>)
func.func @slots(%kn: memref<?x8x128xf16>, %vn: memref<?x8x128xf16>,
                 %s: memref<?xi32>, %kc: memref<?x8x16x128xf16>,
                 %vc: memref<?x8x16x128xf16>) {
  attn.cache_append k_new(%kn : memref<?x8x128xf16>) v_new(%vn : memref<?x8x128xf16>)
                    slot_mapping(%s : memref<?xi32>)
                 -> k_cache(%kc : memref<?x8x16x128xf16>) v_cache(%vc : memref<?x8x16x128xf16>)
  return
}

// A quantizing append: per-token scales written beside a paged fp8 cache.
// CHECK-LABEL: func.func @quantizing
// CHECK: kv_lens(%{{.*}} : memref<?xi32>) k_scale(%{{.*}} : memref<?x8x16xf32>) v_scale(%{{.*}} : memref<f32>) -> k_cache(%{{.*}} : memref<?x8x16x128xf8E4M3FN>)
func.func @quantizing(%kn: memref<?x8x1x128xbf16>, %vn: memref<?x8x1x128xbf16>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %ks: memref<?x8x16xf32>, %vs: memref<f32>, %kc: memref<?x8x16x128xf8E4M3FN>, %vc: memref<?x8x16x128xf8E4M3FN>) {
  attn.cache_append k_new(%kn : memref<?x8x1x128xbf16>) v_new(%vn : memref<?x8x1x128xbf16>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>) k_scale(%ks : memref<?x8x16xf32>) v_scale(%vs : memref<f32>) -> k_cache(%kc : memref<?x8x16x128xf8E4M3FN>) v_cache(%vc : memref<?x8x16x128xf8E4M3FN>)
  return
}
