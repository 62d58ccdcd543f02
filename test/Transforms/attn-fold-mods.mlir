// attn-fold-mods turns the regions the built-in attributes can say into
// those attributes, and leaves the others alone.
// RUN: attn-opt %s --attn-fold-mods -split-input-file | FileCheck %s

// cap * tanh(s / cap) is the soft-cap: the region goes.
// CHECK-LABEL: func.func @softcap_div
// CHECK: attn.attention {{.*}}softcap = 3.000000e+01
// CHECK-NOT: score_mod
func.func @softcap_div(%q: memref<1x4x8x16xf32>, %k: memref<1x4x8x16xf32>,
                       %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>)
                 v(%v : memref<1x4x8x16xf32>) -> o(%o : memref<1x4x8x16xf32>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 30.0 : f32
    %x = arith.divf %s, %c : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %c, %t : f32
    attn.yield %r : f32
  }
  return
}

// -----

// The product by the reciprocal says the same (within f32 rounding).
// CHECK-LABEL: func.func @softcap_mul
// CHECK: attn.attention {{.*}}softcap = 5.000000e+01
// CHECK-NOT: score_mod
func.func @softcap_mul(%q: memref<1x4x8x16xf32>, %k: memref<1x4x8x16xf32>,
                       %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>)
                 v(%v : memref<1x4x8x16xf32>) -> o(%o : memref<1x4x8x16xf32>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %inv = arith.constant 0.02 : f32
    %c = arith.constant 50.0 : f32
    %x = arith.mulf %inv, %s : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32
  }
  return
}

// -----

// A soft-cap on top of a built-in one, or a different cap inside and
// outside, stays a region.
// CHECK-LABEL: func.func @softcap_kept
// CHECK: softcap = 2.000000e+01
// CHECK: score_mod
// CHECK-LABEL: func.func @softcap_mismatch
// CHECK: score_mod
func.func @softcap_kept(%q: memref<1x4x8x16xf32>, %k: memref<1x4x8x16xf32>,
                        %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>)
                 v(%v : memref<1x4x8x16xf32>) -> o(%o : memref<1x4x8x16xf32>)
                 softcap = 20.0
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 30.0 : f32
    %x = arith.divf %s, %c : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32
  }
  return
}
func.func @softcap_mismatch(%q: memref<1x4x8x16xf32>, %k: memref<1x4x8x16xf32>,
                            %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>)
                 v(%v : memref<1x4x8x16xf32>) -> o(%o : memref<1x4x8x16xf32>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 30.0 : f32
    %c2 = arith.constant 40.0 : f32
    %x = arith.divf %s, %c : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %c2 : f32
    attn.yield %r : f32
  }
  return
}

// -----

// Causal and a 1024-key window as comparisons of q_idx - kv_idx: the
// built-in window (1023 keys back, 0 ahead), the region gone.
// CHECK-LABEL: func.func @window
// CHECK: attn.attention {{.*}}mask = <window 1023, 0>
// CHECK-NOT: mask_mod
func.func @window(%q: memref<1x4x8x16xf32>, %k: memref<1x4x8x16xf32>,
                  %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>)
                 v(%v : memref<1x4x8x16xf32>) -> o(%o : memref<1x4x8x16xf32>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 1024 : index
    %causal = arith.cmpi sle, %j, %i : index
    %back = arith.subi %i, %j : index
    %near = arith.cmpi slt, %back, %w : index
    %r = arith.andi %causal, %near : i1
    attn.yield %r : i1
  }
  return
}

// -----

// kv_idx <= q_idx alone is causal; kv_idx - 2 <= q_idx and the built-in
// causal mask intersect to causal; q_idx == kv_idx is the diagonal.
// CHECK-LABEL: func.func @causal
// CHECK: attn.attention {{.*}}mask = <causal>
// CHECK-NOT: mask_mod
// CHECK-LABEL: func.func @intersect
// CHECK: attn.attention {{.*}}mask = <causal>
// CHECK-NOT: mask_mod
// CHECK-LABEL: func.func @diagonal
// CHECK: attn.attention {{.*}}mask = <window 0, 0>
// CHECK-NOT: mask_mod
func.func @causal(%q: memref<1x4x8x16xf32>, %k: memref<1x4x8x16xf32>,
                  %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>)
                 v(%v : memref<1x4x8x16xf32>) -> o(%o : memref<1x4x8x16xf32>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %r = arith.cmpi sge, %i, %j : index
    attn.yield %r : i1
  }
  return
}
func.func @intersect(%q: memref<1x4x8x16xf32>, %k: memref<1x4x8x16xf32>,
                     %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>)
                 v(%v : memref<1x4x8x16xf32>) -> o(%o : memref<1x4x8x16xf32>)
                 mask = <causal>
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c2 = arith.constant 2 : index
    %j2 = arith.subi %j, %c2 : index
    %r = arith.cmpi sle, %j2, %i : index
    attn.yield %r : i1
  }
  return
}
func.func @diagonal(%q: memref<1x4x8x16xf32>, %k: memref<1x4x8x16xf32>,
                    %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>)
                 v(%v : memref<1x4x8x16xf32>) -> o(%o : memref<1x4x8x16xf32>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %r = arith.cmpi eq, %j, %i : index
    attn.yield %r : i1
  }
  return
}

// -----

// Document masking AND causal: the causal term narrows the built-in mask
// (tiles above the diagonal are skipped) and the region stays for the
// rest.
// CHECK-LABEL: func.func @partial
// CHECK: attn.attention {{.*}}mask = <causal>
// CHECK: mask_mod
// CHECK: arith.divui
func.func @partial(%q: memref<1x4x8x16xf32>, %k: memref<1x4x8x16xf32>,
                   %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>)
                 v(%v : memref<1x4x8x16xf32>) -> o(%o : memref<1x4x8x16xf32>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %len = arith.constant 4 : index
    %di = arith.divui %i, %len : index
    %dj = arith.divui %j, %len : index
    %same = arith.cmpi eq, %di, %dj : index
    %causal = arith.cmpi sle, %j, %i : index
    %r = arith.andi %same, %causal : i1
    attn.yield %r : i1
  }
  return
}

// -----

// Left alone: an OR (prefix-LM), an unsigned compare, a band that does
// not hold the diagonal (keys at least 2 back), and any mask_mod under a
// bottom-right aligned mask.
// CHECK-LABEL: func.func @prefix_lm
// CHECK-NOT: mask =
// CHECK: mask_mod
// CHECK-LABEL: func.func @unsigned
// CHECK-NOT: mask =
// CHECK: mask_mod
// CHECK-LABEL: func.func @off_diagonal
// CHECK-NOT: mask =
// CHECK: mask_mod
// CHECK-LABEL: func.func @bottom_right
// CHECK: attn.attention {{.*}}mask = <causal, bottom_right>
// CHECK: mask_mod
// A constant past 2^40 is not folded (no overflow in the analysis).
// CHECK-LABEL: func.func @huge
// CHECK-NOT: mask =
// CHECK: mask_mod
func.func @prefix_lm(%q: memref<1x4x8x16xf32>, %k: memref<1x4x8x16xf32>,
                     %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>)
                 v(%v : memref<1x4x8x16xf32>) -> o(%o : memref<1x4x8x16xf32>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c2 = arith.constant 2 : index
    %prefix = arith.cmpi slt, %j, %c2 : index
    %causal = arith.cmpi sle, %j, %i : index
    %r = arith.ori %prefix, %causal : i1
    attn.yield %r : i1
  }
  return
}
func.func @unsigned(%q: memref<1x4x8x16xf32>, %k: memref<1x4x8x16xf32>,
                    %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>)
                 v(%v : memref<1x4x8x16xf32>) -> o(%o : memref<1x4x8x16xf32>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %r = arith.cmpi ule, %j, %i : index
    attn.yield %r : i1
  }
  return
}
func.func @off_diagonal(%q: memref<1x4x8x16xf32>, %k: memref<1x4x8x16xf32>,
                        %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>)
                 v(%v : memref<1x4x8x16xf32>) -> o(%o : memref<1x4x8x16xf32>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %back = arith.subi %i, %j : index
    %c2 = arith.constant 2 : index
    %r = arith.cmpi sge, %back, %c2 : index
    attn.yield %r : i1
  }
  return
}
func.func @bottom_right(%q: memref<1x4x8x16xf32>, %k: memref<1x4x8x16xf32>,
                        %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>)
                 v(%v : memref<1x4x8x16xf32>) -> o(%o : memref<1x4x8x16xf32>)
                 mask = <causal, bottom_right>
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %r = arith.cmpi sle, %j, %i : index
    attn.yield %r : i1
  }
  return
}
func.func @huge(%q: memref<1x4x8x16xf32>, %k: memref<1x4x8x16xf32>,
                %v: memref<1x4x8x16xf32>, %o: memref<1x4x8x16xf32>) {
  attn.attention q(%q : memref<1x4x8x16xf32>) k(%k : memref<1x4x8x16xf32>)
                 v(%v : memref<1x4x8x16xf32>) -> o(%o : memref<1x4x8x16xf32>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %big = arith.constant -9223372036854775807 : index
    %back = arith.subi %i, %j : index
    %r = arith.cmpi sgt, %back, %big : index
    attn.yield %r : i1
  }
  return
}
