// Captures of score_mod / mask_mod regions on the NVIDIA tiers: each
// capture is a kernel parameter after the inputs (capture(N) in the launch
// contract), and the inlined region loads from that parameter.
// RUN: attn-opt %s --attn-select-tier --attn-tile --attn-to-mma=chip=sm_80 | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s "--attn-select-tier=prefill=wmma" --attn-tile --attn-to-wmma=chip=sm_80 | FileCheck %s --check-prefix=WMMA
// RUN: attn-opt %s --attn-select-tier --attn-tile --attn-to-decode=chip=sm_80 | FileCheck %s --check-prefix=DECODE
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90" | attn-translate --attn-ptx -o %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx

// ALiBi slopes [8] and document ids [B, S]: q, k, v, the two captures,
// then o (and the block mask, the workspace, block-mask.mlir).
// MMA: params = [q, k, v, capture(0), capture(1), o, workspace]
// WMMA: params = [q, k, v, capture(0), capture(1), o, workspace]
// DECODE: params = [q, k, v, block_table, kv_lens, capture(0), workspace]
// MMA-LABEL: gpu.func @alibi_documents_mma(
// MMA-SAME: %{{[^:]*}}: memref<?x8x?x64xf16>, %{{[^:]*}}: memref<?x8x?x64xf16>, %{{[^:]*}}: memref<?x8x?x64xf16>, %[[DOC:[^:]*]]: memref<?x?xi32>, %[[SL:[^:]*]]: memref<8xf32>, %{{[^:]*}}: memref<?x8x?x64xf16>, %{{[^:]*}}: memref<?x?x2x?xi32>)
// MMA: attn_nv.score_tile {{.*}} captures(%[[DOC]], %[[SL]] : memref<?x?xi32>, memref<8xf32>) {{.*}}score_mod {
// MMA: memref.load %{{.*}}[%{{.*}}] : memref<8xf32>
// MMA: attn.yield %{{.*}} : f32
// The mask_mod stays a region, on the m-tile's attn_nv.mask_tile, which
// takes the captures as operands.
// MMA: attn_nv.mask_tile {{.*}} at(%{{.*}}, %{{.*}}) captures(%[[DOC]], %[[SL]] : memref<?x?xi32>, memref<8xf32>) {{.*}}mask_mod {
// MMA: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[RDOC:.*]]: memref<?x?xi32>, %{{.*}}: memref<8xf32>):
// MMA: memref.load %[[RDOC]][%{{.*}}, %{{.*}}] : memref<?x?xi32>
// MMA: attn.yield %{{.*}} : i1
// Its expansion loads the ids at a key clamped into the sequence
// (attn-nv-to-nvvm.mlir, @mask_tile_mod).
// WMMA-LABEL: gpu.func @alibi_documents_wmma(
// WMMA-SAME: %[[DOC:[^:]*]]: memref<?x?xi32>, %[[SL:[^:]*]]: memref<8xf32>
// WMMA-DAG: memref.load %[[SL]][%{{.*}}] : memref<8xf32>
// WMMA-DAG: memref.load %[[DOC]][%{{.*}}, %{{.*}}] : memref<?x?xi32>
// PTX-LABEL: .entry alibi_documents_mma(
func.func @alibi_documents(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                           %v: memref<?x8x?x64xf16>, %doc: memref<?x?xi32>,
                           %slopes: memref<8xf32>,
                           %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
                 captures(%doc, %slopes : memref<?x?xi32>, memref<8xf32>)
              -> o(%o : memref<?x8x?x64xf16>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %d: memref<?x?xi32>, %sl: memref<8xf32>):
    %slope = memref.load %sl[%h] : memref<8xf32>
    %r = arith.addf %s, %slope : f32
    attn.yield %r : f32
  }
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index,
       %d: memref<?x?xi32>, %sl: memref<8xf32>):
    %di = memref.load %d[%b, %i] : memref<?x?xi32>
    %dj = memref.load %d[%b, %j] : memref<?x?xi32>
    %r = arith.cmpi eq, %di, %dj : i32
    attn.yield %r : i1
  }
  return
}

// The decode tier (a one-query GQA spec; its contract is checked above,
// the host functions come first): the split kernel takes the capture
// after kv_lens, before the workspace.
// DECODE-LABEL: gpu.func @paged_documents_decode_split(
// DECODE-SAME: %{{[^:]*}}: memref<?xi32>, %[[D:[^:]*]]: memref<?xi32>, %{{[^:]*}}: memref<?x?x66xf32>)
// DECODE: memref.load %[[D]][%{{.*}}] : memref<?xi32>
// PTX-LABEL: .entry paged_documents_decode_split(
func.func @paged_documents(%q: memref<?x8x1x64xf16>, %k: memref<?x2x16x64xf16>,
                           %v: memref<?x2x16x64xf16>, %table: memref<?x?xi32>,
                           %lens: memref<?xi32>, %doc: memref<?xi32>,
                           %o: memref<?x8x1x64xf16>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x16x64xf16>)
                 v(%v : memref<?x2x16x64xf16>)
                 block_table(%table : memref<?x?xi32>)
                 kv_lens(%lens : memref<?xi32>)
                 captures(%doc : memref<?xi32>)
              -> o(%o : memref<?x8x1x64xf16>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: memref<?xi32>):
    %dj = memref.load %d[%j] : memref<?xi32>
    %zero = arith.constant 0 : i32
    %r = arith.cmpi sge, %dj, %zero : i32
    attn.yield %r : i1
  }
  return
}

// A T5-style table read at a bucket the region clamps itself: integer
// range analysis proves [0, 127] inside the static dimension, so the key
// and query reach the load unguarded (no position-0 select).
// MMA-LABEL: gpu.func @t5_mma(
// MMA: %[[BUCKET:.*]] = arith.minsi %{{.*}}, %c127{{.*}} : index
// MMA-NOT: arith.select
// MMA: memref.load %{{.*}}[%[[BUCKET]], %{{.*}}] : memref<128x8xf32>
func.func @t5(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
              %v: memref<?x8x?x64xf16>, %table: memref<128x8xf32>,
              %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
                 captures(%table : memref<128x8xf32>)
              -> o(%o : memref<?x8x?x64xf16>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %t: memref<128x8xf32>):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c127 = arith.constant 127 : index
    %d = arith.subi %j, %i : index
    %r0 = arith.addi %d, %c64 : index
    %r1 = arith.maxsi %r0, %c0 : index
    %bucket = arith.minsi %r1, %c127 : index
    %bias = memref.load %t[%bucket, %h] : memref<128x8xf32>
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return
}
