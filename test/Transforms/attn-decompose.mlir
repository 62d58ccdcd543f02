// attn-decompose lowers each L1 op to linalg.generic / tensor / scf / arith.
// RUN: attn-opt %s --attn-decompose --split-input-file | FileCheck %s

// Scores: an f32 contraction over the head dim of Q and K (K read
// transposed through its indexing map), then scale, soft-cap (tanh) and
// log2(e) in one map: 0.2 / 30 and 30 * log2(e).
// CHECK-DAG: #[[QMAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[KMAP:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[SMAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @qk_softcap
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16x8xf32>)
// CHECK: %[[DOT:.*]] = linalg.generic {indexing_maps = [#[[QMAP]], #[[KMAP]], #[[SMAP]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<16x64xf16>, tensor<8x64xf16>) outs(%[[ZERO]] : tensor<16x8xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%[[DOT]] : tensor<16x8xf32>)
// CHECK: %[[C1:.*]] = arith.constant 0.00666666683 : f32
// CHECK: arith.mulf %{{.*}}, %[[C1]]
// CHECK: math.tanh
// CHECK: %[[C2:.*]] = arith.constant 43.2808495 : f32
// CHECK: arith.mulf %{{.*}}, %[[C2]]
// CHECK-NOT: attn.qk
func.func @qk_softcap(%q: tensor<16x64xf16>, %k: tensor<8x64xf16>) -> tensor<16x8xf32> {
  %s = attn.qk %q, %k scale 0.2 softcap 30.0 : tensor<16x64xf16>, tensor<8x64xf16> -> tensor<16x8xf32>
  return %s : tensor<16x8xf32>
}

// -----

// The online-softmax step: row max (maxnumf), new max and rescale
// exp2(m - ms) where ms is 0 for rows still at -inf (no NaN from
// -inf - -inf), probabilities exp2(s - ms), row sums, l * rescale + sum.
// CHECK-LABEL: func.func @online_softmax
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32)
// CHECK: %[[RMAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x8xf32>) outs(%[[INIT]] : tensor<4xf32>)
// CHECK: arith.maxnumf
// CHECK: %[[NM:.*]]:2 = linalg.generic {{.*}} ins(%{{.*}}, %[[RMAX]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[MX:.*]] = arith.maxnumf
// CHECK: %[[EMPTY:.*]] = arith.cmpf oeq, %[[MX]], %{{.*}} : f32
// CHECK: %[[SAFE:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[MX]] : f32
// CHECK: %[[D:.*]] = arith.subf %{{.*}}, %[[SAFE]] : f32
// CHECK: math.exp2 %[[D]] : f32
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[NM]]#0 : tensor<4x8xf32>, tensor<4xf32>)
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: arith.subf
// CHECK: math.exp2
// CHECK: %[[RSUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<4x8xf32>)
// CHECK: %[[L:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[NM]]#1, %[[RSUM]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: return %[[P]], %[[NM]]#0, %[[L]], %[[NM]]#1
func.func @online_softmax(%s: tensor<4x8xf32>, %m: tensor<4xf32>, %l: tensor<4xf32>)
    -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %p, %m1, %l1, %a = attn.online_softmax %s, %m, %l : tensor<4x8xf32>, tensor<4xf32>
  return %p, %m1, %l1, %a : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Finalize: rows with l = 0 give out = 0 and lse = -inf; lse is
// ln(2) * (m + log2(l)); the output is truncated to its element type.
// CHECK-LABEL: func.func @finalize
// CHECK: linalg.generic
// CHECK: %[[SEEN:.*]] = arith.cmpf ogt
// CHECK: %[[DIV:.*]] = arith.divf
// CHECK: %[[X:.*]] = arith.select %[[SEEN]], %[[DIV]]
// CHECK: arith.truncf %[[X]] : f32 to bf16
// CHECK: linalg.generic
// CHECK: math.log2
// CHECK: arith.constant 0.693147182 : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
func.func @finalize(%m: tensor<4xf32>, %l: tensor<4xf32>, %acc: tensor<4x16xf32>) -> (tensor<4x16xbf16>, tensor<4xf32>) {
  %o, %lse = attn.finalize %m, %l, %acc : tensor<4xf32>, tensor<4x16xf32> -> tensor<4x16xbf16>
  return %o, %lse : tensor<4x16xbf16>, tensor<4xf32>
}

// -----

// Finalize with a sink: the sink (natural units) times log2(e) joins the
// state first, m' = max(m, t), l' = l * exp2(m - ms) + exp2(t - ms) with
// ms = 0 for a row still at -inf, acc rescaled by exp2(m - ms); then the
// rule above on (m', l', acc').
// CHECK-LABEL: func.func @finalize_sink
// CHECK-SAME: (%[[M:.*]]: tensor<4xf32>, %[[L:.*]]: tensor<4xf32>, %[[ACC:.*]]: tensor<4x16xf32>, %[[SINK:.*]]: tensor<4xf32>)
// CHECK: %[[ST:.*]]:3 = linalg.generic {{.*}} ins(%[[M]], %[[L]], %[[SINK]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[MI:[^:]*]]: f32, %[[LI:[^:]*]]: f32, %[[SI:[^:]*]]: f32,
// CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[T:.*]] = arith.mulf %[[SI]], %[[LOG2E]] : f32
// CHECK: %[[MX:.*]] = arith.maxnumf %[[MI]], %[[T]] : f32
// CHECK: %[[EMPTY:.*]] = arith.cmpf oeq, %[[MX]]
// CHECK: %[[MS:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[MX]] : f32
// CHECK: %[[D:.*]] = arith.subf %[[MI]], %[[MS]] : f32
// CHECK: %[[R:.*]] = math.exp2 %[[D]] : f32
// CHECK: %[[TD:.*]] = arith.subf %[[T]], %[[MS]] : f32
// CHECK: %[[P:.*]] = math.exp2 %[[TD]] : f32
// CHECK: %[[LR:.*]] = arith.mulf %[[LI]], %[[R]] : f32
// CHECK: %[[LN:.*]] = arith.addf %[[LR]], %[[P]] : f32
// CHECK: linalg.yield %[[MX]], %[[LN]], %[[R]]
// CHECK: %[[RA:.*]] = linalg.generic {{.*}} ins(%[[ACC]], %[[ST]]#2 : tensor<4x16xf32>, tensor<4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[RA]], %[[ST]]#1 : tensor<4x16xf32>, tensor<4xf32>)
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}} ins(%[[ST]]#0, %[[ST]]#1 : tensor<4xf32>, tensor<4xf32>)
// CHECK: math.log2
func.func @finalize_sink(%m: tensor<4xf32>, %l: tensor<4xf32>, %acc: tensor<4x16xf32>, %sink: tensor<4xf32>) -> (tensor<4x16xbf16>, tensor<4xf32>) {
  %o, %lse = attn.finalize %m, %l, %acc sink %sink : tensor<4xf32>, tensor<4x16xf32>, tensor<4xf32> -> tensor<4x16xbf16>
  return %o, %lse : tensor<4x16xbf16>, tensor<4xf32>
}

// -----

// Each row's sink: the head of flat row row + r under GQA 4 (kv_head * 4 +
// (row + r) % 4), widened to f32. Every head exists: no bounds check.
// CHECK-LABEL: func.func @load_sink
// CHECK-SAME: (%[[S:.*]]: memref<8xbf16>, %[[H:.*]]: index, %[[ROW:.*]]: index)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<16xf32>)
// CHECK: %[[R:.*]] = linalg.index 0
// CHECK: %[[F:.*]] = arith.addi %[[ROW]], %[[R]]
// CHECK: %[[FIRST:.*]] = arith.muli %[[H]], %c4
// CHECK: %[[IN:.*]] = arith.remui %[[F]], %c4
// CHECK: %[[HEAD:.*]] = arith.addi %[[FIRST]], %[[IN]]
// CHECK: %[[X:.*]] = memref.load %[[S]][%[[HEAD]]] : memref<8xbf16>
// CHECK: %[[Y:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK: linalg.yield %[[Y]]
// CHECK-NOT: scf.if
// CHECK-NOT: attn.load_sink
func.func @load_sink(%s: memref<8xbf16>, %h: index, %row: index) -> tensor<16xf32> {
  %t = attn.load_sink %s[%h, %row] group 4 : memref<8xbf16> -> tensor<16xf32>
  return %t : tensor<16xf32>
}

// -----

// Paged loads: rows past the length read nothing (scf.if); others read the
// block table entry j / 16 and the row j % 16 of that block.
// CHECK-LABEL: func.func @load_paged
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<32x64xf16>)
// CHECK: %[[R:.*]] = linalg.index 0
// CHECK: %[[D:.*]] = linalg.index 1
// CHECK: %[[J:.*]] = arith.addi %{{.*}}, %[[R]]
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[J]], %{{.*}}
// CHECK: scf.if %[[IN]] -> (f16)
// CHECK: %[[J2:.*]] = arith.addi
// CHECK: %[[PAGE:.*]] = arith.divui %[[J2]], %c16
// CHECK: %[[E:.*]] = memref.load %{{.*}}[%{{.*}}, %[[PAGE]]] : memref<?x?xi32>
// CHECK: %[[BLK:.*]] = arith.index_cast %[[E]] : i32 to index
// CHECK: %[[ROW:.*]] = arith.remui %[[J2]], %c16
// CHECK: memref.load %{{.*}}[%[[BLK]], %{{.*}}, %[[ROW]], %[[D]]] : memref<?x4x16x64xf16>
// CHECK: } else {
// CHECK: arith.constant 0.000000e+00 : f16
func.func @load_paged(%k: memref<?x4x16x64xf16>, %bt: memref<?x?xi32>, %b: index, %h: index, %j: index, %n: index) -> tensor<32x64xf16> {
  %t = attn.load_kv %k[%b, %h, %j] length %n block_table %bt : memref<?x4x16x64xf16>, memref<?x?xi32> -> tensor<32x64xf16>
  return %t : tensor<32x64xf16>
}

// -----

// Merge of two partial states: m = max, both rescaled by exp2(m_i - ms).
// CHECK-LABEL: func.func @merge
// CHECK: %[[R:.*]]:4 = linalg.generic
// CHECK: arith.maxnumf
// CHECK: math.exp2
// CHECK: math.exp2
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[R]]#2, %[[R]]#3 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2xf32>, tensor<2xf32>)
func.func @merge(%m0: tensor<2xf32>, %l0: tensor<2xf32>, %a0: tensor<2x8xf32>,
                 %m1: tensor<2xf32>, %l1: tensor<2xf32>, %a1: tensor<2x8xf32>)
    -> (tensor<2xf32>, tensor<2xf32>, tensor<2x8xf32>) {
  %m, %l, %a = attn.merge (%m0, %l0, %a0), (%m1, %l1, %a1) : tensor<2xf32>, tensor<2x8xf32>
  return %m, %l, %a : tensor<2xf32>, tensor<2xf32>, tensor<2x8xf32>
}
