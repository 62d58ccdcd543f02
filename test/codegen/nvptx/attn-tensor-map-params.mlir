// attn-tensor-map-params passes the leading parameters a kernel marks as
// TMA tensor maps by value: byval 128 bytes, aligned to 64, and
// nvvm.grid_constant (PTX: `.param .align 64 .b8 name[128]`). The marker
// goes; other parameters and unmarked kernels are left alone.
// RUN: attn-opt %s --pass-pipeline="builtin.module(gpu.module(attn-tensor-map-params))" -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: llvm.func @two_maps(
// CHECK-SAME: %arg0: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %arg1: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %arg2: !llvm.ptr, %arg3: i64)
// CHECK-NOT: attn.tensor_map_params
// CHECK-SAME: nvvm.kernel
// CHECK-LABEL: llvm.func @no_maps(
// CHECK-SAME: %arg0: !llvm.ptr)
gpu.module @kernels {
  llvm.func @two_maps(%k: !llvm.ptr, %v: !llvm.ptr, %q: !llvm.ptr, %n: i64)
      attributes {attn.tensor_map_params = 2 : i64, gpu.kernel, nvvm.kernel} {
    llvm.return
  }
  llvm.func @no_maps(%q: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
    llvm.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @+1 {{'attn.tensor_map_params' on a function that is not a kernel}}
  llvm.func @not_kernel(%k: !llvm.ptr) attributes {attn.tensor_map_params = 1 : i64} {
    llvm.return
  }
}
