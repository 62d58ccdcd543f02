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
