// attn-nv-to-nvvm expands each attn_nv op in its place; nothing of attn_nv
// is left.
// RUN: attn-opt %s --attn-nv-to-nvvm | FileCheck %s
// CHECK-NOT: attn_nv.

// ldmatrix: nvgpu's x4 load, each matrix's two halves packed into an i32.
// CHECK-LABEL: func.func @ldmatrix
// CHECK: %[[T:.*]] = nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true} : memref<64x128xf16, 3> -> vector<4x2xf16>
// CHECK-COUNT-4: vector.bitcast %{{.*}} : vector<2xf16> to vector<1xi32>
// CHECK: vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xi32>
func.func @ldmatrix(%tile: memref<64x128xf16, 3>, %i: index) -> vector<4xi32> {
  %a = attn_nv.ldmatrix %tile[%i, %i] transpose : memref<64x128xf16, 3>
  return %a : vector<4xi32>
}

// With lane offsets the lane's address is the tile's plus its own; a
// swizzle XORs the column, a constant one (80 = 64 + 16) keeping its
// 64-element group outside the XOR.
// CHECK-LABEL: func.func @ldmatrix_lanes
// CHECK-SAME: (%[[T:.*]]: memref<64x128xf16, 3>, %[[R:.*]]: index, %[[C:.*]]: index, %[[LR:.*]]: index, %[[LC:.*]]: index, %[[M:.*]]: index)
// CHECK: %[[R0:.*]] = arith.addi %[[R]], %[[LR]] : index
// CHECK: %[[C0:.*]] = arith.addi %[[C]], %[[LC]] : index
// CHECK: nvgpu.ldmatrix %[[T]][%[[R0]], %[[C0]]]
// CHECK: %[[R1:.*]] = arith.addi %[[R]], %[[LR]] : index
// CHECK: %[[S1:.*]] = arith.addi %[[C]], %[[LC]] : index
// CHECK: %[[X1:.*]] = arith.xori %[[S1]], %[[M]] : index
// CHECK: nvgpu.ldmatrix %[[T]][%[[R1]], %[[X1]]]
// CHECK: %[[R2:.*]] = arith.addi %[[R]], %[[LR]] : index
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[S2:.*]] = arith.addi %[[C16]], %[[LC]] : index
// CHECK: %[[X2:.*]] = arith.xori %[[S2]], %[[M]] : index
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[G2:.*]] = arith.addi %[[X2]], %[[C64]] : index
// CHECK: nvgpu.ldmatrix %[[T]][%[[R2]], %[[G2]]] {numTiles = 4 : i32, transpose = true}
func.func @ldmatrix_lanes(%tile: memref<64x128xf16, 3>, %r: index, %c: index,
                          %lr: index, %lc: index, %m: index)
    -> (vector<4xi32>, vector<4xi32>, vector<4xi32>) {
  %c80 = arith.constant 80 : index
  %a = attn_nv.ldmatrix %tile[%r, %c] lane [%lr, %lc] : memref<64x128xf16, 3>
  %b = attn_nv.ldmatrix %tile[%r, %c] lane [%lr, %lc] swizzle %m : memref<64x128xf16, 3>
  %d = attn_nv.ldmatrix %tile[%r, %c80] lane [%lr, %lc] swizzle %m transpose : memref<64x128xf16, 3>
  return %a, %b, %d : vector<4xi32>, vector<4xi32>, vector<4xi32>
}

// mma_tile: two m16n8k16, both on all of A; columns 0-7 take B's registers
// 0-1 and C's elements 0-3, columns 8-15 the rest. f16 pairs go in as
// vector<2xf16>, bf16 pairs as i32.
// CHECK-LABEL: func.func @mma_tile_f16
// CHECK-SAME: (%[[A:.*]]: vector<4xi32>, %[[B:.*]]: vector<4xi32>, %[[C:.*]]: vector<8xf32>)
// CHECK-COUNT-8: vector.bitcast %{{.*}} : vector<1xi32> to vector<2xf16>
// CHECK: %[[LO:.*]] = nvvm.mma.sync A[{{.*}}]  B[{{.*}}]  C[{{.*}}] {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>{{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: %[[HI:.*]] = nvvm.mma.sync
// CHECK: vector.from_elements {{.*}} : vector<8xf32>
func.func @mma_tile_f16(%a: vector<4xi32>, %b: vector<4xi32>, %c: vector<8xf32>) -> vector<8xf32> {
  %d = attn_nv.mma_tile %a, %b, %c : f16
  return %d : vector<8xf32>
}

// CHECK-LABEL: func.func @mma_tile_bf16
// CHECK-NOT: vector.bitcast
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
func.func @mma_tile_bf16(%a: vector<4xi32>, %b: vector<4xi32>, %c: vector<8xf32>) -> vector<8xf32> {
  %d = attn_nv.mma_tile %a, %b, %c : bf16
  return %d : vector<8xf32>
}

// wgmma with A in shared memory: a fence, k / 16 = 2 chained products
// through 128-byte-swizzled K-major descriptors (A's and B's second K
// step 32 bytes on), the first without an accumulator input (scale-d 0),
// the commit, and N / 16 = 2 tiles out of the struct.
// CHECK-LABEL: func.func @wgmma_k_major
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.ori %{{.*}}, %c4611686293305360384_i64 : i64
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[S0:.*]] = llvm.inline_asm has_side_effects "{{.*}}wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {$0, {{.*}}, $15}, $16, $17, p, 1, 1, 0, 0;{{.*}}"{{.*}}%[[ZERO]]
// CHECK: arith.constant 32 : index
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: %[[S1:.*]] = llvm.inline_asm has_side_effects "{{.*}}m64n32k16.f32.f16.f16 {{.*}}, $32, $33, p, 1, 1, 0, 0;{{.*}}", "=f,{{.*}},0,1,2,{{.*}}15,l,l,r"{{.*}}%[[ONE]]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-COUNT-16: llvm.extractvalue %[[S1]]
func.func @wgmma_k_major(%base: i64, %q: index, %k: index) -> (vector<8xf32>, vector<8xf32>) {
  %s:2 = attn_nv.wgmma %base a_tile %q b_tile %k {a_rows = 128 : i64, k = 32 : i64}
      : f16 -> vector<8xf32>, vector<8xf32>
  return %s#0, %s#1 : vector<8xf32>, vector<8xf32>
}

// wgmma with A in registers: the accumulators into a struct after the
// fence, then per A fragment one product on its four registers and an
// MN-major descriptor of B (leading byte offset k * 128 = 4096 bytes,
// 16 rows = 2048 bytes a step), B transposed.
// CHECK-LABEL: func.func @wgmma_registers
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK-COUNT-16: llvm.insertvalue
// CHECK: arith.ori %{{.*}}, %c4611686293322072064_i64 : i64
// CHECK: llvm.inline_asm has_side_effects "{{.*}}m64n32k16.f32.bf16.bf16 {{.*}}, {$32, $33, $34, $35}, $36, p, 1, 1, 1;{{.*}}", "{{.*}},r,r,r,r,l,r"
// CHECK: arith.constant 2048 : index
// CHECK: llvm.inline_asm has_side_effects "{{.*}}, p, 1, 1, 1;
// CHECK: nvvm.wgmma.commit.group.sync.aligned
func.func @wgmma_registers(%base: i64, %v: index, %p0: vector<4xi32>, %p1: vector<4xi32>,
                           %o0: vector<8xf32>, %o1: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>) {
  %o:2 = attn_nv.wgmma %base a(%p0, %p1) acc(%o0, %o1) b_tile %v {k = 32 : i64}
      : bf16 -> vector<8xf32>, vector<8xf32>
  return %o#0, %o#1 : vector<8xf32>, vector<8xf32>
}

// fence_registers: one empty asm with side effects, each register an
// output tied to its input.
// CHECK-LABEL: func.func @fence_registers
// CHECK: %[[PIN:.*]] = llvm.inline_asm has_side_effects "", "=r,=r,=r,=r,=r,=r,=r,=r,0,1,2,3,4,5,6,7" {{.*}} -> !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32)>
// CHECK-COUNT-8: llvm.extractvalue %[[PIN]]
func.func @fence_registers(%a: vector<4xi32>, %b: vector<4xi32>) -> (vector<4xi32>, vector<4xi32>) {
  %p:2 = attn_nv.fence_registers %a, %b : vector<4xi32>, vector<4xi32>
  return %p#0, %p#1 : vector<4xi32>, vector<4xi32>
}

// online_softmax on one 16-column tile with a scale: the row maxima of the
// raw dots over the quad (xor 1, xor 2), scaled; the reference moves past
// m + 8; p = 2^(c dot - m') by one FMA before ex2; P rounded to f16 and
// packed as an A fragment; l' = l alpha + the thread's sum; alpha
// broadcast over the two rows; `moved` or'd into the earlier m-tiles'.
// CHECK-LABEL: func.func @online_softmax
// CHECK-SAME: (%[[S:.*]]: vector<8xf32>, %[[MT:.*]]: f32, %[[MB:.*]]: f32, %[[LT:.*]]: f32, %[[LB:.*]]: f32, %[[BEFORE:.*]]: i1)
// CHECK-COUNT-8: vector.extract %[[S]]
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32{{.*}} : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32{{.*}} : f32
// CHECK: %[[MAX:.*]] = arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK: arith.constant 8.000000e+00 : f32
// CHECK: %[[MOVES:.*]] = arith.cmpf ogt, %[[MAX]]
// CHECK: arith.ori %[[BEFORE]], %[[MOVES]] : i1
// CHECK: arith.select %[[MOVES]], %[[MAX]], %[[MT]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: math.fma
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: arith.mulf %[[LT]]
// CHECK: arith.mulf %[[LB]]
// CHECK: vector.from_elements {{.*}} : vector<8xf32>
func.func @online_softmax(%s: vector<8xf32>, %mt: f32, %mb: f32, %lt: f32, %lb: f32, %before: i1)
    -> (vector<4xi32>, f32, f32, f32, f32, vector<8xf32>, i1) {
  %p, %m0, %m1, %l0, %l1, %alpha, %moved = attn_nv.online_softmax %s
      state(%mt, %mb, %lt, %lb) moved %before {scale = 0.125 : f64} : f16
  return %p, %m0, %m1, %l0, %l1, %alpha, %moved : vector<4xi32>, f32, f32, f32, f32, vector<8xf32>, i1
}

// copy_tile, 24 rows of 48 (6 chunks a row, 144 chunks) by 64 threads:
// chunks tid, tid + 64 for every thread, tid + 128 under a guard (16
// left). Each chunk's row through the source region (inlined per chunk);
// the chunk at column 40 (src_width 40) is padding: it reads column 0
// and copies 0 bytes; cp.async zero-fills.
// CHECK-LABEL: func.func @copy_tile_padded
// CHECK-SAME: (%[[K:.*]]: memref<?x8x?x40xf16>, %[[T:.*]]: memref<24x56xf16, 3>, %[[TID:.*]]: index, %[[N:.*]]: index, %[[H:.*]]: index)
// CHECK: %[[C:.*]] = arith.addi %[[TID]], %c0
// CHECK: %[[ROW:.*]] = arith.divui %[[C]], %c6
// CHECK: %[[CHUNK:.*]] = arith.remui %[[C]], %c6
// CHECK: %[[COL:.*]] = arith.muli %[[CHUNK]], %c8
// CHECK: %[[EXISTS:.*]] = arith.cmpi slt, %[[ROW]], %[[N]] : index
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[COL]], %c40
// CHECK: %[[VALID:.*]] = arith.andi %[[EXISTS]], %[[IN]] : i1
// CHECK: %[[SRC:.*]] = arith.select %[[IN]], %[[COL]], %c0{{.*}} : index
// CHECK: %[[BYTES:.*]] = arith.select %[[VALID]], %c8{{.*}}, %c0{{.*}} : index
// CHECK: nvgpu.device_async_copy %[[K]][%[[H]], %[[H]], %[[ROW]], %[[SRC]]], %[[T]][%[[ROW]], %[[COL]]], 8, %[[BYTES]] {bypassL1} : memref<?x8x?x40xf16> to memref<24x56xf16, 3>
// CHECK: arith.addi %[[TID]], %c64
// CHECK: nvgpu.device_async_copy
// CHECK: %[[LAST:.*]] = arith.addi %[[TID]], %c128
// CHECK: %[[SOME:.*]] = arith.cmpi slt, %[[LAST]], %c144
// CHECK: scf.if %[[SOME]] {
// CHECK: nvgpu.device_async_copy
// CHECK: }
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: return
func.func @copy_tile_padded(%k: memref<?x8x?x40xf16>, %t: memref<24x56xf16, 3>, %tid: index, %n: index, %h: index) {
  attn_nv.copy_tile %k -> %t plain async thread %tid
      {rows = 24 : i64, src_width = 40 : i64, threads = 64 : i64, width = 48 : i64}
      : memref<?x8x?x40xf16> -> memref<24x56xf16, 3> {
  ^bb0(%row: index):
    %in = arith.cmpi slt, %row, %n : index
    attn_nv.yield %in, %h, %h, %row : i1, index, index, index
  }
  return
}

// Blocked (wgmma's tiles): column c of row r at [(c / 64) * rows + r,
// (c % 64) ^ 8 (r % 8)]. Without async: a 16-byte load, zeros where the
// row does not exist, a 16-byte store.
// CHECK-LABEL: func.func @copy_tile_blocked
// CHECK: %[[ROW:.*]] = arith.divui %{{.*}}, %c16
// CHECK: %[[COL:.*]] = arith.muli %{{.*}}, %c8
// CHECK: %[[BLOCK:.*]] = arith.divui %[[COL]], %c64
// CHECK: %[[BROW:.*]] = arith.muli %[[BLOCK]], %c64
// CHECK: %[[DROW:.*]] = arith.addi %[[BROW]], %[[ROW]]
// CHECK: %[[INB:.*]] = arith.remui %[[COL]], %c64
// CHECK: %[[R8:.*]] = arith.andi %[[ROW]], %c7
// CHECK: %[[MASK:.*]] = arith.shli %[[R8]], %c3
// CHECK: %[[DCOL:.*]] = arith.xori %[[INB]], %[[MASK]]
// CHECK: %[[X:.*]] = vector.load %{{.*}} {alignment = 16 : i64} : memref<?x8x?x128xf16>, vector<8xf16>
// CHECK: %[[Z:.*]] = arith.select %{{.*}}, %[[X]], %cst : vector<8xf16>
// CHECK: vector.store %[[Z]], %{{.*}}[%[[DROW]], %[[DCOL]]] {alignment = 16 : i64} : memref<128x64xf16, 3>, vector<8xf16>
func.func @copy_tile_blocked(%k: memref<?x8x?x128xf16>, %t: memref<128x64xf16, 3>, %tid: index, %n: index, %h: index) {
  attn_nv.copy_tile %k -> %t blocked thread %tid
      {rows = 64 : i64, src_width = 128 : i64, threads = 128 : i64, width = 128 : i64}
      : memref<?x8x?x128xf16> -> memref<128x64xf16, 3> {
  ^bb0(%row: index):
    %in = arith.cmpi slt, %row, %n : index
    attn_nv.yield %in, %h, %h, %row : i1, index, index, index
  }
  return
}

// mask_tile, causal from the bottom right, GQA group 4: the thread's two
// rows' queries (row / 4, (row + 8) / 4); element 0's key j + col, element
// 5's j + col + 9 (column 8 + 1), element 15 (tile 1's element 7) j +
// col + 25; key <= query + kv_len - q_len and key < kv_len, else -inf.
// CHECK-LABEL: func.func @mask_tile
// CHECK-SAME: (%[[S0:.*]]: vector<8xf32>, %[[S1:.*]]: vector<8xf32>, %[[ROW:.*]]: index, %[[J:.*]]: index, %[[COL:.*]]: index, %[[Q:.*]]: index, %[[KV:.*]]: index)
// CHECK: %[[TOP:.*]] = arith.divui %[[ROW]], %c4
// CHECK: %[[ROW8:.*]] = arith.addi %[[ROW]], %c8
// CHECK: %[[BOTTOM:.*]] = arith.divui %[[ROW8]], %c4
// CHECK: %[[C0:.*]] = arith.addi %[[COL]], %c0
// CHECK: %[[K0:.*]] = arith.addi %[[J]], %[[C0]]
// CHECK: %[[INSIDE:.*]] = arith.cmpi slt, %[[K0]], %[[KV]]
// CHECK: %[[SHIFT:.*]] = arith.subi %[[KV]], %[[Q]]
// CHECK: %[[DIAG:.*]] = arith.addi %[[TOP]], %[[SHIFT]]
// CHECK: %[[PAST:.*]] = arith.subi %[[K0]], %[[DIAG]]
// CHECK: %[[SEES:.*]] = arith.cmpi sle, %[[PAST]], %c0
// CHECK: arith.andi %[[INSIDE]], %[[SEES]] : i1
// CHECK: %[[X0:.*]] = vector.extract %[[S0]][0]
// CHECK: arith.select %{{.*}}, %[[X0]], %cst{{.*}} : f32
// CHECK: arith.addi %[[COL]], %c9
// CHECK: arith.subi %[[KV]], %[[Q]]
// CHECK: arith.addi %[[BOTTOM]]
// CHECK: arith.addi %[[COL]], %c25
// CHECK: %[[X15:.*]] = vector.extract %[[S1]][7]
// CHECK: arith.select %{{.*}}, %[[X15]], %cst{{.*}} : f32
// CHECK: vector.from_elements {{.*}} : vector<8xf32>
func.func @mask_tile(%s0: vector<8xf32>, %s1: vector<8xf32>, %row: index, %j: index,
                     %col: index, %q: index, %kv: index) -> (vector<8xf32>, vector<8xf32>) {
  %m:2 = attn_nv.mask_tile %s0, %s1 rows(%row) keys(%j, %col) sizes(%q, %kv)
      {group = 4 : i64, mask = #attn.mask<causal, bottom_right>}
  return %m#0, %m#1 : vector<8xf32>, vector<8xf32>
}

// mask_tile with a mask_mod (document ids, group 2): per element the
// built-in test, then the region inlined at (b, h = kv_head * 2 + row % 2,
// q_idx = row / 2, kv_idx = key), its loads at a query and a key clamped
// to 0 outside the sequence (the region addresses memory with both), and
// both verdicts ANDed.
// CHECK-LABEL: func.func @mask_tile_mod
// CHECK-SAME: (%[[S:.*]]: vector<8xf32>, %[[ROW:.*]]: index, %[[J:.*]]: index, %[[COL:.*]]: index, %[[Q:.*]]: index, %[[KV:.*]]: index, %[[B:.*]]: index, %[[KVH:.*]]: index, %[[DOC:.*]]: memref<?x?xi32>)
// CHECK: %[[C0:.*]] = arith.addi %[[COL]], %c0
// CHECK: %[[K0:.*]] = arith.addi %[[J]], %[[C0]]
// CHECK: %[[BUILTIN:.*]] = arith.cmpi slt, %[[K0]], %[[KV]]
// CHECK: %[[FIRST:.*]] = arith.muli %[[KVH]], %c2
// CHECK: %[[IN:.*]] = arith.remui %[[ROW]], %c2
// CHECK: arith.addi %[[FIRST]], %[[IN]]
// CHECK: %[[QI:.*]] = arith.divui %[[ROW]], %c2
// CHECK: %[[QOK:.*]] = arith.cmpi slt, %[[QI]], %[[Q]]
// CHECK: %[[QC:.*]] = arith.select %[[QOK]], %[[QI]], %c0
// CHECK: %[[KOK:.*]] = arith.cmpi slt, %[[K0]], %[[KV]]
// CHECK: %[[KC:.*]] = arith.select %[[KOK]], %[[K0]], %c0
// CHECK: %[[DQ:.*]] = memref.load %[[DOC]][%[[B]], %[[QC]]]
// CHECK: %[[DK:.*]] = memref.load %[[DOC]][%[[B]], %[[KC]]]
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[DQ]], %[[DK]] : i32
// CHECK: %[[SEEN:.*]] = arith.andi %[[BUILTIN]], %[[SAME]] : i1
// CHECK: %[[X0:.*]] = vector.extract %[[S]][0]
// CHECK: arith.select %[[SEEN]], %[[X0]], %cst{{.*}} : f32
// CHECK-NOT: attn_nv.
// CHECK-NOT: attn.yield
func.func @mask_tile_mod(%s: vector<8xf32>, %row: index, %j: index, %col: index,
                         %q: index, %kv: index, %b: index, %kvh: index,
                         %doc: memref<?x?xi32>) -> vector<8xf32> {
  %m = attn_nv.mask_tile %s rows(%row) keys(%j, %col) sizes(%q, %kv)
      at(%b, %kvh) captures(%doc : memref<?x?xi32>)
      {group = 2 : i64, mask = #attn.mask<none>} mask_mod {
  ^bb0(%bb: index, %h: index, %i: index, %jj: index, %ids: memref<?x?xi32>):
    %di = memref.load %ids[%bb, %i] : memref<?x?xi32>
    %dj = memref.load %ids[%bb, %jj] : memref<?x?xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  }
  return %m : vector<8xf32>
}

// score_tile with a soft-cap (scale 0.5, cap 20) and a score_mod adding
// a per-head bias: element 0 at row row0 + (warp + (lane_row + 16)) (m
// offset 16) and key j + (col + 0); the dot capped (tanh.approx of dot *
// 0.5 / 20, times 20), given to the region with (b, h = kv_head * 2 +
// row % 2, q_idx = row / 2, kv_idx), the result times log2(e). The region
// does not address memory with q_idx or kv_idx: no clamps.
// CHECK-LABEL: func.func @score_tile
// CHECK-SAME: (%[[D:.*]]: vector<8xf32>, %[[R0:.*]]: index, %[[W:.*]]: index, %[[LR:.*]]: index, %[[J:.*]]: index, %[[COL:.*]]: index, %[[Q:.*]]: index, %[[KV:.*]]: index, %[[B:.*]]: index, %[[KVH:.*]]: index, %[[BIAS:.*]]: memref<8xf32>)
// CHECK: %[[X:.*]] = vector.extract %[[D]][0]
// CHECK: %[[IW:.*]] = arith.addi %[[LR]], %c16
// CHECK: %[[IB:.*]] = arith.addi %[[W]], %[[IW]]
// CHECK: %[[ROW:.*]] = arith.addi %[[R0]], %[[IB]]
// CHECK: %[[C:.*]] = arith.addi %[[COL]], %c0
// CHECK: %[[KEY:.*]] = arith.addi %[[J]], %[[C]]
// CHECK: %[[IN:.*]] = arith.mulf %[[X]], %cst{{.*}} : f32
// CHECK: %[[T:.*]] = llvm.inline_asm "tanh.approx.f32 $0, $1;", "=f,f" %[[IN]]
// CHECK: %[[CAPPED:.*]] = arith.mulf %[[T]], %cst{{.*}} : f32
// CHECK: %[[FIRST:.*]] = arith.muli %[[KVH]], %c2
// CHECK: %[[HIN:.*]] = arith.remui %[[ROW]], %c2
// CHECK: %[[H:.*]] = arith.addi %[[FIRST]], %[[HIN]]
// CHECK-NOT: arith.select
// CHECK: %[[BH:.*]] = memref.load %[[BIAS]][%[[H]]]
// CHECK: %[[SUM:.*]] = arith.addf %[[CAPPED]], %[[BH]] : f32
// CHECK: arith.mulf %[[SUM]], %cst{{.*}} : f32
// CHECK: vector.from_elements
// CHECK-NOT: attn_nv.
// CHECK-NOT: attn.yield
func.func @score_tile(%d: vector<8xf32>, %r0: index, %w: index, %lr: index,
                      %j: index, %col: index, %q: index, %kv: index,
                      %b: index, %kvh: index, %bias: memref<8xf32>) -> vector<8xf32> {
  %s = attn_nv.score_tile %d rows(%r0, %w, %lr) keys(%j, %col) sizes(%q, %kv)
      at(%b, %kvh) captures(%bias : memref<8xf32>)
      {group = 2 : i64, m_offset = 16 : i64, scale = 0.5 : f64, softcap = 20.0 : f64}
      score_mod {
  ^bb0(%x: f32, %bb: index, %h: index, %i: index, %jj: index, %bt: memref<8xf32>):
    %v = memref.load %bt[%h] : memref<8xf32>
    %y = arith.addf %x, %v : f32
    attn.yield %y : f32
  }
  return %s : vector<8xf32>
}

// store_accumulator: elements (0, 1) at [row + g, col + t2], (2, 3) at
// row + g + 8, (4, 5) at column + 8, (6, 7) at both; rounded to f16 and,
// swizzled, each column permuted by its row (c ^ 8 (r % 8)).
// CHECK-LABEL: func.func @store_accumulator
// CHECK-SAME: (%[[ACC:.*]]: vector<8xf32>, %[[T:.*]]: memref<64x64xf16, 3>, %[[R:.*]]: index, %[[C:.*]]: index, %[[G:.*]]: index, %[[T2:.*]]: index)
// CHECK: %[[E0:.*]] = vector.extract %[[ACC]][0]
// CHECK: %[[H0:.*]] = arith.truncf %[[E0]] : f32 to f16
// CHECK: %[[R0:.*]] = arith.addi %[[R]], %[[G]]
// CHECK: %[[C0:.*]] = arith.addi %[[C]], %[[T2]]
// CHECK: arith.andi %[[R0]], %c7
// CHECK: %[[SW:.*]] = arith.xori %[[C0]]
// CHECK: %[[P0:.*]] = vector.from_elements %[[H0]], %{{.*}} : vector<2xf16>
// CHECK: vector.store %[[P0]], %[[T]][%[[R0]], %[[SW]]] : memref<64x64xf16, 3>, vector<2xf16>
// CHECK: %[[RG:.*]] = arith.addi %[[R]], %[[G]]
// CHECK: %[[R8:.*]] = arith.addi %[[RG]], %c8
// CHECK: vector.store %{{.*}}, %[[T]][%[[R8]], %{{.*}}]
// CHECK-COUNT-2: vector.store
// CHECK-NOT: vector.store
func.func @store_accumulator(%acc: vector<8xf32>, %t: memref<64x64xf16, 3>, %r: index,
                             %c: index, %g: index, %t2: index) {
  attn_nv.store_accumulator %acc -> %t[%r, %c] lanes(%g, %t2) swizzled : memref<64x64xf16, 3>
  return
}

// for_each_chunk, 32 rows of 40 columns in chunks of 8 (5 a row, 160 in
// all) over 32 lanes: five rounds, all full. Chunk lane + 32 i is row
// first + c / 5, column (c % 5) * 8, run where row0 + row < rows.
// CHECK-LABEL: func.func @for_each_chunk
// CHECK-SAME: (%[[O:.*]]: memref<?x40xf16>, %[[LANE:.*]]: index, %[[FIRST:.*]]: index, %[[ROW0:.*]]: index, %[[ROWS:.*]]: index, %[[X:.*]]: vector<8xf16>)
// CHECK: %[[C:.*]] = arith.addi %[[LANE]], %c0
// CHECK: %[[IN:.*]] = arith.divui %[[C]], %c5
// CHECK: %[[ROW:.*]] = arith.addi %[[FIRST]], %[[IN]]
// CHECK: %[[CHUNK:.*]] = arith.remui %[[C]], %c5
// CHECK: %[[COL:.*]] = arith.muli %[[CHUNK]], %c8
// CHECK: %[[AT:.*]] = arith.addi %[[ROW0]], %[[ROW]]
// CHECK: %[[OK:.*]] = arith.cmpi slt, %[[AT]], %[[ROWS]]
// CHECK: scf.if %[[OK]] {
// CHECK-NEXT: vector.store %[[X]], %[[O]][%[[ROW]], %[[COL]]]
// CHECK-COUNT-4: scf.if
// CHECK-NOT: scf.if
// CHECK: return
func.func @for_each_chunk(%o: memref<?x40xf16>, %lane: index, %first: index,
                          %row0: index, %rows: index, %x: vector<8xf16>) {
  attn_nv.for_each_chunk thread %lane of 32 rows(%first, 32) width 40 chunk 8
      limit(%row0, %rows) {
  ^bb0(%row: index, %col: index):
    vector.store %x, %o[%row, %col] : memref<?x40xf16>, vector<8xf16>
    attn_nv.yield
  }
  return
}

// 8 rows of 64 in chunks of 8 (64 chunks) over 48 threads: the second
// round also asks whether the chunk exists at all (c < 64).
// CHECK-LABEL: func.func @for_each_chunk_partial
// CHECK: arith.addi %{{.*}}, %c48
// CHECK: %[[OK:.*]] = arith.cmpi slt
// CHECK: %[[SOME:.*]] = arith.cmpi slt, %{{.*}}, %c64
// CHECK: %[[BOTH:.*]] = arith.andi %[[OK]], %[[SOME]] : i1
// CHECK: scf.if %[[BOTH]] {
func.func @for_each_chunk_partial(%o: memref<?x64xf16>, %tid: index, %first: index,
                                  %row0: index, %rows: index, %x: vector<8xf16>) {
  attn_nv.for_each_chunk thread %tid of 48 rows(%first, 8) width 64 chunk 8
      limit(%row0, %rows) {
  ^bb0(%row: index, %col: index):
    vector.store %x, %o[%row, %col] : memref<?x64xf16>, vector<8xf16>
    attn_nv.yield
  }
  return
}
