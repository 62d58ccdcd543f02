// One case per rule of the score_mod / mask_mod regions and the captures
// of attn.attention (and of attn.qk / attn.mask, which carry the regions
// at L1); each message names the region or capture and the rule.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// A capture must hold integers or floats.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %c: memref<8xindex>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{capture #0 must be a memref of integers or floats, got 'memref<8xindex>'}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>) captures(%c : memref<8xindex>)
              -> o(%o : memref<1x4x16x64xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %x: memref<8xindex>):
    attn.yield %s : f32
  }
  return
}

// -----

// A capture must be contiguous and row-major.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %c: memref<8xf32, strided<[2]>>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{capture #0 must have the identity layout (contiguous, row-major), got 'memref<8xf32, strided<[2]>>'}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>) captures(%c : memref<8xf32, strided<[2]>>)
              -> o(%o : memref<1x4x16x64xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %x: memref<8xf32, strided<[2]>>):
    attn.yield %s : f32
  }
  return
}

// -----

// Captures are read-only: not the output.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %c: memref<8xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{capture #0 is operand 'o', which the op writes; captures are read-only}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>) captures(%o : memref<1x4x16x64xf32>)
              -> o(%o : memref<1x4x16x64xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %x: memref<1x4x16x64xf32>):
    attn.yield %s : f32
  }
  return
}

// -----

// Captures need a region that reads them.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %c: memref<8xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{has captures but no score_mod or mask_mod region to read them}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>) captures(%c : memref<8xf32>)
              -> o(%o : memref<1x4x16x64xf32>) 
  return
}

// -----

// A region is one block.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{region 'score_mod' must have one block, got 2}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>)
              -> o(%o : memref<1x4x16x64xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    cf.br ^bb1
  ^bb1:
    %z = arith.constant 0.0 : f32
    attn.yield %z : f32
  }
  return
}

// -----

// A score_mod takes (score, b, h, q_idx, kv_idx) and the captures.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{region 'score_mod' must take 5 arguments (score: f32, b, h, q_idx, kv_idx: index) and one per capture (0), got 4}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>)
              -> o(%o : memref<1x4x16x64xf32>) score_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %z = arith.constant 0.0 : f32
    attn.yield %z : f32
  }
  return
}

// -----

// A mask_mod takes (b, h, q_idx, kv_idx) and the captures.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %c: memref<8xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{region 'mask_mod' must take 4 arguments (b, h, q_idx, kv_idx: index) and one per capture (1), got 4}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>) captures(%c : memref<8xf32>)
              -> o(%o : memref<1x4x16x64xf32>) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %t = arith.constant true
    attn.yield %t : i1
  }
  return
}

// -----

// The score is f32.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{region 'score_mod' argument #0 (score) must be 'f32', got 'f16'}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>)
              -> o(%o : memref<1x4x16x64xf32>) score_mod {
  ^bb0(%s: f16, %b: index, %h: index, %i: index, %j: index):
    %z = arith.constant 0.0 : f32
    attn.yield %z : f32
  }
  return
}

// -----

// Positions are index.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{region 'mask_mod' argument #2 (q_idx) must be 'index', got 'i32'}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>)
              -> o(%o : memref<1x4x16x64xf32>) mask_mod {
  ^bb0(%b: index, %h: index, %i: i32, %j: index):
    %t = arith.constant true
    attn.yield %t : i1
  }
  return
}

// -----

// A capture argument has its capture's type.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %c: memref<8xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{region 'score_mod' argument #5 (capture #0) must be 'memref<8xf32>', got 'memref<?xf32>'}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>) captures(%c : memref<8xf32>)
              -> o(%o : memref<1x4x16x64xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %x: memref<?xf32>):
    attn.yield %s : f32
  }
  return
}

// -----

// A region ends with attn.yield.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{region 'score_mod' must end with attn.yield}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>)
              -> o(%o : memref<1x4x16x64xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    llvm.unreachable
  }
  return
}

// -----

// A score_mod yields f32.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{region 'score_mod' must yield 'f32', got 'f64'}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>)
              -> o(%o : memref<1x4x16x64xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %z = arith.constant 0.0 : f64
    attn.yield %z : f64
  }
  return
}

// -----

// A mask_mod yields i1.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{region 'mask_mod' must yield 'i1', got 'index'}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>)
              -> o(%o : memref<1x4x16x64xf32>) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    attn.yield %i : index
  }
  return
}

// -----

// Only pure arith and math ops, loads of captures and attn.yield.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %c: memref<8xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{region 'score_mod' may hold only pure arith and math ops, memref.load of a capture argument and attn.yield; got 'memref.store'}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>) captures(%c : memref<8xf32>)
              -> o(%o : memref<1x4x16x64xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %x: memref<8xf32>):
    memref.store %s, %x[%h] : memref<8xf32>
    attn.yield %s : f32
  }
  return
}

// -----

// No calls.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{region 'mask_mod' may hold only pure arith and math ops, memref.load of a capture argument and attn.yield; got 'func.call'}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>)
              -> o(%o : memref<1x4x16x64xf32>) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %r = func.call @g(%i) : (index) -> i1
    attn.yield %r : i1
  }
  return
}
func.func private @g(index) -> i1

// -----

// A load reads a capture argument, not a buffer made in the region.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{region 'score_mod' may hold only pure arith and math ops, memref.load of a capture argument and attn.yield; got 'memref.alloca'}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>)
              -> o(%o : memref<1x4x16x64xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %m = memref.alloca() : memref<4xf32>
    %x = memref.load %m[%h] : memref<4xf32>
    attn.yield %x : f32
  }
  return
}

// -----

// attn.yield ends a region of attn.attention, attn.qk or attn.mask only.
func.func @f(%x: f32) {
  // expected-error @+1 {{'attn.yield' op expects parent op to be one of 'attn.attention, attn.qk, attn.mask'}}
  attn.yield %x : f32
}

// -----

// L1: positions without a score_mod region.
func.func @f(%qt: tensor<32x64xf16>, %kt: tensor<16x64xf16>, %s: tensor<32x16xf32>,
             %c: memref<8xf32>, %b: index, %h: index, %row: index, %col: index,
             %sq: index, %n: index) {
  // expected-error @+1 {{has positions or captures but no score_mod region}}
  %r = attn.qk %qt, %kt scale 0.125 at [%b, %h, %row, %col] q_len %sq kv_len %n group 4 : tensor<32x64xf16>, tensor<16x64xf16> -> tensor<32x16xf32>
  return
}

// -----

// L1: a score_mod needs its positions.
func.func @f(%qt: tensor<32x64xf16>, %kt: tensor<16x64xf16>, %s: tensor<32x16xf32>,
             %c: memref<8xf32>, %b: index, %h: index, %row: index, %col: index,
             %sq: index, %n: index) {
  // expected-error @+1 {{region 'score_mod' needs the positions 'at [batch, kv_head, row, col] q_len .. kv_len ..' and 'group'}}
  %r = attn.qk %qt, %kt scale 0.125 : tensor<32x64xf16>, tensor<16x64xf16> -> tensor<32x16xf32> score_mod {
  ^bb0(%x: f32, %bb: index, %hh: index, %i: index, %j: index):
    attn.yield %x : f32
  }
  return
}

// -----

// L1: the group is positive.
func.func @f(%qt: tensor<32x64xf16>, %kt: tensor<16x64xf16>, %s: tensor<32x16xf32>,
             %c: memref<8xf32>, %b: index, %h: index, %row: index, %col: index,
             %sq: index, %n: index) {
  // expected-error @+1 {{attribute 'group' must be positive, got 0}}
  %r = attn.qk %qt, %kt scale 0.125 at [%b, %h, %row, %col] q_len %sq kv_len %n group 0 : tensor<32x64xf16>, tensor<16x64xf16> -> tensor<32x16xf32> score_mod {
  ^bb0(%x: f32, %bb: index, %hh: index, %i: index, %j: index):
    attn.yield %x : f32
  }
  return
}

// -----

// L1: captures without a mask_mod region.
func.func @f(%qt: tensor<32x64xf16>, %kt: tensor<16x64xf16>, %s: tensor<32x16xf32>,
             %c: memref<8xf32>, %b: index, %h: index, %row: index, %col: index,
             %sq: index, %n: index) {
  // expected-error @+1 {{has positions or captures but no mask_mod region}}
  %r = attn.mask %s rows %row cols %col q_len %sq kv_len %n mask <none> group 4 captures(%c : memref<8xf32>) : tensor<32x16xf32>
  return
}

// -----

// L1: a mask_mod needs its positions.
func.func @f(%qt: tensor<32x64xf16>, %kt: tensor<16x64xf16>, %s: tensor<32x16xf32>,
             %c: memref<8xf32>, %b: index, %h: index, %row: index, %col: index,
             %sq: index, %n: index) {
  // expected-error @+1 {{region 'mask_mod' needs the positions 'at [batch, kv_head]'}}
  %r = attn.mask %s rows %row cols %col q_len %sq kv_len %n mask <none> group 4 : tensor<32x16xf32> mask_mod {
  ^bb0(%bb: index, %hh: index, %i: index, %j: index):
    %t = arith.constant true
    attn.yield %t : i1
  }
  return
}

// -----

// L1: the region's rules hold at L1 too.
func.func @f(%qt: tensor<32x64xf16>, %kt: tensor<16x64xf16>, %s: tensor<32x16xf32>,
             %c: memref<8xf32>, %b: index, %h: index, %row: index, %col: index,
             %sq: index, %n: index) {
  // expected-error @+1 {{region 'mask_mod' must take 4 arguments (b, h, q_idx, kv_idx: index) and one per capture (1), got 4}}
  %r = attn.mask %s rows %row cols %col q_len %sq kv_len %n mask <none> group 4 at [%b, %h] captures(%c : memref<8xf32>) : tensor<32x16xf32> mask_mod {
  ^bb0(%bb: index, %hh: index, %i: index, %j: index):
    %t = arith.constant true
    attn.yield %t : i1
  }
  return
}

// -----

// The regions are isolated from above: outer values come in as captures.
func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %o: memref<1x4x16x64xf32>, %x: f32) {
  // expected-note @+1 {{required by region isolation constraints}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%v : memref<1x4x16x64xf32>)
              -> o(%o : memref<1x4x16x64xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{'arith.addf' op using value defined outside the region}}
    %r = arith.addf %s, %x : f32
    attn.yield %r : f32
  }
  return
}
