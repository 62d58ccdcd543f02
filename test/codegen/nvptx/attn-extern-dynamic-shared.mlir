// attn-extern-dynamic-shared makes the zero-length shared global that
// convert-gpu-to-nvvm gives gpu.dynamic_shared_memory external, so NVPTX
// prints `.extern .shared .b8 name[]`; every other global is left as it is.
// RUN: attn-opt %s --pass-pipeline="builtin.module(gpu.module(attn-extern-dynamic-shared))" | FileCheck %s

// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// A sized shared array and a zero-length global array in another address
// space keep their linkage.
// CHECK: llvm.mlir.global internal @static_tile() {addr_space = 3 : i32} : !llvm.array<64 x f32>
// CHECK: llvm.mlir.global internal @not_shared() {addr_space = 1 : i32} : !llvm.array<0 x i8>
gpu.module @kernels {
  llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global internal @static_tile() {addr_space = 3 : i32} : !llvm.array<64 x f32>
  llvm.mlir.global internal @not_shared() {addr_space = 1 : i32} : !llvm.array<0 x i8>
}
