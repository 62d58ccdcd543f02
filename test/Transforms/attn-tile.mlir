// attn-tile turns attn.attention (L0) into the online-softmax loop (L1).
// RUN: attn-opt %s --attn-tile="block-q=32 block-kv=16" --split-input-file | FileCheck %s

// GQA 8/2: one parallel iteration per (batch, K/V head, Q tile of the
// group's 4 * Sq packed rows); the K/V loop carries m, l, acc. No mask:
// the loop runs over the whole K/V length. Default scale 1/sqrt(64).
// CHECK-LABEL: func.func @gqa_no_mask
// CHECK-SAME: (%[[Q:.*]]: memref<?x8x?x64xf16>, %[[K:.*]]: memref<?x2x?x64xf16>, %[[V:.*]]: memref<?x2x?x64xf16>, %[[O:.*]]: memref<?x8x?x64xf16>, %[[LSE:.*]]: memref<?x8x?xf32>)
// CHECK-DAG: %[[B:.*]] = memref.dim %[[Q]], %c0
// CHECK-DAG: %[[SQ:.*]] = memref.dim %[[Q]], %c2
// CHECK: %[[ROWS:.*]] = arith.muli %[[SQ]], %c4
// CHECK: %[[TILES:.*]] = arith.ceildivsi %[[ROWS]], %c32
// CHECK: %[[SK:.*]] = memref.dim %[[K]], %c2
// CHECK: scf.forall (%[[BI:.*]], %[[H:.*]], %[[T:.*]]) in (%[[B]], 2, %[[TILES]])
// CHECK: %[[ROW:.*]] = arith.muli %[[T]], %c32
// CHECK: %[[QT:.*]] = attn.load_q %[[Q]][%[[BI]], %[[H]], %[[ROW]]] group 4 : memref<?x8x?x64xf16> -> tensor<32x64xf16>
// CHECK: %[[M0:.*]], %[[L0:.*]], %[[A0:.*]] = attn.init_state : tensor<32xf32>, tensor<32x64xf32>
// CHECK: %[[R:.*]]:3 = scf.for %[[J:.*]] = %c0{{.*}} to %[[SK]] step %c16{{.*}} iter_args(%[[M:.*]] = %[[M0]], %[[L:.*]] = %[[L0]], %[[A:.*]] = %[[A0]])
// CHECK: %[[KT:.*]] = attn.load_kv %[[K]][%[[BI]], %[[H]], %[[J]]] length %[[SK]] : memref<?x2x?x64xf16> -> tensor<16x64xf16>
// CHECK: %[[VT:.*]] = attn.load_kv %[[V]][%[[BI]], %[[H]], %[[J]]] length %[[SK]]
// CHECK: %[[S:.*]] = attn.qk %[[QT]], %[[KT]] scale 1.250000e-01 : tensor<32x64xf16>, tensor<16x64xf16> -> tensor<32x16xf32>
// CHECK: %[[SM:.*]] = attn.mask %[[S]] rows %[[ROW]] cols %[[J]] q_len %[[SQ]] kv_len %[[SK]] mask <none> group 4
// CHECK: %[[P:.*]], %[[NM:.*]], %[[NL:.*]], %[[RS:.*]] = attn.online_softmax %[[SM]], %[[M]], %[[L]]
// CHECK: %[[NA:.*]] = attn.pv %[[P]], %[[VT]], %[[A]], %[[RS]]
// CHECK: scf.yield %[[NM]], %[[NL]], %[[NA]]
// CHECK: } {attn.kv_loop}
// CHECK: %[[OUT:.*]], %[[LT:.*]] = attn.finalize %[[R]]#0, %[[R]]#1, %[[R]]#2 : tensor<32xf32>, tensor<32x64xf32> -> tensor<32x64xf16>
// CHECK: attn.store_o %[[OUT]], %[[O]][%[[BI]], %[[H]], %[[ROW]]] group 4
// CHECK: attn.store_lse %[[LT]], %[[LSE]][%[[BI]], %[[H]], %[[ROW]]] group 4
// CHECK-NOT: attn.attention
func.func @gqa_no_mask(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                       %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>,
                       %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
                 lse(%lse : memref<?x8x?xf32>)
  return
}

// -----

// Causal, bottom-right: the loop stops after the last key the tile's last
// query sees (query + (Sk - Sq) + 1), so tiles above the diagonal are never
// visited. Soft-cap and an explicit scale reach attn.qk.
// CHECK-LABEL: func.func @causal_bottom_right
// CHECK: %[[SQ:.*]] = memref.dim %{{.*}}, %c2
// CHECK: %[[SK:.*]] = memref.dim %{{.*}}, %c2
// CHECK: scf.forall
// CHECK: %[[LAST:.*]] = arith.minsi
// CHECK: arith.divsi
// CHECK: %[[LASTROW:.*]] = arith.subi %[[LAST]], %c1
// CHECK: %[[LASTQ:.*]] = arith.divsi %[[LASTROW]], %c1
// CHECK: %[[SHIFT:.*]] = arith.subi %[[SK]], %[[SQ]]
// CHECK: %[[D:.*]] = arith.addi %[[LASTQ]], %[[SHIFT]]
// CHECK: %[[END:.*]] = arith.addi %[[D]], %c1
// CHECK: %[[HI:.*]] = arith.minsi %[[END]], %[[SK]]
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[HI]] step %c16
// CHECK: attn.qk {{.*}} scale 2.000000e-01 softcap 3.000000e+01
// CHECK: attn.mask {{.*}} mask <causal, bottom_right> group 1
func.func @causal_bottom_right(%q: memref<2x4x?x32xf32>, %k: memref<2x4x?x32xf32>,
                               %v: memref<2x4x?x32xf32>, %o: memref<2x4x?x32xf32>) {
  attn.attention q(%q : memref<2x4x?x32xf32>) k(%k : memref<2x4x?x32xf32>)
                 v(%v : memref<2x4x?x32xf32>) -> o(%o : memref<2x4x?x32xf32>)
                 scale = 0.2 mask = <causal, bottom_right> softcap = 30.0
  return
}

// -----

// Sliding window: the loop starts at the first key the tile's first query
// sees (query - left), rounded down to a whole K/V tile.
// CHECK-LABEL: func.func @window
// CHECK: scf.forall
// CHECK: %[[FIRSTQ:.*]] = arith.divsi %[[ROW:.*]], %c1
// CHECK: %[[FIRST:.*]] = arith.addi %[[FIRSTQ]], %c0
// CHECK: %[[X:.*]] = arith.subi %[[FIRST]], %c100
// CHECK: %[[Y:.*]] = arith.maxsi %[[X]], %c0
// CHECK: %[[Z:.*]] = arith.divsi %[[Y]], %c16
// CHECK: %[[LO:.*]] = arith.muli %[[Z]], %c16
// CHECK: %[[E:.*]] = arith.addi %{{.*}}, %c9
// CHECK: %[[HI:.*]] = arith.minsi %[[E]], %{{.*}}
// CHECK: scf.for %{{.*}} = %[[LO]] to %[[HI]] step %c16
// CHECK: attn.mask {{.*}} mask <window 100, 8> group 1
func.func @window(%q: memref<1x2x?x64xbf16>, %k: memref<1x2x?x64xbf16>,
                  %v: memref<1x2x?x64xbf16>, %o: memref<1x2x?x64xbf16>) {
  attn.attention q(%q : memref<1x2x?x64xbf16>) k(%k : memref<1x2x?x64xbf16>)
                 v(%v : memref<1x2x?x64xbf16>) -> o(%o : memref<1x2x?x64xbf16>)
                 mask = <window 100, 8>
  return
}

// -----

// Paged K/V: the sequence's length comes from kv_lens (never negative) and
// tiles read through the block table. The op's schedule overrides the
// pass options (tiles 16 x 64 here).
// CHECK-LABEL: func.func @paged_schedule
// CHECK-SAME: %[[BT:[^:]*]]: memref<?x?xi32>, %[[LENS:[^:]*]]: memref<?xi32>
// CHECK: scf.forall (%[[BI:.*]], %[[H:.*]], %{{.*}}) in
// CHECK: %[[N:.*]] = memref.load %[[LENS]][%[[BI]]]
// CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : i32 to index
// CHECK: %[[LEN:.*]] = arith.maxsi %[[NI]], %c0
// CHECK: attn.load_q {{.*}} group 8 : memref<?x8x1x128xf16> -> tensor<16x128xf16>
// CHECK: scf.for %[[J:.*]] = %c0{{.*}} to %[[LEN]] step %c64
// CHECK: attn.load_kv %{{.*}}[%[[BI]], %[[H]], %[[J]]] length %[[LEN]] block_table %[[BT]] : memref<?x1x16x128xf16>, memref<?x?xi32> -> tensor<64x128xf16>
func.func @paged_schedule(%q: memref<?x8x1x128xf16>, %k: memref<?x1x16x128xf16>,
                          %v: memref<?x1x16x128xf16>, %bt: memref<?x?xi32>,
                          %lens: memref<?xi32>, %o: memref<?x8x1x128xf16>) {
  attn.attention q(%q : memref<?x8x1x128xf16>) k(%k : memref<?x1x16x128xf16>)
                 v(%v : memref<?x1x16x128xf16>)
                 block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x8x1x128xf16>)
                 schedule = <block_q = 16, block_kv = 64>
  return
}

// -----

// Attention sinks: each tile's rows load their head's sink after the K/V
// loop and finalize takes it; the loop is as without sinks.
// CHECK-LABEL: func.func @sinks
// CHECK-SAME: %[[S:[^:]*]]: memref<8xf32>
// CHECK: scf.forall (%[[BI:.*]], %[[H:.*]], %[[T:.*]]) in
// CHECK: %[[ROW:.*]] = arith.muli %[[T]], %c32
// CHECK: %[[R:.*]]:3 = scf.for
// CHECK-NOT: attn.load_sink
// CHECK: } {attn.kv_loop}
// CHECK: %[[ST:.*]] = attn.load_sink %[[S]][%[[H]], %[[ROW]]] group 4 : memref<8xf32> -> tensor<32xf32>
// CHECK: %[[OUT:.*]], %[[LT:.*]] = attn.finalize %[[R]]#0, %[[R]]#1, %[[R]]#2 sink %[[ST]] : tensor<32xf32>, tensor<32x64xf32>, tensor<32xf32> -> tensor<32x64xf16>
// CHECK: attn.store_o %[[OUT]]
// CHECK: attn.store_lse %[[LT]]
func.func @sinks(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                 %v: memref<?x2x?x64xf16>, %s: memref<8xf32>,
                 %o: memref<?x8x?x64xf16>, %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) sinks(%s : memref<8xf32>)
              -> o(%o : memref<?x8x?x64xf16>) lse(%lse : memref<?x8x?xf32>)
                 mask = <causal>
  return
}
