//===- Reference.cpp - float64 reference attention -----------------------===//

#include "lib/Reference/Reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn::reference {

void attention(const Problem &p, const std::vector<double> &q,
               const std::vector<double> &k, const std::vector<double> &v,
               std::vector<double> &o, std::vector<double> &lse) {
  const int64_t d = p.headDim, dv = p.valueHeadDim;
  const int64_t group = p.qHeads / p.kvHeads;
  const int64_t qRows =
      p.cuSeqlensQ ? p.cuSeqlensQ[p.batch] : p.batch * p.qLen;
  o.assign(qRows * p.qHeads * dv, 0.0);
  lse.assign(qRows * p.qHeads, -std::numeric_limits<double>::infinity());
  std::vector<double> scores;
  for (int64_t b = 0; b < p.batch; ++b) {
    // kv_lens may shorten a contiguous sequence, never lengthen it; a paged
    // sequence is as long as kv_lens says; a packed one as its offsets say.
    int64_t len = p.kvLen;
    if (p.kvLens) {
      len = std::max<int64_t>(p.kvLens[b], 0);
      if (!p.blockSize)
        len = std::min(len, p.kvLen);
    }
    if (p.cuSeqlensK)
      len = std::max<int64_t>(p.cuSeqlensK[b + 1] - p.cuSeqlensK[b], 0);
    const int64_t qLen =
        p.cuSeqlensQ
            ? std::max<int64_t>(p.cuSeqlensQ[b + 1] - p.cuSeqlensQ[b], 0)
            : p.qLen;
    // Index of (head h, query i) in Q's rows (and O's, LSE's).
    auto qRow = [&](int64_t h, int64_t i) -> int64_t {
      if (p.cuSeqlensQ)
        return (p.cuSeqlensQ[b] + i) * p.qHeads + h;
      return (b * p.qHeads + h) * p.qLen + i;
    };
    // Offset of K/V row j of head h in the (possibly paged) cache.
    auto row = [&](int64_t h, int64_t j, int64_t width) -> int64_t {
      if (p.cuSeqlensK)
        return ((p.cuSeqlensK[b] + j) * p.kvHeads + h) * width;
      if (!p.blockSize)
        return ((b * p.kvHeads + h) * p.kvLen + j) * width;
      int64_t block = p.blockTable[b * p.maxBlocks + j / p.blockSize];
      return ((block * p.kvHeads + h) * p.blockSize + j % p.blockSize) * width;
    };
    const int64_t shift = p.mask.bottomRight ? len - qLen : 0;
    for (int64_t h = 0; h < p.qHeads; ++h) {
      const int64_t hk = h / group;
      for (int64_t i = 0; i < qLen; ++i) {
        const double *qi = &q[qRow(h, i) * d];
        scores.assign(len, -std::numeric_limits<double>::infinity());
        double best = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < len; ++j) {
          int64_t rel = j - (i + shift);
          if ((p.mask.left >= 0 && rel < -p.mask.left) ||
              (p.mask.right >= 0 && rel > p.mask.right))
            continue;
          if (p.maskMod && !p.maskMod(b, h, i, j))
            continue;
          const double *kj = &k[row(hk, j, d)];
          double dot = 0;
          for (int64_t x = 0; x < d; ++x)
            dot += qi[x] * kj[x];
          double s = dot * p.scale;
          if (p.softcap > 0)
            s = p.softcap * std::tanh(s / p.softcap);
          if (p.scoreMod)
            s = p.scoreMod(s, b, h, i, j);
          scores[j] = s;
          best = std::max(best, s);
        }
        // The sink is one more logit in the denominator, with no value.
        const double sink =
            p.sinks ? p.sinks[h] : -std::numeric_limits<double>::infinity();
        best = std::max(best, sink);
        if (best == -std::numeric_limits<double>::infinity())
          continue; // sees no key and no sink: o = 0, lse = -inf
        double sum = p.sinks ? std::exp(sink - best) : 0.0;
        double *oi = &o[qRow(h, i) * dv];
        for (int64_t j = 0; j < len; ++j) {
          if (scores[j] == -std::numeric_limits<double>::infinity())
            continue;
          double w = std::exp(scores[j] - best);
          sum += w;
          const double *vj = &v[row(hk, j, dv)];
          for (int64_t x = 0; x < dv; ++x)
            oi[x] += w * vj[x];
        }
        for (int64_t x = 0; x < dv; ++x)
          oi[x] /= sum;
        lse[qRow(h, i)] = best + std::log(sum);
      }
    }
  }
}

int64_t cacheAppend(const AppendProblem &p, const std::vector<double> &kNew,
                    const std::vector<double> &vNew,
                    std::vector<double> &kCache,
                    std::vector<double> &vCache) {
  const int64_t d = p.headDim, dv = p.valueHeadDim;
  const int64_t rows = p.blockSize ? p.blockSize : p.capacity;
  const int64_t limit = p.blockSize ? p.maxBlocks * p.blockSize : p.capacity;
  int64_t written = 0;
  // One head's row of a new token (row `src` of k_new viewed as [*, D])
  // into one cache row.
  auto copyRow = [&](int64_t src, int64_t dst) {
    for (int64_t x = 0; x < d; ++x)
      kCache[dst * d + x] = kNew[src * d + x];
    for (int64_t x = 0; x < dv; ++x)
      vCache[dst * dv + x] = vNew[src * dv + x];
    ++written;
  };
  if (p.slotMapping) {
    for (int64_t t = 0; t < p.newLen; ++t) {
      const int64_t slot = p.slotMapping[t];
      if (slot < 0 || slot >= p.numBlocks * p.blockSize)
        continue;
      const int64_t block = slot / p.blockSize, row = slot % p.blockSize;
      for (int64_t h = 0; h < p.kvHeads; ++h)
        copyRow(t * p.kvHeads + h, (block * p.kvHeads + h) * p.blockSize + row);
    }
    return written;
  }
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t start = std::max<int64_t>(p.kvLens[b], 0);
    const int64_t n =
        p.newLens ? std::clamp<int64_t>(p.newLens[b], 0, p.newLen) : p.newLen;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t pos = start + t;
      if (pos >= limit)
        break;
      int64_t slot = b, row = pos;
      if (p.blockSize) {
        slot = p.blockTable[b * p.maxBlocks + pos / p.blockSize];
        row = pos % p.blockSize;
        if (slot < 0 || slot >= p.numBlocks)
          continue;
      }
      for (int64_t h = 0; h < p.kvHeads; ++h)
        copyRow((b * p.kvHeads + h) * p.newLen + t,
                (slot * p.kvHeads + h) * rows + row);
    }
  }
  return written;
}

void mergeStates(int64_t parts, int64_t rows, int64_t valueHeadDim,
                 const std::vector<double> &oParts,
                 const std::vector<double> &lseParts, std::vector<double> &o,
                 std::vector<double> &lse) {
  const double negInf = -std::numeric_limits<double>::infinity();
  o.assign(rows * valueHeadDim, 0.0);
  lse.assign(rows, negInf);
  for (int64_t r = 0; r < rows; ++r) {
    double m = negInf;
    for (int64_t n = 0; n < parts; ++n)
      m = std::max(m, lseParts[n * rows + r]);
    if (m == negInf)
      continue; // every part empty: o = 0, lse = -inf
    double sum = 0.0;
    for (int64_t n = 0; n < parts; ++n) {
      const double l = lseParts[n * rows + r];
      if (l == negInf)
        continue;
      const double w = std::exp(l - m);
      sum += w;
      for (int64_t x = 0; x < valueHeadDim; ++x)
        o[r * valueHeadDim + x] +=
            w * oParts[(n * rows + r) * valueHeadDim + x];
    }
    for (int64_t x = 0; x < valueHeadDim; ++x)
      o[r * valueHeadDim + x] /= sum;
    lse[r] = m + std::log(sum);
  }
}

} // namespace attn::reference
