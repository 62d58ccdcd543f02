// MLA's latent cache (`v_from_k`, D 576 / Dv 512) through the NVIDIA tier
// choice and the decode tier: a static Sq of at most 16 takes the decode
// tier's tensor-core split kernel from sm_80 (the SIMT kernel's 32 lanes
// of 16 bytes take 256), whose warps past the rows split Dv (4 warps for
// 16 rows, 8 for 32) and read V from K's tile, over 32-key tiles with two
// stages; a remark says it is not yet an MLA kernel. Longer queries take
// the mma prefill tier (wgmma's tiles do not fit past D256); V read from
// K's tile leaves room for two stages on sm_80 too. The launches pass k in
// V's place.
// RUN: attn-opt %s "--attn-select-tier=sm=90" 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: attn-opt %s "--attn-select-tier=sm=80" 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s "--attn-select-tier=sm=90 prefill=wgmma" 2>&1 | FileCheck %s --check-prefix=WGMMA
// RUN: attn-opt %s "--attn-select-tier=sm=90" --attn-tile "--attn-to-decode=chip=sm_90" 2>/dev/null | FileCheck %s --check-prefix=LAUNCH

// SM90: remark: D 576 / Dv 512 decodes on the tensor-core split kernel with 2 K/V stage(s), 4 warps a row splitting Dv, V read from K's tile: not yet an MLA kernel (each of a row's warps computes the tile's scores, on mma.sync, not wgmma)
// SM90-LABEL: func.func @mla_decode
// SM90: v_from_k {{.*}} schedule = <block_q = 16, block_kv = 32, warps = 4, stages = 2> {attn.tier = #attn.tier<decode>}
// SM90-LABEL: func.func @mla_mtp
// SM90: schedule = <block_q = 32, block_kv = 32, warps = 8, stages = 2> {attn.tier = #attn.tier<decode>}
// SM90-LABEL: func.func @mla_chunk
// SM90: schedule = <block_q = 64, block_kv = 32, warps = 4, stages = 2> {attn.tier = #attn.tier<mma>}
// The remark comes first (diagnostics before the printed module): a V of
// its own as wide (@wide_chunk, no v_from_k) leaves room for one stage.
// SM80: remark: the mma tier's 2 K/V stages need 212992 bytes of shared memory at D 576 / Dv 512; sm_80 allows 166912: one stage (no copy ahead of the math)
// SM80-LABEL: func.func @mla_decode
// SM80: schedule = <block_q = 16, block_kv = 32, warps = 4, stages = 2> {attn.tier = #attn.tier<decode>}
// SM80-LABEL: func.func @mla_mtp
// SM80: schedule = <block_q = 32, block_kv = 32, warps = 8, stages = 2> {attn.tier = #attn.tier<decode>}
// SM80-LABEL: func.func @mla_chunk
// SM80: schedule = <block_q = 64, block_kv = 32, warps = 4, stages = 2> {attn.tier = #attn.tier<mma>}
// SM80-LABEL: func.func @wide_chunk
// SM80: schedule = <block_q = 64, block_kv = 32, warps = 4, stages = 1> {attn.tier = #attn.tier<mma>}
// WGMMA-LABEL: func.func @mla_chunk
// WGMMA: {attn.tier = #attn.tier<mma>}
// LAUNCH: params = [q, k, k, block_table, kv_lens, workspace]
// LAUNCH: params = [workspace, o]
// LAUNCH: params = [q, k, k, block_table, kv_lens, o]

func.func @mla_decode(%q: memref<?x16x1x576xbf16>, %ckv: memref<?x1x64x576xbf16>,
                      %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                      %o: memref<?x16x1x512xbf16>) {
  attn.attention q(%q : memref<?x16x1x576xbf16>)
                 k(%ckv : memref<?x1x64x576xbf16>) v_from_k
                 block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x16x1x512xbf16>) scale = 0.1352
  return
}

func.func @mla_mtp(%q: memref<?x16x2x576xbf16>, %ckv: memref<?x1x64x576xbf16>,
                   %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                   %o: memref<?x16x2x512xbf16>) {
  attn.attention q(%q : memref<?x16x2x576xbf16>)
                 k(%ckv : memref<?x1x64x576xbf16>) v_from_k
                 block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x16x2x512xbf16>)
                 scale = 0.1352 mask = <causal, bottom_right>
  return
}

// A chunk of new tokens (dynamic Sq) over the latent cache.
func.func @mla_chunk(%q: memref<?x16x?x576xbf16>, %ckv: memref<?x1x?x576xbf16>,
                     %o: memref<?x16x?x512xbf16>) {
  attn.attention q(%q : memref<?x16x?x576xbf16>)
                 k(%ckv : memref<?x1x?x576xbf16>) v_from_k
              -> o(%o : memref<?x16x?x512xbf16>)
                 scale = 0.1352 mask = <causal, bottom_right>
  return
}

func.func @wide_chunk(%q: memref<?x16x?x576xbf16>, %k: memref<?x1x?x576xbf16>,
                      %v: memref<?x1x?x512xbf16>, %o: memref<?x16x?x512xbf16>) {
  attn.attention q(%q : memref<?x16x?x576xbf16>) k(%k : memref<?x1x?x576xbf16>)
                 v(%v : memref<?x1x?x512xbf16>)
              -> o(%o : memref<?x16x?x512xbf16>)
                 scale = 0.1352 mask = <causal, bottom_right>
  return
}
