// attn-select-tier: a static Sq of at most 16 queries -> decode, when K
// and V rows are 16-byte slices, at most 32 per key (D, Dv multiples of 8
// up to 256 for f16), with a Q tile of the group's rows rounded up to a
// power of two: 16 to 64 for the tensor-core split kernel (f16/bf16 on
// sm_80+ for more than 8 rows, on sm_90+ for any: fewer are padded to
// 16; more take more Q tiles), up to 8 for the SIMT one (sm_80-89, or
// decode-tensor-cores=false), which also takes up to 16 where there are
// no tensor cores.
// Otherwise the
// prefill tier it is told (mma by default). It fills in every schedule
// field the op leaves at 0: tiles, warps and stages.
// RUN: attn-opt %s "--attn-select-tier=prefill=wmma" | FileCheck %s --check-prefix=WMMA
// RUN: attn-opt %s --attn-select-tier | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s "--attn-select-tier=sm=90 decode-tensor-cores=false" | FileCheck %s --check-prefix=SIMT
// RUN: attn-opt %s "--attn-select-tier=prefill=mma sm=90" | FileCheck %s --check-prefix=SM90
// RUN: attn-opt %s "--attn-select-tier=prefill=wmma sm=75" | FileCheck %s --check-prefix=TURING
// The tensor-core split kernel's stage count is an option (for tuning
// runs; 4 by default).
// RUN: attn-opt %s "--attn-select-tier=sm=90 decode-tensor-core-stages=3" | FileCheck %s --check-prefix=STAGES3
// STAGES3-LABEL: func.func @decode_gqa4
// STAGES3: schedule = <block_q = 16, block_kv = 64, warps = 4, stages = 3>
// RUN: not attn-opt %s "--attn-select-tier=prefill=decode" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: attn-select-tier: option 'prefill' must be mma, wmma or wgmma, got 'decode'

// GQA-4, one query: 4 rows, the SIMT kernel's on sm_80, padded to the
// tensor-core kernel's 16 on sm_90; the SIMT kernel's 4 when asked.
// MMA-LABEL: func.func @decode_gqa4
// MMA: attn.attention {{.*}} schedule = <block_q = 4, block_kv = 32, warps = 4, stages = 2, unroll = 2>
// MMA-SAME: {attn.tier = #attn.tier<decode>}
// SM90-LABEL: func.func @decode_gqa4
// SM90: attn.attention {{.*}} schedule = <block_q = 16, block_kv = 64, warps = 4, stages = 4>
// SM90-SAME: {attn.tier = #attn.tier<decode>}
// SIMT-LABEL: func.func @decode_gqa4
// SIMT: attn.attention {{.*}} schedule = <block_q = 4, block_kv = 32, warps = 4, stages = 2, unroll = 2>
// SIMT-SAME: {attn.tier = #attn.tier<decode>}
func.func @decode_gqa4(%q: memref<?x8x1x128xf16>, %k: memref<?x2x?x128xf16>,
                       %v: memref<?x2x?x128xf16>, %o: memref<?x8x1x128xf16>) {
  attn.attention q(%q : memref<?x8x1x128xf16>) k(%k : memref<?x2x?x128xf16>)
                 v(%v : memref<?x2x?x128xf16>) -> o(%o : memref<?x8x1x128xf16>)
  return
}

// Three queries of a GQA-4 group: 12 rows, more than the SIMT split
// kernel keeps in registers (8): the tensor-core split kernel's 16-row
// tile of 64 keys on four warps; on Turing (no mma.sync) the SIMT one.
// MMA-LABEL: func.func @speculative
// MMA: schedule = <block_q = 16, block_kv = 64, warps = 4, stages = 4>
// MMA-SAME: {attn.tier = #attn.tier<decode>}
// TURING-LABEL: func.func @speculative
// TURING: schedule = <block_q = 16, block_kv = 32, warps = 4, stages = 1, unroll = 2>
// TURING-SAME: {attn.tier = #attn.tier<decode>}
func.func @speculative(%q: memref<?x8x3x64xbf16>, %k: memref<?x2x?x64xbf16>,
                       %v: memref<?x2x?x64xbf16>, %o: memref<?x8x3x64xbf16>) {
  attn.attention q(%q : memref<?x8x3x64xbf16>) k(%k : memref<?x2x?x64xbf16>)
                 v(%v : memref<?x2x?x64xbf16>) -> o(%o : memref<?x8x3x64xbf16>)
  return
}

// Eight queries of a GQA-4 group: 32 rows, one 32-row tile (at most 64);
// on Turing two 16-row SIMT Q tiles.
// MMA-LABEL: func.func @long_rows
// MMA: schedule = <block_q = 32, block_kv = 64, warps = 4, stages = 4>
// MMA-SAME: {attn.tier = #attn.tier<decode>}
// TURING-LABEL: func.func @long_rows
// TURING: schedule = <block_q = 16, block_kv = 32, warps = 4, stages = 1, unroll = 2>
// TURING-SAME: {attn.tier = #attn.tier<decode>}
func.func @long_rows(%q: memref<?x8x8x64xf16>, %k: memref<?x2x?x64xf16>,
                     %v: memref<?x2x?x64xf16>, %o: memref<?x8x8x64xf16>) {
  attn.attention q(%q : memref<?x8x8x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x8x64xf16>)
  return
}

// MQA: 64 query heads over one K/V head, one 64-row tile, four
// K/V stages in flight (the split kernel is bound by memory). At D256
// four stages exceed sm_80's 163 KiB: two.
// MMA-LABEL: func.func @mqa
// MMA: schedule = <block_q = 64, block_kv = 64, warps = 4, stages = 4>
// MMA-SAME: {attn.tier = #attn.tier<decode>}
func.func @mqa(%q: memref<?x64x1x128xf16>, %k: memref<?x1x?x128xf16>,
               %v: memref<?x1x?x128xf16>, %o: memref<?x64x1x128xf16>) {
  attn.attention q(%q : memref<?x64x1x128xf16>) k(%k : memref<?x1x?x128xf16>)
                 v(%v : memref<?x1x?x128xf16>) -> o(%o : memref<?x64x1x128xf16>)
  return
}

// MMA-LABEL: func.func @mqa_d256
// MMA: schedule = <block_q = 64, block_kv = 64, warps = 4, stages = 2>
// MMA-SAME: {attn.tier = #attn.tier<decode>}
func.func @mqa_d256(%q: memref<?x64x1x256xf16>, %k: memref<?x1x?x256xf16>,
                    %v: memref<?x1x?x256xf16>, %o: memref<?x64x1x256xf16>) {
  attn.attention q(%q : memref<?x64x1x256xf16>) k(%k : memref<?x1x?x256xf16>)
                 v(%v : memref<?x1x?x256xf16>) -> o(%o : memref<?x64x1x256xf16>)
  return
}

// D != Dv, and head dims that are not 8 times a power of two.
// MMA-LABEL: func.func @decode_dv_differs
// MMA: schedule = <block_q = 4, block_kv = 32, warps = 4, stages = 2, unroll = 2>
// MMA-SAME: {attn.tier = #attn.tier<decode>}
// MMA-LABEL: func.func @decode_d40
// MMA: schedule = <block_q = 4, block_kv = 32, warps = 4, stages = 2, unroll = 2> {attn.tier = #attn.tier<decode>}
// SM90-LABEL: func.func @decode_dv_differs
// SM90: schedule = <block_q = 16, block_kv = 64, warps = 4, stages = 4>
// SM90-SAME: {attn.tier = #attn.tier<decode>}
// SM90-LABEL: func.func @decode_d40
// SM90: schedule = <block_q = 16, block_kv = 64, warps = 4, stages = 4> {attn.tier = #attn.tier<decode>}
// SIMT-LABEL: func.func @decode_dv_differs
// SIMT: schedule = <block_q = 4, block_kv = 32, warps = 4, stages = 2, unroll = 2>
// SIMT-SAME: {attn.tier = #attn.tier<decode>}
// SIMT-LABEL: func.func @decode_d40
// SIMT: schedule = <block_q = 4, block_kv = 32, warps = 4, stages = 2, unroll = 2> {attn.tier = #attn.tier<decode>}
func.func @decode_dv_differs(%q: memref<?x8x1x64xf16>, %k: memref<?x2x?x64xf16>,
                             %v: memref<?x2x?x128xf16>, %o: memref<?x8x1x128xf16>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x128xf16>) -> o(%o : memref<?x8x1x128xf16>)
  return
}
func.func @decode_d40(%q: memref<?x8x1x40xf16>, %k: memref<?x2x?x40xf16>,
                      %v: memref<?x2x?x40xf16>, %o: memref<?x8x1x40xf16>) {
  attn.attention q(%q : memref<?x8x1x40xf16>) k(%k : memref<?x2x?x40xf16>)
                 v(%v : memref<?x2x?x40xf16>) -> o(%o : memref<?x8x1x40xf16>)
  return
}

// A dynamic query length, more than 16 queries, or a head dim past the
// decode tier's 32 slices: the prefill tier.
// MMA-LABEL: func.func @seventeen_queries
// MMA: {attn.tier = #attn.tier<mma>}
// MMA-LABEL: func.func @d264
// MMA: {attn.tier = #attn.tier<mma>}
func.func @seventeen_queries(%q: memref<?x2x17x64xf16>, %k: memref<?x2x?x64xf16>,
                             %v: memref<?x2x?x64xf16>, %o: memref<?x2x17x64xf16>) {
  attn.attention q(%q : memref<?x2x17x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x2x17x64xf16>)
  return
}
func.func @d264(%q: memref<?x2x1x264xf16>, %k: memref<?x2x?x264xf16>,
                %v: memref<?x2x?x264xf16>, %o: memref<?x2x1x264xf16>) {
  attn.attention q(%q : memref<?x2x1x264xf16>) k(%k : memref<?x2x?x264xf16>)
                 v(%v : memref<?x2x?x264xf16>) -> o(%o : memref<?x2x1x264xf16>)
  return
}

// The wmma tier's tiles: 64 x 32, one warp per 16 rows; two cp.async
// stages, one on Turing (no cp.async).
// WMMA-LABEL: func.func @prefill
// WMMA: schedule = <block_q = 64, block_kv = 32, warps = 4, stages = 2>
// WMMA-SAME: {attn.tier = #attn.tier<wmma>}
// WMMA-LABEL: func.func @dv_differs
// WMMA: {attn.tier = #attn.tier<wmma>}
// TURING-LABEL: func.func @prefill
// TURING: schedule = <block_q = 64, block_kv = 32, warps = 4, stages = 1>
// The mma tier's measured tiles: 128 x 64 up to D64; up to D128 128 x 64
// where two blocks fit an SM's shared memory (sm_90), else 128 x 32; four
// warps of two m-tiles.
// MMA-LABEL: func.func @prefill
// MMA: schedule = <block_q = 128, block_kv = 64, warps = 4, stages = 2>
// MMA-SAME: {attn.tier = #attn.tier<mma>}
// MMA-LABEL: func.func @dv_differs
// MMA: schedule = <block_q = 128, block_kv = 32, warps = 4, stages = 2>
// SM90-LABEL: func.func @prefill
// SM90: schedule = <block_q = 128, block_kv = 64, warps = 4, stages = 2>
// SM90-LABEL: func.func @dv_differs
// SM90: schedule = <block_q = 128, block_kv = 64, warps = 4, stages = 2>
func.func @prefill(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                   %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
  return
}
func.func @dv_differs(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                      %v: memref<?x2x?x128xf16>, %o: memref<?x8x?x128xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x128xf16>) -> o(%o : memref<?x8x?x128xf16>)
  return
}

// A schedule that sets only some fields keeps them; the fields it leaves
// at 0 get the defaults (warps for the op's own block_q).
// MMA-LABEL: func.func @partial_schedule
// MMA: schedule = <block_q = 32, block_kv = 64, warps = 8, stages = 2>
// SM90-LABEL: func.func @partial_schedule
// SM90: schedule = <block_q = 32, block_kv = 64, warps = 8, stages = 2>
// WMMA-LABEL: func.func @partial_schedule
// WMMA: schedule = <block_q = 32, block_kv = 32, warps = 8, stages = 2>
func.func @partial_schedule(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                            %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
                 schedule = <block_q = 32, warps = 8>
  return
}

// A tier the user chose is kept; its schedule is still filled in.
// WMMA-LABEL: func.func @chosen_tier
// WMMA: schedule = <block_q = 128, block_kv = 64, warps = 4, stages = 2>
// WMMA-SAME: attn.tier = #attn.tier<mma>
func.func @chosen_tier(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                       %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
                 {attn.tier = #attn.tier<mma>}
  return
}
