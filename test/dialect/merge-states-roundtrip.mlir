// attn.merge_states in its custom form: static and dynamic parts, with and
// without the LSE, f32 partials into f16, and FlashInfer's [T, N, H, Dv]
// parts as a strided view.
// RUN: attn-opt %s | FileCheck %s
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s -mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @two_parts
// CHECK: attn.merge_states o_parts(%{{.*}} : memref<2x?x32x128xf32>) lse_parts(%{{.*}} : memref<2x?x32xf32>) -> o(%{{.*}} : memref<?x32x128xf16>) lse(%{{.*}} : memref<?x32xf32>)
func.func @two_parts(%op: memref<2x?x32x128xf32>, %lp: memref<2x?x32xf32>,
                     %o: memref<?x32x128xf16>, %l: memref<?x32xf32>) {
  attn.merge_states o_parts(%op : memref<2x?x32x128xf32>) lse_parts(%lp : memref<2x?x32xf32>)
                 -> o(%o : memref<?x32x128xf16>) lse(%l : memref<?x32xf32>)
  return
}

// CHECK-LABEL: func.func @no_lse
// CHECK: attn.merge_states o_parts(%{{.*}} : memref<?x?x8x64xbf16>) lse_parts(%{{.*}} : memref<?x?x8xf32>) -> o(%{{.*}} : memref<?x8x64xbf16>)
// CHECK-NOT: lse(
func.func @no_lse(%op: memref<?x?x8x64xbf16>, %lp: memref<?x?x8xf32>,
                  %o: memref<?x8x64xbf16>) {
  attn.merge_states o_parts(%op : memref<?x?x8x64xbf16>) lse_parts(%lp : memref<?x?x8xf32>)
                 -> o(%o : memref<?x8x64xbf16>)
  return
}

// CHECK-LABEL: func.func @flashinfer_layout
// CHECK: attn.merge_states o_parts(%{{.*}} : memref<?x?x4x128xf16, strided<[512, ?, 128, 1]>>) lse_parts(%{{.*}} : memref<?x?x4xf32, strided<[4, ?, 1]>>)
func.func @flashinfer_layout(%op: memref<?x?x4x128xf16, strided<[512, ?, 128, 1]>>,
                             %lp: memref<?x?x4xf32, strided<[4, ?, 1]>>,
                             %o: memref<?x4x128xf16>) {
  attn.merge_states o_parts(%op : memref<?x?x4x128xf16, strided<[512, ?, 128, 1]>>)
                    lse_parts(%lp : memref<?x?x4xf32, strided<[4, ?, 1]>>)
                 -> o(%o : memref<?x4x128xf16>)
  return
}
