// score_mod / mask_mod regions and captures on attn.attention, and the
// same regions on the L1 ops attn.qk and attn.mask, parse, print and parse
// again, in the custom and the generic syntax.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @alibi_document
// CHECK: attn.attention q(%{{.*}} : memref<?x8x?x64xf16>) k(%{{.*}} : memref<?x2x?x64xf16>) v(%{{.*}} : memref<?x2x?x64xf16>) captures(%{{.*}}, %{{.*}} : memref<8xf32>, memref<?x?xi32>) -> o(%{{.*}} : memref<?x8x?x64xf16>) mask = <causal> softcap = 3.000000e+01 score_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<8xf32>, %{{.*}}: memref<?x?xi32>):
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<8xf32>
// CHECK: math.absf
// CHECK: attn.yield %{{.*}} : f32
// CHECK-NEXT: } mask_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<8xf32>, %{{.*}}: memref<?x?xi32>):
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : i32
// CHECK: attn.yield %{{.*}} : i1
// CHECK-NEXT: }
func.func @alibi_document(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                          %v: memref<?x2x?x64xf16>, %slopes: memref<8xf32>,
                          %doc: memref<?x?xi32>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>)
                 captures(%slopes, %doc : memref<8xf32>, memref<?x?xi32>)
              -> o(%o : memref<?x8x?x64xf16>)
                 mask = <causal> softcap = 30.0
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %sl: memref<8xf32>, %d: memref<?x?xi32>):
    %slope = memref.load %sl[%h] : memref<8xf32>
    %dist = arith.subi %i, %j : index
    %di = arith.index_cast %dist : index to i32
    %df = arith.sitofp %di : i32 to f32
    %a = math.absf %df : f32
    %bias = arith.mulf %slope, %a : f32
    %r = arith.subf %s, %bias : f32
    attn.yield %r : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index,
       %sl: memref<8xf32>, %d: memref<?x?xi32>):
    %di = memref.load %d[%b, %i] : memref<?x?xi32>
    %dj = memref.load %d[%b, %j] : memref<?x?xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  }
  return
}

// A mask_mod alone, with no captures, on a packed (varlen) batch.
// CHECK-LABEL: func.func @prefix_lm_varlen
// CHECK: attn.attention q(%{{.*}} : memref<?x8x64xf16>) k(%{{.*}} : memref<?x8x64xf16>) v(%{{.*}} : memref<?x8x64xf16>) cu_seqlens_q(%{{.*}} : memref<?xi32>) cu_seqlens_k(%{{.*}} : memref<?xi32>) -> o(%{{.*}} : memref<?x8x64xf16>) mask_mod {
// CHECK: attn.yield %{{.*}} : i1
func.func @prefix_lm_varlen(%q: memref<?x8x64xf16>, %k: memref<?x8x64xf16>,
                            %v: memref<?x8x64xf16>, %cq: memref<?xi32>,
                            %ck: memref<?xi32>, %o: memref<?x8x64xf16>) {
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x8x64xf16>)
                 v(%v : memref<?x8x64xf16>)
                 cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
              -> o(%o : memref<?x8x64xf16>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c16 = arith.constant 16 : index
    %prefix = arith.cmpi slt, %j, %c16 : index
    %causal = arith.cmpi sle, %j, %i : index
    %r = arith.ori %prefix, %causal : i1
    attn.yield %r : i1
  }
  return
}

// The L1 ops with the regions attn-tile gives them.
// CHECK-LABEL: func.func @l1
// CHECK: attn.qk %{{.*}}, %{{.*}} scale 1.250000e-01 at [%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] q_len %{{.*}} kv_len %{{.*}} group 4 captures(%{{.*}} : memref<8xf32>) : tensor<32x64xf16>, tensor<16x64xf16> -> tensor<32x16xf32> score_mod {
// CHECK: attn.yield %{{.*}} : f32
// CHECK: attn.mask %{{.*}} rows %{{.*}} cols %{{.*}} q_len %{{.*}} kv_len %{{.*}} mask <causal> group 4 at [%{{.*}}, %{{.*}}] captures(%{{.*}} : memref<?xi32>) : tensor<32x16xf32> mask_mod {
// CHECK: attn.yield %{{.*}} : i1
func.func @l1(%qt: tensor<32x64xf16>, %kt: tensor<16x64xf16>,
              %slopes: memref<8xf32>, %doc: memref<?xi32>, %b: index,
              %h: index, %row: index, %col: index, %sq: index, %n: index)
    -> tensor<32x16xf32> {
  %s = attn.qk %qt, %kt scale 0.125 at [%b, %h, %row, %col] q_len %sq kv_len %n
      group 4 captures(%slopes : memref<8xf32>)
      : tensor<32x64xf16>, tensor<16x64xf16> -> tensor<32x16xf32> score_mod {
  ^bb0(%x: f32, %bb: index, %hh: index, %i: index, %j: index, %sl: memref<8xf32>):
    %slope = memref.load %sl[%hh] : memref<8xf32>
    %r = arith.addf %x, %slope : f32
    attn.yield %r : f32
  }
  %sm = attn.mask %s rows %row cols %col q_len %sq kv_len %n mask <causal>
      group 4 at [%b, %h] captures(%doc : memref<?xi32>) : tensor<32x16xf32>
      mask_mod {
  ^bb0(%bb: index, %hh: index, %i: index, %j: index, %d: memref<?xi32>):
    %di = memref.load %d[%i] : memref<?xi32>
    %dj = memref.load %d[%j] : memref<?xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  }
  return %sm : tensor<32x16xf32>
}

// Integer divisions whose divisors range analysis proves safe: a constant
// other than 0 and -1, and kv_idx clamped to at least 1 (kv_idx alone is
// 0 for the first key, and is refused: attention-mods-invalid.mlir).
// CHECK-LABEL: func.func @safe_divisions
// CHECK: arith.divui %{{.*}}, %{{.*}} : index
// CHECK: arith.maxsi
// CHECK: arith.divsi %{{.*}}, %{{.*}} : index
// CHECK: arith.floordivsi %{{.*}}, %{{.*}} : i64
func.func @safe_divisions(%q: memref<?x4x?x32xf32>, %k: memref<?x4x?x32xf32>,
                          %v: memref<?x4x?x32xf32>, %o: memref<?x4x?x32xf32>) {
  attn.attention q(%q : memref<?x4x?x32xf32>) k(%k : memref<?x4x?x32xf32>)
                 v(%v : memref<?x4x?x32xf32>) -> o(%o : memref<?x4x?x32xf32>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c3 = arith.constant 3 : index
    %c1 = arith.constant 1 : index
    %bi = arith.divui %i, %c3 : index
    %jj = arith.maxsi %j, %c1 : index
    %r = arith.divsi %i, %jj : index
    %m = arith.constant -7 : i64
    %w = arith.index_cast %r : index to i64
    %f = arith.floordivsi %w, %m : i64
    %z = arith.constant 0 : i64
    %e = arith.cmpi sle, %f, %z : i64
    %same = arith.cmpi eq, %bi, %r : index
    %both = arith.ori %e, %same : i1
    attn.yield %both : i1
  }
  return
}
