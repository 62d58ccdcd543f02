// The mma tier under a mask: at D64 a warp skips the K/V tiles its rows
// cannot see (past the causal diagonal) - the step sits in an scf.if whose
// other branch yields the loop's state unchanged. At D128 with two m-tiles
// per warp (they fill the registers) and without a mask the step runs
// unconditionally; at D128 with one m-tile per warp (a 64-row schedule)
// warps skip again.
// RUN: attn-opt %s --attn-tile="block-q=128 block-kv=64" --attn-to-mma="chip=sm_80" | FileCheck %s

// CHECK-LABEL: gpu.func @causal_d64_mma
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[S0:arg[0-9]+]] = %{{[^,]*}}, %[[S1:arg[0-9]+]] =
// CHECK: %[[STEP:[0-9]+]]:16 = scf.if %{{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, vector<8xf32>
// CHECK: scf.yield %[[S0]], %[[S1]], %{{.*}} : f32, f32,
// CHECK: scf.yield %[[STEP]]#0, %[[STEP]]#1,
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @causal_d128_mma
// CHECK: scf.for
// CHECK-NOT: = scf.if %{{.*}} -> (f32
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @causal_d128_64rows_mma
// CHECK: scf.for
// CHECK: = scf.if %{{.*}} -> (f32, f32, f32, f32, vector<8xf32>
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @no_mask_d64_mma
// CHECK: scf.for
// CHECK-NOT: = scf.if %{{.*}} -> (f32
// CHECK: gpu.return

func.func @causal_d64(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
                      %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
                 mask = <causal>
  return
}

func.func @causal_d128(%q: memref<?x4x?x128xf16>, %k: memref<?x4x?x128xf16>,
                       %v: memref<?x4x?x128xf16>, %o: memref<?x4x?x128xf16>) {
  attn.attention q(%q : memref<?x4x?x128xf16>) k(%k : memref<?x4x?x128xf16>)
                 v(%v : memref<?x4x?x128xf16>) -> o(%o : memref<?x4x?x128xf16>)
                 mask = <causal>
  return
}

func.func @causal_d128_64rows(%q: memref<?x4x?x128xf16>, %k: memref<?x4x?x128xf16>,
                              %v: memref<?x4x?x128xf16>, %o: memref<?x4x?x128xf16>) {
  attn.attention q(%q : memref<?x4x?x128xf16>) k(%k : memref<?x4x?x128xf16>)
                 v(%v : memref<?x4x?x128xf16>) -> o(%o : memref<?x4x?x128xf16>)
                 mask = <causal> schedule = <block_q = 64, block_kv = 64>
  return
}

func.func @no_mask_d64(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
                       %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
  return
}
