// attn-check-kernels: a kernel function's name is a C identifier, it
// returns nothing, and it holds at most one attn.attention and one
// attn.cache_append. Names with spaces or non-ASCII letters aborted the
// NVPTX backend ("Symbol name with unsupported characters") and printed
// invalid MSL; a function returning a value crashed attn-run's JIT call;
// two attention ops were checked against a model of the first only.
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-check-kernels
// The NVIDIA and CPU pipelines run it first; the MSL translation calls it.
// RUN: not attn-opt %s -split-input-file --attn-to-ptx=chip=sm_90a 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not attn-opt %s -split-input-file --attn-to-cpu 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not attn-translate --attn-to-msl %s -split-input-file 2>&1 | FileCheck %s --check-prefix=PTX
// PTX: kernel function name 'my kernel-1.x' must be a C identifier
// PTX: kernel function name 'k{{.*}}rnel_{{.*}}' must be a C identifier
// PTX: kernel function 'returns' must return nothing (it returns 1 values)
// PTX: kernel function 'two' holds 2 attn.attention, 0 attn.cache_append and 0 attn.merge_states

// expected-error @+1 {{kernel function name 'my kernel-1.x' must be a C identifier ([A-Za-z_][A-Za-z0-9_]*): the kernels and their C functions are named after it}}
func.func @"my kernel-1.x"(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                           %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
  return
}

// -----

// expected-error @+1 {{must be a C identifier}}
func.func @"kérnel_λ"(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                       %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
  return
}

// -----

// expected-error @+1 {{kernel function 'returns' must return nothing (it returns 1 values); the kernels write their outputs}}
func.func @returns(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                   %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>) -> i32 {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
  %c = arith.constant 0 : i32
  return %c : i32
}

// -----

// expected-error @+1 {{kernel function 'two' holds 2 attn.attention, 0 attn.cache_append and 0 attn.merge_states; a kernel function holds at most one of each}}
func.func @two(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
               %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>,
               %o2: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o2 : memref<?x8x?x64xf16>)
  return
}

// -----

// A function without attn ops is not a kernel: any name, any result.
func.func @"helper fn"(%x: i32) -> i32 {
  return %x : i32
}

// -----

// One of each is a kernel: an append and the attention that reads it.
func.func @step(%kn: memref<?x2x1x64xf16>, %vn: memref<?x2x1x64xf16>,
                %lens: memref<?xi32>, %lens2: memref<?xi32>,
                %kc: memref<?x2x?x64xf16>, %vc: memref<?x2x?x64xf16>,
                %q: memref<?x8x1x64xf16>, %o: memref<?x8x1x64xf16>) {
  attn.cache_append k_new(%kn : memref<?x2x1x64xf16>) v_new(%vn : memref<?x2x1x64xf16>)
                    kv_lens(%lens : memref<?xi32>)
                 -> k_cache(%kc : memref<?x2x?x64xf16>) v_cache(%vc : memref<?x2x?x64xf16>)
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%kc : memref<?x2x?x64xf16>)
                 v(%vc : memref<?x2x?x64xf16>) kv_lens(%lens2 : memref<?xi32>)
              -> o(%o : memref<?x8x1x64xf16>)
  return
}
