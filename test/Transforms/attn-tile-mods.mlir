// attn-tile carries attn.attention's score_mod to the K/V loop's attn.qk
// and its mask_mod to attn.mask, with the positions and the captures as
// operands; attn-split-kv keeps them in each split; attn-decompose inlines
// them per element (the score_mod between cap(scale * dot) and log2(e),
// the mask_mod under the built-in visibility) and leaves no attn op.
// RUN: attn-opt %s --attn-tile="block-q=64 block-kv=32" | FileCheck %s
// RUN: attn-opt %s --attn-tile="block-q=64 block-kv=32" --attn-split-kv=num-splits=2 | FileCheck %s --check-prefix=SPLIT
// RUN: attn-opt %s --attn-tile --attn-decompose | FileCheck %s --check-prefix=DECOMPOSE

// CHECK-LABEL: func.func @alibi_doc
// CHECK-SAME: (%[[Q:.*]]: memref<?x8x?x64xf16>, %{{.*}}: memref<?x2x?x64xf16>, %{{.*}}: memref<?x2x?x64xf16>, %[[SL:.*]]: memref<8xf32>, %[[DOC:.*]]: memref<?xi32>, %{{.*}}: memref<?x8x?x64xf16>)
// CHECK: scf.forall (%[[B:[^,]+]], %[[H:[^,]+]], %{{.*}}) in
// CHECK: scf.for %[[J:[^ ]+]] = 
// CHECK: %[[S:.*]] = attn.qk %{{.*}}, %{{.*}} scale 1.250000e-01 at [%[[B]], %[[H]], %[[ROW:[^,]+]], %[[J]]] q_len %{{.*}} kv_len %{{.*}} group 4 captures(%[[SL]], %[[DOC]] : memref<8xf32>, memref<?xi32>) : tensor<64x64xf16>, tensor<32x64xf16> -> tensor<64x32xf32> score_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: index, %[[RH:[^:]+]]: index, %{{.*}}: index, %{{.*}}: index, %[[RSL:[^:]+]]: memref<8xf32>, %{{.*}}: memref<?xi32>):
// CHECK-NEXT: memref.load %[[RSL]][%[[RH]]] : memref<8xf32>
// CHECK: attn.yield %{{.*}} : f32
// CHECK: attn.mask %[[S]] rows %[[ROW]] cols %[[J]] q_len %{{.*}} kv_len %{{.*}} mask <causal> group 4 at [%[[B]], %[[H]]] captures(%[[SL]], %[[DOC]] : memref<8xf32>, memref<?xi32>) : tensor<64x32xf32> mask_mod {
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : i32
// CHECK: attn.yield %{{.*}} : i1

// SPLIT: scf.forall
// SPLIT: scf.forall
// SPLIT: attn.qk {{.*}} captures({{.*}}) {{.*}} score_mod {
// SPLIT: attn.mask {{.*}} captures({{.*}}) {{.*}} mask_mod {
// SPLIT: attn.merge

// DECOMPOSE-NOT: attn.qk
// DECOMPOSE-NOT: attn.mask
// DECOMPOSE-NOT: attn.yield
// DECOMPOSE: linalg.generic
// DECOMPOSE: scf.if
// DECOMPOSE: memref.load %arg3[%{{.*}}] : memref<8xf32>
// DECOMPOSE: arith.constant 1.44269502 : f32
// DECOMPOSE: scf.if
// DECOMPOSE: memref.load %arg4[%{{.*}}] : memref<?xi32>
// DECOMPOSE: memref.load %arg4[%{{.*}}] : memref<?xi32>
func.func @alibi_doc(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                     %v: memref<?x2x?x64xf16>, %slopes: memref<8xf32>,
                     %doc: memref<?xi32>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>)
                 captures(%slopes, %doc : memref<8xf32>, memref<?xi32>)
              -> o(%o : memref<?x8x?x64xf16>)
                 mask = <causal>
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %sl: memref<8xf32>, %d: memref<?xi32>):
    %slope = memref.load %sl[%h] : memref<8xf32>
    %r = arith.addf %s, %slope : f32
    attn.yield %r : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index,
       %sl: memref<8xf32>, %d: memref<?xi32>):
    %di = memref.load %d[%i] : memref<?xi32>
    %dj = memref.load %d[%j] : memref<?xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  }
  return
}
