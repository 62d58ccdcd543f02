// attn_nv's ops print and parse back (the form the tier passes build them
// in: test/codegen/nvptx/attn-to-mma.mlir, attn-to-wgmma.mlir).
// RUN: attn-opt %s | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @mma_sync_tiles
// CHECK: %[[A:.*]] = attn_nv.ldmatrix %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x128xf16, 3>
// CHECK: %[[B:.*]] = attn_nv.ldmatrix %{{.*}}[%{{.*}}, %{{.*}}] transpose : memref<64x128xf16, 3>
// CHECK: attn_nv.mma_tile %[[A]], %[[B]], %{{.*}} : f16
// CHECK: attn_nv.mma_tile %{{.*}}, %{{.*}}, %{{.*}} : bf16
// CHECK: attn_nv.ldmatrix %{{.*}}[%{{.*}}, %{{.*}}] lane [%{{.*}}, %{{.*}}] : memref<64x128xf16, 3>
// CHECK: attn_nv.ldmatrix %{{.*}}[%{{.*}}, %{{.*}}] lane [%{{.*}}, %{{.*}}] swizzle %{{.*}} transpose : memref<64x128xf16, 3>
func.func @mma_sync_tiles(%tile: memref<64x128xf16, 3>, %i: index,
                          %c: vector<8xf32>, %x: vector<4xi32>) -> vector<8xf32> {
  %a = attn_nv.ldmatrix %tile[%i, %i] : memref<64x128xf16, 3>
  %b = attn_nv.ldmatrix %tile[%i, %i] transpose : memref<64x128xf16, 3>
  %d = attn_nv.mma_tile %a, %b, %c : f16
  %e = attn_nv.mma_tile %x, %x, %d : bf16
  %f = attn_nv.ldmatrix %tile[%i, %i] lane [%i, %i] : memref<64x128xf16, 3>
  %g = attn_nv.ldmatrix %tile[%i, %i] lane [%i, %i] swizzle %i transpose : memref<64x128xf16, 3>
  return %e : vector<8xf32>
}

// CHECK-LABEL: func.func @wgmma_groups
// CHECK: %[[S:.*]]:2 = attn_nv.wgmma %{{.*}} a_tile %{{.*}} b_tile %{{.*}} {a_rows = 128 : i64, k = 64 : i64} : f16 -> vector<8xf32>, vector<8xf32>
// CHECK: %[[P:.*]]:2 = attn_nv.fence_registers %{{.*}}, %{{.*}} : vector<4xi32>, vector<4xi32>
// CHECK: attn_nv.wgmma %{{.*}} a(%[[P]]#0, %[[P]]#1) acc(%[[S]]#0, %[[S]]#1) b_tile %{{.*}} {k = 32 : i64} : bf16 -> vector<8xf32>, vector<8xf32>
func.func @wgmma_groups(%base: i64, %q: index, %k: index,
                        %p0: vector<4xi32>, %p1: vector<4xi32>) -> vector<8xf32> {
  %s:2 = attn_nv.wgmma %base a_tile %q b_tile %k {a_rows = 128 : i64, k = 64 : i64}
      : f16 -> vector<8xf32>, vector<8xf32>
  %p:2 = attn_nv.fence_registers %p0, %p1 : vector<4xi32>, vector<4xi32>
  %o:2 = attn_nv.wgmma %base a(%p#0, %p#1) acc(%s#0, %s#1) b_tile %k {k = 32 : i64}
      : bf16 -> vector<8xf32>, vector<8xf32>
  return %o#1 : vector<8xf32>
}

// CHECK-LABEL: func.func @online_softmax
// CHECK: %[[P:.*]]:2, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[M:.*]] = attn_nv.online_softmax %{{.*}}, %{{.*}} state(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {scale = 1.250000e-01 : f64} : f16
// CHECK: attn_nv.online_softmax %{{.*}} state(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) moved %[[M]] : bf16
func.func @online_softmax(%s0: vector<8xf32>, %s1: vector<8xf32>, %m: f32, %l: f32) -> i1 {
  %p:2, %m0, %m1, %l0, %l1, %alpha, %moved = attn_nv.online_softmax %s0, %s1
      state(%m, %m, %l, %l) {scale = 0.125 : f64} : f16
  %q, %n0, %n1, %k0, %k1, %beta, %moved2 = attn_nv.online_softmax %s0
      state(%m0, %m1, %l0, %l1) moved %moved : bf16
  return %moved2 : i1
}

// CHECK-LABEL: func.func @copy_tile
// CHECK: attn_nv.copy_tile %{{.*}} -> %{{.*}} swizzled async thread %{{.*}} {rows = 64 : i64, src_width = 128 : i64, threads = 128 : i64, width = 128 : i64} : memref<?x8x?x128xf16> -> memref<64x128xf16, 3> {
// CHECK: ^bb0(%[[ROW:.*]]: index):
// CHECK: attn_nv.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : i1, index, index, index
// CHECK: attn_nv.copy_tile %{{.*}} -> %{{.*}} blocked thread
func.func @copy_tile(%k: memref<?x8x?x128xf16>, %tile: memref<64x128xf16, 3>,
                     %blocks: memref<128x64xf16, 3>, %tid: index, %n: index, %h: index) {
  attn_nv.copy_tile %k -> %tile swizzled async thread %tid
      {rows = 64 : i64, src_width = 128 : i64, threads = 128 : i64, width = 128 : i64}
      : memref<?x8x?x128xf16> -> memref<64x128xf16, 3> {
  ^bb0(%row: index):
    %in = arith.cmpi slt, %row, %n : index
    attn_nv.yield %in, %h, %h, %row : i1, index, index, index
  }
  attn_nv.copy_tile %k -> %blocks blocked thread %tid
      {rows = 64 : i64, src_width = 128 : i64, threads = 128 : i64, width = 128 : i64}
      : memref<?x8x?x128xf16> -> memref<128x64xf16, 3> {
  ^bb0(%row: index):
    %true = arith.constant true
    attn_nv.yield %true, %h, %h, %row : i1, index, index, index
  }
  return
}

// CHECK-LABEL: func.func @mask_tile
// CHECK: attn_nv.mask_tile %{{.*}}, %{{.*}} rows(%{{.*}}) keys(%{{.*}}, %{{.*}}) sizes(%{{.*}}, %{{.*}}) {group = 4 : i64, mask = #attn.mask<causal, bottom_right>}
func.func @mask_tile(%s0: vector<8xf32>, %s1: vector<8xf32>, %row: index, %j: index,
                     %col: index, %q: index, %kv: index) -> vector<8xf32> {
  %m:2 = attn_nv.mask_tile %s0, %s1 rows(%row) keys(%j, %col) sizes(%q, %kv)
      {group = 4 : i64, mask = #attn.mask<causal, bottom_right>}
  return %m#1 : vector<8xf32>
}

// CHECK-LABEL: func.func @store_accumulator
// CHECK: attn_nv.store_accumulator %{{.*}} -> %{{.*}}[%{{.*}}, %{{.*}}] lanes(%{{.*}}, %{{.*}}) swizzled : memref<256x64xf16, 3>
// CHECK: attn_nv.store_accumulator %{{.*}} -> %{{.*}}[%{{.*}}, %{{.*}}] lanes(%{{.*}}, %{{.*}}) : memref<64x72xf32, 3>
func.func @store_accumulator(%acc: vector<8xf32>, %stage: memref<256x64xf16, 3>,
                             %f: memref<64x72xf32, 3>, %r: index, %c: index,
                             %g: index, %t2: index) {
  attn_nv.store_accumulator %acc -> %stage[%r, %c] lanes(%g, %t2) swizzled : memref<256x64xf16, 3>
  attn_nv.store_accumulator %acc -> %f[%r, %c] lanes(%g, %t2) : memref<64x72xf32, 3>
  return
}

// CHECK-LABEL: func.func @for_each_chunk
// CHECK: attn_nv.for_each_chunk thread %{{.*}} of 32 rows(%{{.*}}, 32) width 40 chunk 8 limit(%{{.*}}, %{{.*}}) {
// CHECK: ^bb0(%{{.*}}: index, %{{.*}}: index):
// CHECK: attn_nv.yield
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

// A mask_tile with a mask_mod region, its captures and positions.
// CHECK-LABEL: func.func @mask_tile_mod
// CHECK: attn_nv.mask_tile %{{.*}} rows(%{{.*}}) keys(%{{.*}}, %{{.*}}) sizes(%{{.*}}, %{{.*}}) at(%{{.*}}, %{{.*}}) captures(%{{.*}} : memref<?x?xi32>) {group = 2 : i64, mask = #attn.mask<none>} mask_mod {
// CHECK: attn.yield %{{.*}} : i1
func.func @mask_tile_mod(%s: vector<8xf32>, %i: index, %doc: memref<?x?xi32>) -> vector<8xf32> {
  %m = attn_nv.mask_tile %s rows(%i) keys(%i, %i) sizes(%i, %i)
      at(%i, %i) captures(%doc : memref<?x?xi32>)
      {group = 2 : i64, mask = #attn.mask<none>} mask_mod {
  ^bb0(%bb: index, %h: index, %q: index, %k: index, %ids: memref<?x?xi32>):
    %a = memref.load %ids[%bb, %q] : memref<?x?xi32>
    %c = memref.load %ids[%bb, %k] : memref<?x?xi32>
    %same = arith.cmpi eq, %a, %c : i32
    attn.yield %same : i1
  }
  return %m : vector<8xf32>
}

// A score_tile with its score_mod region.
// CHECK-LABEL: func.func @score_tile
// CHECK: attn_nv.score_tile %{{.*}} rows(%{{.*}}, %{{.*}}, %{{.*}}) keys(%{{.*}}, %{{.*}}) sizes(%{{.*}}, %{{.*}}) at(%{{.*}}, %{{.*}}) {group = 1 : i64, m_offset = 0 : i64, scale = 1.250000e-01 : f64} score_mod {
// CHECK: attn.yield %{{.*}} : f32
func.func @score_tile(%d: vector<8xf32>, %i: index) -> vector<8xf32> {
  %s = attn_nv.score_tile %d rows(%i, %i, %i) keys(%i, %i) sizes(%i, %i) at(%i, %i)
      {group = 1 : i64, m_offset = 0 : i64, scale = 0.125 : f64} score_mod {
  ^bb0(%x: f32, %bb: index, %h: index, %q: index, %k: index):
    attn.yield %x : f32
  }
  return %s : vector<8xf32>
}
