// attn-split-kv rewrites each K/V loop into independent partial states and
// their merge (flash-decoding).
// RUN: attn-opt %s --attn-tile="block-q=16 block-kv=32" --attn-split-kv="num-splits=3" | FileCheck %s --check-prefix=SPLITS
// RUN: attn-opt %s --attn-tile="block-q=16 block-kv=32" --attn-split-kv="kv-chunk=128" | FileCheck %s --check-prefix=CHUNK

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
func.func @decode(%q: memref<?x8x1x128xf16>, %k: memref<?x2x?x128xf16>,
                  %v: memref<?x2x?x128xf16>, %o: memref<?x8x1x128xf16>) {
  attn.attention q(%q : memref<?x8x1x128xf16>) k(%k : memref<?x2x?x128xf16>)
                 v(%v : memref<?x2x?x128xf16>) -> o(%o : memref<?x8x1x128xf16>)
  return
}
