// attn-split-kv rewrites each K/V loop into independent partial states and
// their merge (flash-decoding). Its input is an L1 nest: attn-tile's, with
// 16 x 32 tiles, of a GQA-4 decode step (Hq 8, Hkv 2, Sq 1, D 128).
// RUN: attn-opt %s --attn-split-kv="num-splits=3" | FileCheck %s --check-prefix=SPLITS
// RUN: attn-opt %s --attn-split-kv="kv-chunk=128" | FileCheck %s --check-prefix=CHUNK

// A fixed number of splits: each covers ceil(tiles / 3) K/V tiles; the
// last ones may be empty (their loop does not run and they merge as the
// identity).
// SPLITS-LABEL: func.func @decode
// SPLITS: scf.forall
// SPLITS: %[[LEN:.*]] = arith.subi %[[HI:.*]], %c0
// SPLITS: %[[POS:.*]] = arith.maxsi %[[LEN]], %c0
// SPLITS: %[[TILES:.*]] = arith.ceildivsi %[[POS]], %c32
// SPLITS: %[[PER:.*]] = arith.ceildivsi %[[TILES]], %c3
// SPLITS: %[[SPAN:.*]] = arith.muli %[[PER]], %c32
// SPLITS: %[[MP:.*]] = tensor.empty(%c3) : tensor<?x16xf32>
// SPLITS: %[[AP:.*]] = tensor.empty(%c3) : tensor<?x16x128xf32>
// SPLITS: %[[PARTS:.*]]:3 = scf.forall (%[[S:.*]]) in (%c3) shared_outs(%[[OM:.*]] = %[[MP]], %[[OL:.*]] = %[[MP]], %[[OA:.*]] = %[[AP]])
// SPLITS: %[[OFF:.*]] = arith.muli %[[S]], %[[SPAN]]
// SPLITS: %[[LO:.*]] = arith.addi %c0{{.*}}, %[[OFF]]
// SPLITS: %[[END:.*]] = arith.addi %[[LO]], %[[SPAN]]
// SPLITS: %[[SHI:.*]] = arith.minsi %[[END]], %[[HI]]
// SPLITS: %[[IM:.*]], %[[IL:.*]], %[[IA:.*]] = attn.init_state
// SPLITS: %[[P:.*]]:3 = scf.for %{{.*}} = %[[LO]] to %[[SHI]] step %c32{{.*}} iter_args(%{{.*}} = %[[IM]], %{{.*}} = %[[IL]], %{{.*}} = %[[IA]])
// SPLITS: attn.online_softmax
// SPLITS: attn.pv
// SPLITS-NOT: attn.kv_loop
// SPLITS: scf.forall.in_parallel
// SPLITS-NEXT: tensor.parallel_insert_slice %[[P]]#0 into %[[OM]][%[[S]], 0] [1, 16] [1, 1] : tensor<16xf32> into tensor<?x16xf32>
// SPLITS-NEXT: tensor.parallel_insert_slice %[[P]]#1 into %[[OL]][%[[S]], 0] [1, 16] [1, 1]
// SPLITS-NEXT: tensor.parallel_insert_slice %[[P]]#2 into %[[OA]][%[[S]], 0, 0] [1, 16, 128] [1, 1, 1] : tensor<16x128xf32> into tensor<?x16x128xf32>
// SPLITS: %[[M0:.*]], %[[L0:.*]], %[[A0:.*]] = attn.init_state
// SPLITS: %[[R:.*]]:3 = scf.for %[[I:.*]] = %c0{{.*}} to %c3{{.*}} step %c1{{.*}} iter_args(%[[M:.*]] = %[[M0]], %[[L:.*]] = %[[L0]], %[[A:.*]] = %[[A0]])
// SPLITS: %[[SM:.*]] = tensor.extract_slice %[[PARTS]]#0[%[[I]], 0] [1, 16] [1, 1]
// SPLITS: %[[SL:.*]] = tensor.extract_slice %[[PARTS]]#1[%[[I]], 0] [1, 16] [1, 1]
// SPLITS: %[[SA:.*]] = tensor.extract_slice %[[PARTS]]#2[%[[I]], 0, 0] [1, 16, 128] [1, 1, 1]
// SPLITS: %[[MM0:.*]], %[[MM1:.*]], %[[MM2:.*]] = attn.merge (%[[M]], %[[L]], %[[A]]), (%[[SM]], %[[SL]], %[[SA]]) : tensor<16xf32>, tensor<16x128xf32>
// SPLITS: scf.yield %[[MM0]], %[[MM1]], %[[MM2]]
// SPLITS: attn.finalize %[[R]]#0, %[[R]]#1, %[[R]]#2

// A chunk of keys per split: the split count follows from the K/V length
// (128 keys = 4 tiles of 32 per split).
// CHUNK-LABEL: func.func @decode
// CHUNK: %[[TILES:.*]] = arith.ceildivsi %{{.*}}, %c32
// CHUNK: %[[N:.*]] = arith.ceildivsi %[[TILES]], %c4
// CHUNK: %[[SPAN:.*]] = arith.muli %c4{{.*}}, %c32
// CHUNK: scf.forall (%{{.*}}) in (%[[N]]) shared_outs
// CHUNK: scf.for %{{.*}} = %c0{{.*}} to %[[N]] step %c1
// CHUNK: attn.merge
func.func @decode(%arg0: memref<?x8x1x128xf16>, %arg1: memref<?x2x?x128xf16>, %arg2: memref<?x2x?x128xf16>, %arg3: memref<?x8x1x128xf16>) {
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x8x1x128xf16>
  %c2 = arith.constant 2 : index
  %dim_0 = memref.dim %arg0, %c2 : memref<?x8x1x128xf16>
  %c4 = arith.constant 4 : index
  %0 = arith.muli %dim_0, %c4 : index
  %c16 = arith.constant 16 : index
  %1 = arith.ceildivsi %0, %c16 : index
  %c2_1 = arith.constant 2 : index
  %dim_2 = memref.dim %arg1, %c2_1 : memref<?x2x?x128xf16>
  scf.forall (%arg4, %arg5, %arg6) in (%dim, 2, %1) {
    %c16_3 = arith.constant 16 : index
    %2 = arith.muli %arg6, %c16_3 : index
    %c0_4 = arith.constant 0 : index
    %3 = attn.load_q %arg0[%arg4, %arg5, %2] group 4 : memref<?x8x1x128xf16> -> tensor<16x128xf16>
    %max, %sum, %acc = attn.init_state : tensor<16xf32>, tensor<16x128xf32>
    %c32 = arith.constant 32 : index
    %4:3 = scf.for %arg7 = %c0_4 to %dim_2 step %c32 iter_args(%arg8 = %max, %arg9 = %sum, %arg10 = %acc) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x128xf32>) {
      %5 = attn.load_kv %arg1[%arg4, %arg5, %arg7] length %dim_2 : memref<?x2x?x128xf16> -> tensor<32x128xf16>
      %6 = attn.load_kv %arg2[%arg4, %arg5, %arg7] length %dim_2 : memref<?x2x?x128xf16> -> tensor<32x128xf16>
      %7 = attn.qk %3, %5 scale 0.0883883461 : tensor<16x128xf16>, tensor<32x128xf16> -> tensor<16x32xf32>
      %8 = attn.mask %7 rows %2 cols %arg7 q_len %dim_0 kv_len %dim_2 mask <none> group 4 : tensor<16x32xf32>
      %probs, %new_max, %new_sum, %rescale = attn.online_softmax %8, %arg8, %arg9 : tensor<16x32xf32>, tensor<16xf32>
      %9 = attn.pv %probs, %6, %arg10, %rescale : tensor<16x32xf32>, tensor<32x128xf16>, tensor<16x128xf32>, tensor<16xf32>
      scf.yield %new_max, %new_sum, %9 : tensor<16xf32>, tensor<16xf32>, tensor<16x128xf32>
    } {attn.kv_loop}
    %out, %lse = attn.finalize %4#0, %4#1, %4#2 : tensor<16xf32>, tensor<16x128xf32> -> tensor<16x128xf16>
    attn.store_o %out, %arg3[%arg4, %arg5, %2] group 4 : tensor<16x128xf16>, memref<?x8x1x128xf16>
  }
  return
}
