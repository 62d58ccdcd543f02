// Each discardable attn attribute holds its own kind of value; anything
// else is an error that names the attribute and what it must be.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @string_tier(%n: index) {
  // expected-error @+1 {{'attn.tier' must be a #attn.tier<wmma|mma|wgmma|decode|copy>, got "wmma"}}
  scf.forall (%i) in (%n) {
  } {attn.tier = "wmma"}
  return
}

// -----

func.func @bad_schedule(%n: index) {
  // expected-error @+1 {{'attn.schedule' must be a #attn.schedule<...>, got 3 : i64}}
  scf.forall (%i) in (%n) {
  } {attn.schedule = 3}
  return
}

// -----

func.func @schedule_on_attention(%q: memref<1x4x8x64xf16>, %k: memref<1x4x8x64xf16>,
                                 %v: memref<1x4x8x64xf16>, %o: memref<1x4x8x64xf16>) {
  // expected-error @+1 {{'attn.schedule' is not read on attn.attention: write its schedule as the op's 'schedule = #attn.schedule<...>'}}
  attn.attention q(%q : memref<1x4x8x64xf16>) k(%k : memref<1x4x8x64xf16>)
                 v(%v : memref<1x4x8x64xf16>) -> o(%o : memref<1x4x8x64xf16>)
                 {attn.schedule = #attn.schedule<block_q = 64, block_kv = 64, warps = 4, stages = 2>}
  return
}

// -----

func.func @kv_loop_on_forall(%n: index) {
  // expected-error @+1 {{'attn.kv_loop' is a unit attribute of an scf.for}}
  scf.forall (%i) in (%n) {
  } {attn.kv_loop}
  return
}

// -----

func.func @unknown_tier(%n: index) {
  scf.forall (%i) in (%n) {
  // expected-error @+2 {{expected ::mlir::attn::Tier to be one of: wmma, mma, decode, copy, wgmma}}
  // expected-error @+1 {{failed to parse Attn_TierAttr parameter 'value'}}
  } {attn.tier = #attn.tier<tcgen05>}
  return
}

// -----

// expected-error @+1 {{'attn.tensor_map_params' is an i64 on a kernel function}}
func.func @tensor_maps_not_i64(%m: !llvm.ptr) attributes {attn.tensor_map_params = 1 : i32} {
  return
}

// -----

// expected-error @+1 {{'attn.tensor_map_params' = 2 must count some of the kernel's 1 parameters}}
func.func @too_many_tensor_maps(%m: !llvm.ptr) attributes {attn.tensor_map_params = 2} {
  return
}

// -----

// expected-error @+1 {{'attn.tensor_map_params': parameter #0 must be an !llvm.ptr (a tensor map), got 'memref<4xf16>'}}
func.func @tensor_map_not_pointer(%m: memref<4xf16>) attributes {attn.tensor_map_params = 1} {
  return
}
