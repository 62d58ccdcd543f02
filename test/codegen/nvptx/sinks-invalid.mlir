// Attention sinks are built for the CPU and Metal lowerings only so far:
// every NVIDIA tier refuses a spec with `sinks`, naming the tier, whether it starts at
// the spec (attn-select-tier, first in attn-to-ptx) or at attn-tile's nest.
// RUN: attn-opt %s --attn-to-ptx="chip=sm_80" -split-input-file -verify-diagnostics
// RUN: not attn-opt %s --attn-to-ptx="chip=sm_90a" -split-input-file 2>&1 | FileCheck %s --check-prefix=SM90A
// RUN: not attn-opt %s --attn-tile --attn-to-mma="chip=sm_80" -split-input-file 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: not attn-opt %s --attn-tile --attn-to-wmma="chip=sm_80" -split-input-file 2>&1 | FileCheck %s --check-prefix=WMMA

// SM90A: error: 'attn.attention' op attention sinks are built for the CPU and Metal lowerings only so far; the wgmma tier does not take `sinks`
// SM90A: error: 'attn.attention' op attention sinks are built for the CPU and Metal lowerings only so far; the decode tier does not take `sinks`
// SM90A: error: 'attn.attention' op attention sinks are built for the CPU and Metal lowerings only so far; the wmma tier does not take `sinks`
// MMA: error: attn-to-mma: attention sinks are built for the CPU and Metal lowerings only so far; the NVIDIA tiers do not take `sinks`
// WMMA: error: attn-to-wmma: attention sinks are built for the CPU and Metal lowerings only so far; the NVIDIA tiers do not take `sinks`

func.func @prefill(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                   %v: memref<?x2x?x64xf16>, %s: memref<8xf32>,
                   %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{attention sinks are built for the CPU and Metal lowerings only so far; the mma tier does not take `sinks`}}
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) sinks(%s : memref<8xf32>)
              -> o(%o : memref<?x8x?x64xf16>) mask = <causal>
  return
}

// -----

func.func @decode(%q: memref<?x8x1x64xf16>, %k: memref<?x2x?x64xf16>,
                  %v: memref<?x2x?x64xf16>, %s: memref<8xf32>,
                  %o: memref<?x8x1x64xf16>) {
  // expected-error @+1 {{attention sinks are built for the CPU and Metal lowerings only so far; the decode tier does not take `sinks`}}
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) sinks(%s : memref<8xf32>)
              -> o(%o : memref<?x8x1x64xf16>)
  return
}

// -----

func.func @wmma(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                %v: memref<?x2x?x64xf16>, %s: memref<8xbf16>,
                %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{attention sinks are built for the CPU and Metal lowerings only so far; the wmma tier does not take `sinks`}}
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) sinks(%s : memref<8xbf16>)
              -> o(%o : memref<?x8x?x64xf16>) {attn.tier = #attn.tier<wmma>}
  return
}
