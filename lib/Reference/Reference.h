//===- Reference.h - float64 reference attention ----------------*- C++ -*-===//
//
// Plain loops in double precision, written from the definition of
// attn.attention and nothing else, so tests of generated kernels (CPU, GPU,
// MSL emulator) compare against an independent answer. No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_REFERENCE_REFERENCE_H
#define ATTN_LIB_REFERENCE_REFERENCE_H

#include <cstdint>
#include <functional>
#include <vector>

namespace attn::reference {

/// Which keys a query sees: i + shift - left <= j <= i + shift + right, with
/// shift = kvLen - qLen when bottom-right aligned; -1 extents are unbounded.
struct Mask {
  int64_t left = -1, right = -1;
  bool bottomRight = false;
};

struct Problem {
  int64_t batch = 1, qHeads = 1, kvHeads = 1, qLen = 1, kvLen = 1;
  int64_t headDim = 1, valueHeadDim = 1;
  double scale = 1.0;
  double softcap = 0.0; // 0: none
  Mask mask;
  /// Paged K/V: rows per block (0: contiguous [B, Hkv, kvLen, D]); the cache
  /// is [numBlocks, Hkv, blockSize, D] and blockTable is [B, maxBlocks].
  int64_t blockSize = 0, numBlocks = 0, maxBlocks = 0;
  const int32_t *blockTable = nullptr;
  /// Per-sequence K/V lengths (nullptr: every sequence has kvLen keys).
  const int32_t *kvLens = nullptr;
  /// Packed (varlen) Q, O and LSE: [B + 1] offsets; sequence b owns rows
  /// [cuSeqlensQ[b], cuSeqlensQ[b+1]) of q [total_q, Hq, D], o [total_q,
  /// Hq, Dv] and lse [total_q, Hq], total_q = cuSeqlensQ[B] (qLen unused).
  const int32_t *cuSeqlensQ = nullptr;
  /// Packed K and V [total_k, Hkv, D(v)], the same way (kvLen unused).
  const int32_t *cuSeqlensK = nullptr;
  /// Attention sinks [Hq] (nullptr: none): one logit per query head, in
  /// the scores' natural units, that joins each row's softmax denominator
  /// (and its LSE) with no value.
  const double *sinks = nullptr;
  /// attn.attention's score_mod: the logit of query i of head h and key j
  /// of sequence b (positions within the sequence), given the score
  /// cap(scale * dot) in natural units; -inf hides the key. Empty: none.
  std::function<double(double score, int64_t b, int64_t h, int64_t i,
                       int64_t j)>
      scoreMod;
  /// attn.attention's mask_mod: whether query i of head h sees key j of
  /// sequence b, on top of the mask above. Empty: every key.
  std::function<bool(int64_t b, int64_t h, int64_t i, int64_t j)> maskMod;
};

/// Dense row-major inputs: q [B, Hq, Sq, D]; k, v [B, Hkv, Sk, D(v)] or the
/// paged caches (or the packed forms). Writes o [B, Hq, Sq, Dv] and lse
/// [B, Hq, Sq] (natural log; -inf and o = 0 for a query that sees no key,
/// or lse = sinks[h] and o = 0 with sinks).
void attention(const Problem &p, const std::vector<double> &q,
               const std::vector<double> &k, const std::vector<double> &v,
               std::vector<double> &o, std::vector<double> &lse);

/// attn.cache_append's sizes: new tokens [B, Hkv, newLen, D(v)] go into a
/// contiguous cache [B, Hkv, capacity, D(v)] or, with blockSize > 0, a
/// paged one [numBlocks, Hkv, blockSize, D(v)] through blockTable
/// [B, maxBlocks].
struct AppendProblem {
  int64_t batch = 1, kvHeads = 1, newLen = 1, headDim = 1, valueHeadDim = 1;
  int64_t capacity = 1;
  int64_t blockSize = 0, numBlocks = 0, maxBlocks = 0;
  const int32_t *blockTable = nullptr;
  const int32_t *kvLens = nullptr;  // required, but in the slot form
  const int32_t *newLens = nullptr; // nullptr: newLen tokens per sequence
  /// The slot-mapping form: newLen packed tokens [newLen, Hkv, D(v)], token
  /// t to slot slotMapping[t] of a cache [numBlocks, Hkv, blockSize, D(v)]
  /// (batch, kvLens, blockTable unused); slots outside the cache skipped.
  const int32_t *slotMapping = nullptr;
};

/// Writes each sequence's new tokens into the dense row-major caches,
/// from position max(kvLens[b], 0) on; tokens past the capacity (or past
/// maxBlocks * blockSize, or in a block outside [0, numBlocks)) are
/// skipped. Returns the number of (token, head) rows written.
int64_t cacheAppend(const AppendProblem &p, const std::vector<double> &kNew,
                    const std::vector<double> &vNew,
                    std::vector<double> &kCache, std::vector<double> &vCache);

/// attn.merge_states over dense row-major parts: oParts [N, rows, Dv] and
/// lseParts [N, rows] (a row is one (token, head) pair) into o [rows, Dv]
/// and lse [rows]. A part with LSE -inf contributes nothing (its O is not
/// read); a row with no other part gets o = 0, lse = -inf.
void mergeStates(int64_t parts, int64_t rows, int64_t valueHeadDim,
                 const std::vector<double> &oParts,
                 const std::vector<double> &lseParts, std::vector<double> &o,
                 std::vector<double> &lse);

} // namespace attn::reference

#endif // ATTN_LIB_REFERENCE_REFERENCE_H
