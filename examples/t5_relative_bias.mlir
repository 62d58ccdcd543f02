// T5-style bucketed relative position bias (bidirectional, 32 buckets,
// max distance 128): the key's offset r = kv_idx - q_idx falls in a bucket,
// exact for |r| < 8 and logarithmic up to 128 (16 buckets per direction),
// and the score gets table[bucket, h]. The table [32, H] is a capture.
// T5 uses no scaling of the scores: scale = 1.
func.func @t5_relative_bias(%q: memref<?x8x?x64xf32>, %k: memref<?x8x?x64xf32>,
                            %v: memref<?x8x?x64xf32>, %table: memref<32x8xf32>,
                            %o: memref<?x8x?x64xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf32>) k(%k : memref<?x8x?x64xf32>)
                 v(%v : memref<?x8x?x64xf32>)
                 captures(%table : memref<32x8xf32>)
              -> o(%o : memref<?x8x?x64xf32>)
                 scale = 1.0
                 score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index,
       %bias: memref<32x8xf32>):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c15 = arith.constant 15 : index
    %c16 = arith.constant 16 : index
    %rel = arith.subi %kv_idx, %q_idx : index
    // Keys after the query use the upper 16 buckets.
    %after = arith.cmpi sgt, %rel, %c0 : index
    %half = arith.select %after, %c16, %c0 : index
    %neg = arith.subi %c0, %rel : index
    %dist = arith.maxsi %rel, %neg : index
    // Small distances: one bucket each.
    %exact = arith.cmpi slt, %dist, %c8 : index
    // Large ones: 8 + floor(log(dist / 8) / log(128 / 8) * 8), at most 15.
    %d64 = arith.index_cast %dist : index to i64
    %df = arith.sitofp %d64 : i64 to f32
    %eight = arith.constant 8.0 : f32
    %ratio = arith.divf %df, %eight : f32
    %log = math.log %ratio : f32
    %log16 = arith.constant 2.77258872 : f32
    %frac = arith.divf %log, %log16 : f32
    %scaled = arith.mulf %frac, %eight : f32
    %si = arith.fptosi %scaled : f32 to i64
    %sx = arith.index_cast %si : i64 to index
    %large = arith.addi %c8, %sx : index
    %capped = arith.minsi %large, %c15 : index
    %bucket_in_half = arith.select %exact, %dist, %capped : index
    %bucket = arith.addi %half, %bucket_in_half : index
    %b_h = memref.load %bias[%bucket, %h] : memref<32x8xf32>
    %biased = arith.addf %score, %b_h : f32
    attn.yield %biased : f32
  }
  return
}
