// score_mod / mask_mod regions on the msl tier: each region becomes an
// inline MSL function printed by upstream EmitC (arith-to-emitc,
// func-to-emitc, attn's capture loads and Metal math calls), which the
// kernels call per score. Numerics: test/msl/mods.test.
// RUN: attn-translate --attn-to-msl %s --msl-launch-json=%t.json | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=JSON
// A soft-cap or window written as a region is folded into the attribute
// first (attn-fold-mods): no function, the built-in code.
// RUN: attn-translate --attn-to-msl %attn_src_root/examples/softcap_region.mlir | FileCheck %s --check-prefix=FOLDED
// RUN: attn-translate --attn-to-msl %attn_src_root/examples/sliding_window_mask_mod.mlir | FileCheck %s --check-prefix=FOLDED

// CHECK-LABEL: // attn.kernel documents_prefill
// CHECK-NEXT: //   grid=
// CHECK-NEXT: //   buffers: q=0 k=1 v=2 o=3 sizes=4 capture0=5 capture1=6 capture_sizes=7

// CHECK-LABEL: // documents's mod regions (attn.attention's score_mod / mask_mod after attn-fold-mods), printed through EmitC.
// CHECK-NEXT: typedef device const int32_t *attn_capture_int32_t;
// CHECK-NEXT: typedef device const float *attn_capture_float;
// The score_mod: a -inf constant is -FLT_MAX under Metal's fast math;
// math.tanh is precise::tanh.
// CHECK-NEXT: inline float documents_score_mod(float [[S:v[0-9]+]], int32_t v{{[0-9]+}}, int32_t [[H:v[0-9]+]], int32_t v{{[0-9]+}}, int32_t [[J:v[0-9]+]], attn_capture_int32_t v{{[0-9]+}}, attn_capture_float [[W:v[0-9]+]], int32_t v{{[0-9]+}}, int32_t v{{[0-9]+}}, int32_t v{{[0-9]+}}) {
// CHECK:   float {{v[0-9]+}} = -3.402823470e+38f;
// CHECK:   float [[X:v[0-9]+]] = [[W]]{{\[}}[[H]]{{\]}};
// CHECK:   float {{v[0-9]+}} = precise::tanh(
// CHECK:   return
// The mask_mod: capture0 [B, S] row-major, its dim 1 an argument.
// CHECK: inline bool documents_mask_mod(int32_t [[B:v[0-9]+]], int32_t v{{[0-9]+}}, int32_t [[I:v[0-9]+]], int32_t [[J2:v[0-9]+]], attn_capture_int32_t [[D:v[0-9]+]], attn_capture_float v{{[0-9]+}}, int32_t v{{[0-9]+}}, int32_t [[N:v[0-9]+]], int32_t v{{[0-9]+}}) {
// CHECK-NEXT:   int32_t [[R0:v[0-9]+]] = [[B]] * [[N]];
// CHECK-NEXT:   int32_t [[O0:v[0-9]+]] = [[R0]] + [[I]];
// CHECK-NEXT:   int32_t [[DI:v[0-9]+]] = [[D]]{{\[}}[[O0]]{{\]}};
// CHECK:   bool [[SAME:v[0-9]+]] = [[DI]] == {{v[0-9]+}};
// CHECK-NEXT:   return [[SAME]];

// CHECK: kernel void documents_prefill(
// CHECK:   device const int32_t *capture0 {{\[\[}}buffer(5){{\]\]}},
// CHECK-NEXT:   device const float *capture1 {{\[\[}}buffer(6){{\]\]}},
// CHECK-NEXT:   constant int *capture_sizes {{\[\[}}buffer(7){{\]\]}},
// CHECK:   const int capture0_size0 = capture_sizes[0];
// CHECK-NEXT:   const int capture0_size1 = capture_sizes[1];
// CHECK-NEXT:   const int capture1_size0 = capture_sizes[2];
// The score in natural units (scale 0.125) for the score_mod, log2(e)
// after it, the mask_mod behind the built-in test (&&: only positions
// inside the sequence reach it).
// CHECK:   const int head = kv_head * 2 + (row0 + my_row) % 2;
// CHECK:   x *= 0.125f;
// CHECK:   const bool visible = query < q_len && ((key < kv_len) && ((key - diagonal) <= 0)) && documents_mask_mod(batch, head, query, key, capture0, capture1, capture0_size0, capture0_size1, capture1_size0);
// CHECK-NEXT:   x = visible ? max(documents_score_mod(x, batch, head, query, key, capture0, capture1, capture0_size0, capture0_size1, capture1_size0) * 1.44269504f, ATTN_NO_SCORE) : ATTN_NO_SCORE;

// The vector decode calls the same way, from its own positions; its
// captures follow the partials buffer of its two-pass variant in both.
// CHECK-LABEL: inline float decode_alibi_score_mod(
// CHECK: float {{v[0-9]+}} = log(
// CHECK: kernel void decode_alibi_vector(
// CHECK:   device const float *capture0 {{\[\[}}buffer(6){{\]\]}},
// CHECK-NOT: capture_sizes
// CHECK:   const bool visible = key < key_stop && (key < {{kv_len|kv_end}});
// CHECK-NEXT: // attn.online_softmax
// CHECK-NEXT:   x = visible ? max(decode_alibi_score_mod(x, batch, head, query, key, capture0) * 1.44269504f, ATTN_NO_SCORE) : ATTN_NO_SCORE;

// JSON: "functions": [
// JSON: "name": "documents"
// JSON: "mods": {"score_mod": true, "mask_mod": true, "inlined": ["score_mod", "mask_mod"],
// JSON-NEXT: "captures": [{"buffer": 5, "dtype": "i32", "shape": [-1, -1]}, {"buffer": 6, "dtype": "f32", "shape": [-1]}],
// JSON-NEXT: "capture_sizes": {"buffer": 7, "type": "int32", "fields": "each capture's dynamic dims, in order"}},
// JSON: "buffers": {"q": 0, "k": 1, "v": 2, "o": 3, "sizes": 4, "capture0": 5, "capture1": 6, "capture_sizes": 7}
// JSON: "name": "decode_alibi"
// JSON: "mods": {"score_mod": true, "mask_mod": false, "inlined": ["score_mod"],
// JSON-NEXT: "captures": [{"buffer": 6, "dtype": "f32", "shape": [4]}]},

// What arith-to-emitc leaves, attn converts: remf as Metal's fmod,
// bitcast as as_type.
// CHECK-LABEL: inline float bits_score_mod(
// CHECK: float [[R:v[0-9]+]] = fmod(
// CHECK: int32_t [[I:v[0-9]+]] = as_type<int32_t>([[R]]);
// CHECK: float {{v[0-9]+}} = as_type<float>(

// FOLDED-NOT: _mod(
// FOLDED-NOT: mod regions

func.func @documents(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>,
                     %v: memref<?x2x?x64xf16>, %doc: memref<?x?xi32>,
                     %w: memref<?xf32>, %o: memref<?x4x?x64xf16>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>)
                 captures(%doc, %w : memref<?x?xi32>, memref<?xf32>)
              -> o(%o : memref<?x4x?x64xf16>) mask = <causal>
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %d: memref<?x?xi32>, %ww: memref<?xf32>):
    %c7 = arith.constant 7 : index
    %ninf = arith.constant 0xFF800000 : f32
    %x = memref.load %ww[%h] : memref<?xf32>
    %t = math.tanh %s : f32
    %y = arith.addf %t, %x : f32
    %far = arith.cmpi sgt, %j, %c7 : index
    %r = arith.select %far, %y, %ninf : f32
    attn.yield %r : f32
  }
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index,
       %d: memref<?x?xi32>, %ww: memref<?xf32>):
    %di = memref.load %d[%b, %i] : memref<?x?xi32>
    %dj = memref.load %d[%b, %j] : memref<?x?xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  }
  return
}

func.func @decode_alibi(%q: memref<?x4x1x64xf16>, %k: memref<?x4x?x64xf16>,
                        %v: memref<?x4x?x64xf16>, %slopes: memref<4xf32>,
                        %o: memref<?x4x1x64xf16>) {
  attn.attention q(%q : memref<?x4x1x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>) captures(%slopes : memref<4xf32>)
              -> o(%o : memref<?x4x1x64xf16>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
       %sl: memref<4xf32>):
    %slope = memref.load %sl[%h] : memref<4xf32>
    %d = arith.subi %j, %i : index
    %d64 = arith.index_cast %d : index to i64
    %df = arith.sitofp %d64 : i64 to f32
    %l = math.log %slope : f32
    %bias = arith.mulf %l, %df : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return
}

func.func @bits(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
                %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>)
              -> o(%o : memref<?x4x?x64xf16>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 3.0 : f32
    %r = arith.remf %s, %c : f32
    %bits = arith.bitcast %r : f32 to i32
    %one = arith.constant 1 : i32
    %odd = arith.ori %bits, %one : i32
    %x = arith.bitcast %odd : i32 to f32
    attn.yield %x : f32
  }
  return
}
