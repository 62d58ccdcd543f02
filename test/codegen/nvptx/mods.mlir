// score_mod / mask_mod regions (without captures) on the NVIDIA tiers: the
// register tiers carry the region on their m-tile's attn_nv.score_tile or
// attn_nv.mask_tile (attn-nv-to-nvvm inlines it per score), the others
// inline it per score, with (b, h, q_idx, kv_idx) of the score's flat row
// and key; a mask_mod sends every tile its block mask does not call full
// down the masked path (block-mask.mlir).
// RUN: attn-opt %s --attn-select-tier --attn-tile --attn-to-mma=chip=sm_80 | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s "--attn-select-tier=prefill=wmma" --attn-tile --attn-to-wmma=chip=sm_80 | FileCheck %s --check-prefix=WMMA
// RUN: attn-opt %s --attn-select-tier --attn-tile --attn-to-decode=chip=sm_80 | FileCheck %s --check-prefix=DECODE
// RUN: attn-opt %s "--attn-select-tier=sm=90" --attn-tile --attn-to-decode=chip=sm_90 | FileCheck %s --check-prefix=TCDECODE
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90" | attn-translate --attn-ptx -o %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx

// Prefix-LM with a fixed prefix of 16 keys: the region (its compare
// against 16 and its causal test) on the masked path's mask_tile, whose
// expansion ANDs it with the built-in mask's verdict; the tile-interior
// shortcut is the block mask's full bit.
// MMA-LABEL: gpu.func @prefix_lm_mma(
// MMA: %[[FULL:.*]] = arith.cmpi ne, %{{.*}}, %c0{{.*}} : index
// MMA: scf.if %[[FULL]]
// MMA: attn_nv.mask_tile {{.*}} at(%{{.*}}, %{{.*}}) {group = 1 : i64, mask = #attn.mask<none>} mask_mod {
// MMA: arith.cmpi slt, %{{.*}}, %c16{{.*}} : index
// MMA: arith.cmpi sle
// MMA: arith.ori
// MMA: attn.yield %{{.*}} : i1
// WMMA-LABEL: gpu.func @prefix_lm_wmma
// WMMA: arith.cmpi slt, %{{.*}}, %c16{{.*}} : index
// WMMA: arith.ori
// WMMA: arith.andi
// PTX-LABEL: .entry prefix_lm_mma
func.func @prefix_lm(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                     %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
              -> o(%o : memref<?x8x?x64xf16>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c16 = arith.constant 16 : index
    %prefix = arith.cmpi slt, %j, %c16 : index
    %causal = arith.cmpi sle, %j, %i : index
    %r = arith.ori %prefix, %causal : i1
    attn.yield %r : i1
  }
  return
}

// ALiBi with slopes computed from the head (no capture): the m-tile's
// score_tile carries the region and the scale; its expansion gives the
// region the natural score (scale * dot) and takes its result times
// log2(e) (attn-nv-to-nvvm.mlir, @score_tile).
// MMA-LABEL: gpu.func @alibi_mma
// MMA: attn_nv.score_tile {{.*}} at(%{{.*}}, %{{.*}}) {group = 1 : i64, m_offset = 0 : i64, scale = 1.250000e-01 : f64} score_mod {
// MMA: arith.index_cast
// MMA: arith.sitofp
// MMA: arith.subf
// MMA: attn.yield %{{.*}} : f32
// PTX-LABEL: .entry alibi_mma
func.func @alibi(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                 %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
              -> o(%o : memref<?x8x?x64xf16>)
                 mask = <causal>
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %one = arith.constant 1 : index
    %h1 = arith.addi %h, %one : index
    %hi = arith.index_cast %h1 : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %slope = arith.divf %s, %hf : f32
    %d = arith.subi %i, %j : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %c = arith.constant 0.125 : f32
    %bias = arith.mulf %df, %c : f32
    %scaled = arith.divf %bias, %hf : f32
    %r = arith.subf %s, %scaled : f32
    attn.yield %r : f32
  }
  return
}

// Decode (GQA-4, one query): both regions in the SIMT split kernel's key
// loop, per row of the Q tile.
// DECODE-LABEL: gpu.func @decode_mods_decode_split
// DECODE: scf.for
// DECODE: vector.reduction <add>
// DECODE: math.tanh
// DECODE: arith.cmpi sge
// DECODE: arith.andi
// On sm_90 (f16) the tensor-core split kernel: the regions
// per element of its mma.sync score tile.
// TCDECODE-LABEL: gpu.func @decode_mods_decode_split
// TCDECODE: attn_nv.mma_tile
// TCDECODE: math.tanh
// TCDECODE: arith.cmpi sge
// PTX-LABEL: .entry decode_mods_decode_split
func.func @decode_mods(%q: memref<?x8x1x64xf16>, %k: memref<?x2x?x64xf16>,
                       %v: memref<?x2x?x64xf16>, %o: memref<?x8x1x64xf16>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>)
              -> o(%o : memref<?x8x1x64xf16>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %cap = arith.constant 30.0 : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %cap : f32
    attn.yield %r : f32
  }
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c3 = arith.constant 3 : index
    %r = arith.cmpi sge, %j, %c3 : index
    attn.yield %r : i1
  }
  return
}
