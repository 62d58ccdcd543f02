// What the wgmma tier cannot run is refused with a diagnostic that names
// the rule, where the spec names the tier (otherwise attn-select-tier
// sends such ops to the mma tier: attn-select-tier-wgmma.mlir).
// RUN: attn-opt %s --attn-select-tier="prefill=wgmma sm=90" --attn-tile --attn-to-wgmma="chip=sm_90a" -split-input-file -verify-diagnostics

func.func @head_dim_96(%q: memref<?x4x?x96xf16>, %k: memref<?x4x?x96xf16>,
                       %v: memref<?x4x?x96xf16>, %o: memref<?x4x?x96xf16>) {
  // expected-error @+1 {{the wgmma tier needs head dims that are multiples of 64 (its tiles are 64-column blocks); got D = 96, Dv = 96}}
  attn.attention q(%q : memref<?x4x?x96xf16>) k(%k : memref<?x4x?x96xf16>)
                 v(%v : memref<?x4x?x96xf16>) -> o(%o : memref<?x4x?x96xf16>)
                 {attn.tier = #attn.tier<wgmma>}
  return
}

// -----

func.func @split_keys(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
                      %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  // expected-error @+1 {{the wgmma tier runs one warpgroup (4 warps) per 64 query rows: block_q must be a multiple of 64 and schedule 'warps' block_q / 16; got block_q = 64, warps = 8}}
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
                 schedule = <block_q = 64, block_kv = 64, warps = 8>
                 {attn.tier = #attn.tier<wgmma>}
  return
}

// -----

func.func @rows_32(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
                   %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  // expected-error @+1 {{the wgmma tier runs one warpgroup (4 warps) per 64 query rows: block_q must be a multiple of 64 and schedule 'warps' block_q / 16; got block_q = 32, warps = 2}}
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
                 schedule = <block_q = 32, block_kv = 64>
                 {attn.tier = #attn.tier<wgmma>}
  return
}
