// The L1 ops parse, print and parse again, in custom and generic syntax.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @step
// CHECK: %[[QT:.*]] = attn.load_q %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] group 4 : memref<?x8x?x64xbf16> -> tensor<32x64xbf16>
// CHECK: %[[M:.*]], %[[L:.*]], %[[A:.*]] = attn.init_state : tensor<32xf32>, tensor<32x64xf32>
// CHECK: %[[KT:.*]] = attn.load_kv %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] length %{{.*}} block_table %{{.*}} : memref<?x2x16x64xbf16>, memref<?x?xi32> -> tensor<16x64xbf16>
// CHECK: %[[S:.*]] = attn.qk %[[QT]], %[[KT]] scale 1.250000e-01 softcap 5.000000e+01 : tensor<32x64xbf16>, tensor<16x64xbf16> -> tensor<32x16xf32>
// CHECK: %[[SM:.*]] = attn.mask %[[S]] rows %{{.*}} cols %{{.*}} q_len %{{.*}} kv_len %{{.*}} mask <window 8, 0, bottom_right> group 4 : tensor<32x16xf32>
// CHECK: %[[P:.*]], %[[NM:.*]], %[[NL:.*]], %[[R:.*]] = attn.online_softmax %[[SM]], %[[M]], %[[L]] : tensor<32x16xf32>, tensor<32xf32>
// CHECK: %[[NA:.*]] = attn.pv %[[P]], %[[KT]], %[[A]], %[[R]] : tensor<32x16xf32>, tensor<16x64xbf16>, tensor<32x64xf32>, tensor<32xf32>
// CHECK: %[[MM:.*]], %[[ML:.*]], %[[MA:.*]] = attn.merge (%[[NM]], %[[NL]], %[[NA]]), (%[[M]], %[[L]], %[[A]]) : tensor<32xf32>, tensor<32x64xf32>
// CHECK: %[[O:.*]], %[[LSE:.*]] = attn.finalize %[[MM]], %[[ML]], %[[MA]] : tensor<32xf32>, tensor<32x64xf32> -> tensor<32x64xbf16>
// CHECK: attn.store_o %[[O]], %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] group 4 : tensor<32x64xbf16>, memref<?x8x?x64xbf16>
// CHECK: attn.store_lse %[[LSE]], %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] group 4 : tensor<32xf32>, memref<?x8x?xf32>
func.func @step(%q: memref<?x8x?x64xbf16>, %k: memref<?x2x16x64xbf16>,
                %bt: memref<?x?xi32>, %o: memref<?x8x?x64xbf16>,
                %lse: memref<?x8x?xf32>, %b: index, %h: index, %row: index,
                %col: index, %sq: index, %n: index) {
  %qt = attn.load_q %q[%b, %h, %row] group 4 : memref<?x8x?x64xbf16> -> tensor<32x64xbf16>
  %m, %l, %acc = attn.init_state : tensor<32xf32>, tensor<32x64xf32>
  %kt = attn.load_kv %k[%b, %h, %col] length %n block_table %bt
      : memref<?x2x16x64xbf16>, memref<?x?xi32> -> tensor<16x64xbf16>
  %s = attn.qk %qt, %kt scale 0.125 softcap 50.0
      : tensor<32x64xbf16>, tensor<16x64xbf16> -> tensor<32x16xf32>
  %sm = attn.mask %s rows %row cols %col q_len %sq kv_len %n
      mask #attn.mask<window 8, 0, bottom_right> group 4 : tensor<32x16xf32>
  %p, %m1, %l1, %alpha = attn.online_softmax %sm, %m, %l : tensor<32x16xf32>, tensor<32xf32>
  %acc1 = attn.pv %p, %kt, %acc, %alpha
      : tensor<32x16xf32>, tensor<16x64xbf16>, tensor<32x64xf32>, tensor<32xf32>
  %m2, %l2, %acc2 = attn.merge (%m1, %l1, %acc1), (%m, %l, %acc) : tensor<32xf32>, tensor<32x64xf32>
  %out, %lt = attn.finalize %m2, %l2, %acc2 : tensor<32xf32>, tensor<32x64xf32> -> tensor<32x64xbf16>
  attn.store_o %out, %o[%b, %h, %row] group 4 : tensor<32x64xbf16>, memref<?x8x?x64xbf16>
  attn.store_lse %lt, %lse[%b, %h, %row] group 4 : tensor<32xf32>, memref<?x8x?xf32>
  return
}

// The packed (varlen) addressing: Q, O and LSE rows from a sequence's
// first row and length, K/V rows from its first row.
// CHECK-LABEL: func.func @packed
// CHECK: attn.load_q %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] group 4 seq(%{{.*}}, %{{.*}}) : memref<?x8x64xf16> -> tensor<32x64xf16>
// CHECK: attn.load_kv %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] length %{{.*}} seq(%{{.*}}) : memref<?x2x64xf16> -> tensor<16x64xf16>
// CHECK: attn.store_o %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] group 4 seq(%{{.*}}, %{{.*}}) : tensor<32x64xf16>, memref<?x8x64xf16>
// CHECK: attn.store_lse %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] group 4 seq(%{{.*}}, %{{.*}}) : tensor<32xf32>, memref<?x8xf32>
func.func @packed(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>,
                  %o: memref<?x8x64xf16>, %lse: memref<?x8xf32>, %b: index,
                  %h: index, %row: index, %col: index, %qs: index,
                  %ql: index, %ks: index, %n: index, %t: tensor<32x64xf16>,
                  %l: tensor<32xf32>) {
  %qt = attn.load_q %q[%b, %h, %row] group 4 seq(%qs, %ql) : memref<?x8x64xf16> -> tensor<32x64xf16>
  %kt = attn.load_kv %k[%b, %h, %col] length %n seq(%ks) : memref<?x2x64xf16> -> tensor<16x64xf16>
  attn.store_o %t, %o[%b, %h, %row] group 4 seq(%qs, %ql) : tensor<32x64xf16>, memref<?x8x64xf16>
  attn.store_lse %l, %lse[%b, %h, %row] group 4 seq(%qs, %ql) : tensor<32xf32>, memref<?x8xf32>
  return
}

// Attention sinks: each row's sink loaded by head, then given to finalize.
// CHECK-LABEL: func.func @sinks
// CHECK: %[[ST:.*]] = attn.load_sink %{{.*}}[%{{.*}}, %{{.*}}] group 4 : memref<8xbf16> -> tensor<32xf32>
// CHECK: attn.finalize %{{.*}}, %{{.*}}, %{{.*}} sink %[[ST]] : tensor<32xf32>, tensor<32x64xf32>, tensor<32xf32> -> tensor<32x64xf16>
func.func @sinks(%sinks: memref<8xbf16>, %h: index, %row: index,
                 %m: tensor<32xf32>, %l: tensor<32xf32>, %acc: tensor<32x64xf32>) {
  %st = attn.load_sink %sinks[%h, %row] group 4 : memref<8xbf16> -> tensor<32xf32>
  %out, %lt = attn.finalize %m, %l, %acc sink %st
      : tensor<32xf32>, tensor<32x64xf32>, tensor<32xf32> -> tensor<32x64xf16>
  return
}
