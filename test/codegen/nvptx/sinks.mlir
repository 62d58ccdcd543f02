// Attention sinks on the NVIDIA tiers: the launches that normalize O (the
// prefill tiles, the split-K combine, the one-split decode kernel) take
// `sinks` just before O; the split kernel, which writes partial states,
// does not. Each loads its row's head's sink (widened to f32 where it is
// f16 or bf16) and folds it into the row's max and sum once, before O and
// the LSE are written.
// RUN: attn-opt %s --attn-select-tier --attn-tile --attn-to-mma=chip=sm_80 | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s "--attn-select-tier=prefill=wmma" --attn-tile --attn-to-wmma=chip=sm_80 | FileCheck %s --check-prefix=WMMA
// RUN: attn-opt %s --attn-select-tier --attn-tile --attn-to-decode=chip=sm_80 | FileCheck %s --check-prefix=DECODE
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90a" | attn-translate --attn-ptx -o %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx

// MMA: params = [q, k, v, sinks, o, lse]
// MMA-LABEL: gpu.func @prefill_mma(
// MMA-SAME: %[[SINKS:[^:]*]]: memref<8xf32>
// The epilogue: the sink in log2 units, the new max, the accumulator's
// factor 2^(m - m') and the sink's weight 2^(t - m') on ex2.
// MMA: %[[S:.*]] = memref.load %[[SINKS]][%{{.*}}] : memref<8xf32>
// MMA: %[[T:.*]] = arith.mulf %[[S]], %{{.*}} : f32
// MMA: arith.maxnumf %{{.*}}, %[[T]] : f32
// MMA: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// MMA: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"

// WMMA: params = [q, k, v, sinks, o, lse]
// WMMA-LABEL: gpu.func @prefill_wmma(
// WMMA-SAME: %[[SINKS:[^:]*]]: memref<8xf32>
// WMMA: memref.load %[[SINKS]][%{{.*}}] : memref<8xf32>

// The split kernel has no sinks; the combine and the one-split kernel do.
// DECODE: params = [q, k, v, workspace]
// DECODE: params = [workspace, sinks, o]
// DECODE-LABEL: gpu.func @decode_decode_split(
// DECODE-NOT: memref<8xbf16>
// DECODE-LABEL: gpu.func @decode_decode_combine(
// DECODE-SAME: %[[SINKS:[^:]*]]: memref<8xbf16>
// DECODE: %[[S:.*]] = memref.load %[[SINKS]][%{{.*}}] : memref<8xbf16>
// DECODE: arith.extf %[[S]] : bf16 to f32

// PTX: attn.kernel prefill_wgmma {{.*}}params=[tensor_map(q),tensor_map(k),tensor_map(v),tensor_map(o),q,k,v,sinks,o,lse]
// PTX: attn.kernel decode_decode_split {{.*}}params=[q,k,v,workspace]
// PTX: attn.kernel decode_decode_combine {{.*}}params=[workspace,sinks,o]
// PTX: attn.kernel decode_decode_unsplit {{.*}}params=[q,k,v,sinks,o]
// PTX-LABEL: .entry prefill_wgmma(
// PTX: ex2.approx.ftz.f32

func.func @prefill(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                   %v: memref<?x2x?x64xf16>, %s: memref<8xf32>,
                   %o: memref<?x8x?x64xf16>, %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) sinks(%s : memref<8xf32>)
              -> o(%o : memref<?x8x?x64xf16>) lse(%lse : memref<?x8x?xf32>)
                 mask = <causal>
  return
}

func.func @decode(%q: memref<?x8x1x64xf16>, %k: memref<?x2x?x64xf16>,
                  %v: memref<?x2x?x64xf16>, %s: memref<8xbf16>,
                  %o: memref<?x8x1x64xf16>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) sinks(%s : memref<8xbf16>)
              -> o(%o : memref<?x8x1x64xf16>)
  return
}
