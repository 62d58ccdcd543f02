//===- AppendRun.cpp - attn.cache_append: run and check -------------------===//
//
// attn.cache_append through the CPU pipeline: fresh caches and new tokens,
// every cache element checked against what the append must leave (and,
// where the kernel also attends over the caches, O against the reference).
//
//===----------------------------------------------------------------------===//

#include "tools/attn-run/Run.h"

#include "tools/attn-run/ModEval.h"

#include "llvm/Support/Format.h"

#include <cmath>

namespace attn_run {

//===----------------------------------------------------------------------===//
// attn.cache_append: run, and check every cache element
//===----------------------------------------------------------------------===//

namespace {
/// The value nearest `r` that `elt` stores (ties to even), saturating.
double nearestStored(double r, Type elt) {
  if (elt.isInteger())
    return std::clamp(std::nearbyint(r), -127.0, 127.0);
  bool e4m3 = isa<Float8E4M3FNType>(elt);
  return ::attn::host::fromFP8(::attn::host::toFP8(r, e4m3), e4m3);
}

/// Turns the reference's copied values `want` (x where a row was written,
/// `before` elsewhere) into the values a quantizing append leaves: the
/// stored value nearest x / scale, where the element's scale is the
/// tensor's, its head's, or its row's as the kernel wrote it. A written
/// per-token scale must be absmax(row) / largest (to 1e-6), and an
/// unwritten one must keep its value (`scaleBefore`); returns the scales
/// that are not.
/// The kernel's byte is accepted when it is as near x / scale as the
/// nearest one up to f32 rounding of the quotient (a tie either way).
int64_t checkQuantized(std::vector<double> &want,
                       const std::vector<double> &before,
                       const std::vector<double> &got, const Buffer *scale,
                       const std::vector<double> &scaleBefore, int64_t width,
                       int64_t heads, int64_t rows, Type elt) {
  auto same = [](double x, double y) {
    return (std::isnan(x) && std::isnan(y)) || x == y;
  };
  const bool perToken = scale && scale->shape.size() > 1;
  const double largest = quantizedLargest(elt);
  int64_t scalesWrong = 0;
  for (size_t row = 0; row < want.size() / width; ++row) {
    const size_t first = row * width;
    bool written = false;
    double absMax = 0;
    for (int64_t x = 0; x < width; ++x) {
      written |= !same(want[first + x], before[first + x]);
      absMax = std::max(absMax, std::abs(want[first + x]));
    }
    double s = 1.0;
    if (scale && !perToken)
      s = scale->get(scale->shape.empty() ? 0 : row / rows % heads);
    if (perToken) {
      s = scale->get(row);
      double wantScale = absMax / largest;
      if (!written) {
        scalesWrong += !same(s, scaleBefore[row]);
        continue;
      }
      scalesWrong += !(std::abs(s - wantScale) <= 1e-6 * wantScale);
    }
    if (!written)
      continue;
    for (int64_t x = 0; x < width; ++x) {
      const double r = s > 0 ? want[first + x] / s : 0.0;
      const double nearest = nearestStored(r, elt);
      const double kernel = got[first + x];
      // The kernel's quotient is f32: within 2^-23 |r| of r.
      const double slack = std::ldexp(std::abs(r), -22);
      want[first + x] = std::abs(kernel - r) <= std::abs(nearest - r) + slack
                            ? kernel
                            : nearest;
    }
  }
  return scalesWrong;
}

/// " tensor", "head" or "token" (written), or "none".
std::string scaleLabel(const Buffer *scale, bool written) {
  if (!scale)
    return "none";
  if (written)
    return "token";
  return scale->shape.empty() ? "tensor" : "head";
}
} // namespace

enum class AppendRole {
  KNew,
  VNew,
  BlockTable,
  KVLens,
  NewLens,
  SlotMapping,
  KCache,
  KScale,
  VScale,
  VCache, // the append
  Q,
  O,
  LSE,
  AttnLens // an attention over the appended caches
};

int runAppend(MLIRContext &context, ModuleOp module, func::FuncOp func,
              mlir::attn::CacheAppendOp op) {
  mlir::attn::AttentionOp attention;
  func.walk([&](mlir::attn::AttentionOp a) {
    attention = attention ? attention : a;
  });
  DenseMap<unsigned, AppendRole> roles;
  auto bind = [&](Value v, AppendRole role, StringRef name) -> LogicalResult {
    if (!v)
      return success();
    FailureOr<unsigned> arg = argumentOf(func, v, name);
    if (failed(arg))
      return failure();
    auto [it, inserted] = roles.try_emplace(*arg, role);
    if (!inserted && it->second != role)
      return fail("argument " + Twine(*arg) + " of @" + func.getSymName() +
                  " is operand '" + name + "' and another operand"),
             failure();
    return success();
  };
  if (failed(bind(op.getKNew(), AppendRole::KNew, "k_new")) ||
      failed(bind(op.getVNew(), AppendRole::VNew, "v_new")) ||
      failed(bind(op.getBlockTable(), AppendRole::BlockTable, "block_table")) ||
      failed(bind(op.getKvLens(), AppendRole::KVLens, "kv_lens")) ||
      failed(bind(op.getNewLens(), AppendRole::NewLens, "new_lens")) ||
      failed(
          bind(op.getSlotMapping(), AppendRole::SlotMapping, "slot_mapping")) ||
      failed(bind(op.getKCache(), AppendRole::KCache, "k_cache")) ||
      failed(bind(op.getVCache(), AppendRole::VCache, "v_cache")) ||
      failed(bind(op.getKScale(), AppendRole::KScale, "k_scale")) ||
      failed(bind(op.getVScale(), AppendRole::VScale, "v_scale")))
    return 1;
  const bool quantized = op.isQuantized();
  const bool kScaleWritten = op.writesScale(op.getKScale()),
             vScaleWritten = op.writesScale(op.getVScale());
  if (attention) {
    if (attention.getK() != op.getKCache() ||
        attention.getV() != op.getVCache() ||
        attention.getBlockTable() != op.getBlockTable() ||
        !attention.getKvLens() || attention.getKvLens() == op.getKvLens() ||
        attention.getKScale() != op.getKScale() ||
        attention.getVScale() != op.getVScale())
      return fail("an attn.attention after attn.cache_append must read its "
                  "caches (block table and scales) and take its own "
                  "kv_lens, the lengths after the append");
    if (failed(bind(attention.getQ(), AppendRole::Q, "q")) ||
        failed(bind(attention.getO(), AppendRole::O, "o")) ||
        failed(bind(attention.getLse(), AppendRole::LSE, "lse")) ||
        failed(bind(attention.getKvLens(), AppendRole::AttnLens,
                    "kv_lens (attention)")))
      return 1;
  }
  if (roles.size() != func.getNumArguments())
    return fail("every argument of @" + func.getSymName() +
                " must be an operand of its attn.cache_append (or "
                "attn.attention)");

  // Sizes. The slot-mapping form: --new-len packed tokens into a cache of
  // --batch blocks of --kv-len rows (where dynamic).
  auto knType = cast<MemRefType>(op.getKNew().getType());
  auto kcType = cast<MemRefType>(op.getKCache().getType());
  ref::AppendProblem p;
  const bool slotted = op.isSlotMapped();
  if (slotted && attention)
    return fail("an attn.attention after a slot-mapping append is not "
                "supported by attn-run (it has no kv_lens to extend)");
  auto batch = resolve(slotted ? kcType : knType, 0, batchOpt,
                       slotted ? "cache blocks (--batch)" : "batch (--batch)");
  auto newLen = resolve(knType, slotted ? 0 : 2, newLenOpt,
                        slotted ? "packed token count (--new-len)"
                                : "new token count (--new-len)");
  if (failed(batch) || failed(newLen))
    return 1;
  if (*batch < 1 || *newLen < 1 || *batch > 4096 || *newLen > 65536)
    return fail("--batch and --new-len must be in [1, 4096] and [1, 65536]");
  p.batch = *batch;
  p.newLen = *newLen;
  p.kvHeads = op.getNumKVHeads();
  p.headDim = op.getHeadDim();
  p.valueHeadDim = op.getValueHeadDim();
  const bool paged = op.isPaged();
  if (slotted) {
    auto rows = resolveRows(kcType, "rows per block (--kv-len)");
    if (failed(rows))
      return 1;
    p.blockSize = *rows;
    p.numBlocks = p.batch;
    p.capacity = *rows;
    if (p.newLen > p.numBlocks * p.blockSize)
      return fail("--new-len packed tokens need as many slots; the cache "
                  "has --batch x --kv-len");
  } else if (paged) {
    if (kvLenOpt < 1 || kvLenOpt > 1 << 20)
      return fail("a paged cache needs --kv-len (the tokens a sequence's "
                  "block table can name) in [1, 2^20]");
    p.blockSize = op.getBlockSize();
    auto blocks = pagedBlocks(kcType, p.batch, kvLenOpt, p.blockSize);
    if (failed(blocks))
      return 1;
    std::tie(p.maxBlocks, p.numBlocks) = *blocks;
    p.capacity = p.maxBlocks * p.blockSize;
  } else {
    auto capacity = resolveRows(kcType, "cache capacity (--kv-len)");
    if (failed(capacity))
      return 1;
    p.capacity = *capacity;
  }

  uint64_t seed = runSeed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);

  // New counts first: with an attention, the old lengths leave room.
  std::vector<int32_t> newLens, kvLens, attnLens, blockTable, slots;
  if (slotted) {
    // Distinct slots, shuffled; --invalid-blocks of them name no slot (-1,
    // vLLM's padding) or one past the cache.
    std::vector<int32_t> all(p.numBlocks * p.blockSize);
    for (size_t i = 0; i < all.size(); ++i)
      all[i] = int32_t(i);
    std::shuffle(all.begin(), all.end(), rng);
    slots.assign(all.begin(), all.begin() + p.newLen);
    for (int64_t t = 0; t < std::min<int64_t>(invalidBlocks, p.newLen); ++t)
      slots[t] = t % 2 ? int32_t(p.numBlocks * p.blockSize + t) : -1;
    p.slotMapping = slots.data();
  }
  if (op.getNewLens()) {
    auto lens = lengthsFrom(newLensOpt, "new-lens", p.batch, 0, p.newLen,
                            /*anyInList=*/!attention, rng);
    if (failed(lens))
      return 1;
    newLens = *lens;
    p.newLens = newLens.data();
  }
  auto count = [&](int64_t b) -> int64_t {
    return p.newLens ? std::clamp<int64_t>(p.newLens[b], 0, p.newLen)
                     : p.newLen;
  };
  int64_t most = p.newLen;
  if (attention) {
    most = 0;
    for (int64_t b = 0; b < p.batch; ++b)
      most = std::max(most, count(b));
    if (most > p.capacity)
      return fail("an attention after the append needs the new tokens to "
                  "fit: S_new is larger than the capacity (--kv-len)");
  }
  if (!slotted) {
    auto lens = lengthsFrom(kvLensOpt, "kv-lens", p.batch, 0,
                            attention ? p.capacity - most : p.capacity,
                            /*anyInList=*/!attention, rng);
    if (failed(lens))
      return 1;
    kvLens = *lens;
    p.kvLens = kvLens.data();
  }
  if (attention) {
    for (int64_t b = 0; b < p.batch; ++b) {
      if (kvLens[b] + count(b) > p.capacity)
        return fail("with an attention after the append, kv_lens + new "
                    "tokens must fit the capacity");
      attnLens.push_back(kvLens[b] + count(b));
    }
  }
  if (paged) {
    blockTable = shuffledBlocks(p.numBlocks, p.batch * p.maxBlocks, rng);
    if (attention && invalidBlocks > 0)
      return fail("--invalid-blocks is for an append alone (an attention "
                  "would read the missing blocks)");
    for (int64_t b = 0; b < std::min<int64_t>(invalidBlocks, p.batch); ++b)
      blockTable[(b + 1) * p.maxBlocks - 1] =
          b % 2 ? int32_t(p.numBlocks + 7) : -1;
    p.blockTable = blockTable.data();
  }

  // Attention sizes, for a kernel that reads the caches after the append.
  ref::Problem ap;
  if (attention) {
    auto qType = cast<MemRefType>(attention.getQ().getType());
    auto qLen = resolve(qType, 2, qLenOpt, "query length (--q-len)");
    if (failed(qLen))
      return 1;
    if (*qLen < 1 || *qLen > 65536)
      return fail("--q-len must be in [1, 65536]");
    ap.batch = p.batch;
    ap.qLen = *qLen;
    ap.qHeads = attention.getNumQueryHeads();
    ap.kvHeads = p.kvHeads;
    ap.headDim = p.headDim;
    ap.valueHeadDim = p.valueHeadDim;
    ap.kvLen = p.capacity;
    setScoreTerms(ap, attention);
    ap.kvLens = attnLens.data();
  }

  // Buffers, in argument order.
  const int64_t B = p.batch, Hkv = p.kvHeads;
  const int64_t outer = paged || slotted ? p.numBlocks : B;
  const int64_t rows = paged || slotted ? p.blockSize : p.capacity;
  SmallVector<SmallVector<int64_t>> shapes;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    SmallVector<int64_t> &shape = shapes.emplace_back();
    switch (roles[i]) {
    case AppendRole::KNew:
      shape = slotted ? SmallVector<int64_t>{p.newLen, Hkv, p.headDim}
                      : SmallVector<int64_t>{B, Hkv, p.newLen, p.headDim};
      break;
    case AppendRole::VNew:
      shape = slotted ? SmallVector<int64_t>{p.newLen, Hkv, p.valueHeadDim}
                      : SmallVector<int64_t>{B, Hkv, p.newLen, p.valueHeadDim};
      break;
    case AppendRole::SlotMapping:
      shape = {p.newLen};
      break;
    case AppendRole::BlockTable:
      shape = {B, p.maxBlocks};
      break;
    case AppendRole::KVLens:
    case AppendRole::NewLens:
    case AppendRole::AttnLens:
      shape = {B};
      break;
    case AppendRole::KCache:
      shape = {outer, Hkv, rows, p.headDim};
      break;
    case AppendRole::VCache:
      shape = {outer, Hkv, rows, p.valueHeadDim};
      break;
    case AppendRole::KScale:
    case AppendRole::VScale: {
      // Per tensor, per K/V head, or the cache's shape without D.
      int64_t rank = cast<MemRefType>(func.getArgument(i).getType()).getRank();
      if (rank == 1)
        shape = {Hkv};
      else if (rank > 1)
        shape = {outer, Hkv, rows};
      break;
    }
    case AppendRole::Q:
      shape = {B, ap.qHeads, ap.qLen, p.headDim};
      break;
    case AppendRole::O:
      shape = {B, ap.qHeads, ap.qLen, p.valueHeadDim};
      break;
    case AppendRole::LSE:
      shape = {B, ap.qHeads, ap.qLen};
      break;
    }
  }
  SmallVector<Extent> extents;
  if (failed(measureWithinLimit(func, shapes, extents)))
    return 1;
  if (attention) {
    const double work = double(B) * ap.qHeads * ap.qLen * ap.kvLen *
                        double(ap.headDim + ap.valueHeadDim);
    if (work > maxWork)
      return fail(
          "the attention needs " + shortDouble(work) +
          " multiply-adds, more than --max-work=" + shortDouble(maxWork));
  }
  SmallVector<Buffer> buffers = allocateArguments(func, shapes, extents);
  Buffer *kNew = nullptr, *vNew = nullptr, *kCache = nullptr, *vCache = nullptr,
         *q = nullptr, *o = nullptr, *lse = nullptr, *kScale = nullptr,
         *vScale = nullptr;
  const Type cacheElt = kcType.getElementType();
  const double largest = quantizedLargest(cacheElt);
  // A poisoned quantized element: NaN's byte for fp8; -128 for i8, which
  // the append never writes (it clamps to [-127, 127]).
  const double cachePoison = cacheElt.isInteger() ? -128.0 : kNaN;
  for (unsigned i = 0; i < buffers.size(); ++i) {
    Buffer &buf = buffers[i];
    const std::vector<int32_t> *ints = nullptr;
    bool poison = false;
    switch (roles[i]) {
    case AppendRole::KNew:
      kNew = &buf;
      break;
    case AppendRole::VNew:
      vNew = &buf;
      break;
    case AppendRole::Q:
      q = &buf;
      break;
    // Without an attention the caches are poison, so a stray write shows;
    // with one they hold old tokens, which it must read.
    case AppendRole::KCache:
      kCache = &buf;
      poison = !attention;
      break;
    case AppendRole::VCache:
      vCache = &buf;
      poison = !attention;
      break;
    case AppendRole::KScale:
    case AppendRole::VScale: {
      (roles[i] == AppendRole::KScale ? kScale : vScale) = &buf;
      // Near 1 / largest, so that some new values saturate. Per-token
      // scales are written: poisoned, unless an attention reads the old
      // rows' too.
      const bool written =
          roles[i] == AppendRole::KScale ? kScaleWritten : vScaleWritten;
      std::uniform_real_distribution<double> spread(0.5, 1.5);
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, written && !attention ? kNaN : spread(rng) / largest);
      continue;
    }
    case AppendRole::O:
      o = &buf;
      poison = true;
      break;
    case AppendRole::LSE:
      lse = &buf;
      poison = true;
      break;
    case AppendRole::BlockTable:
      ints = &blockTable;
      break;
    case AppendRole::KVLens:
      ints = &kvLens;
      break;
    case AppendRole::SlotMapping:
      ints = &slots;
      break;
    case AppendRole::NewLens:
      ints = &newLens;
      break;
    case AppendRole::AttnLens:
      ints = &attnLens;
      break;
    }
    const bool quantizedCache = quantized && (roles[i] == AppendRole::KCache ||
                                              roles[i] == AppendRole::VCache);
    const double poisonValue = quantizedCache ? cachePoison : kNaN;
    // Old rows of an i8 cache: integers in [-127, 127] (fp8 ones round
    // to the format as they are set).
    const bool intRows = quantizedCache && !poison && cacheElt.isInteger();
    for (int64_t x = 0; x < buf.numElements(); ++x) {
      double value = ints     ? double((*ints)[x])
                     : poison ? poisonValue
                              : uniform(rng);
      buf.set(x, intRows ? std::nearbyint(value * 127) : value);
    }
  }
  std::vector<double> kScaleBefore, vScaleBefore;
  if (kScale)
    kScaleBefore = kScale->toDense();
  if (vScale)
    vScaleBefore = vScale->toDense();
  // What the caches hold before the kernel runs.
  std::vector<double> kBefore = kCache->toDense(), vBefore = vCache->toDense();

  // Compile and run.
  const std::string kernelName = func.getSymName().str();
  Type elt = knType.getElementType();
  if (failed(compileAndCall(context, module, func, buffers)))
    return 1;

  // The caches, element by element: a copy is exact.
  std::vector<double> kWant = kBefore, vWant = vBefore;
  int64_t rowsWritten =
      ref::cacheAppend(p, kNew->toDense(), vNew->toDense(), kWant, vWant);
  int64_t wrong = 0, clobbered = 0, written = 0;
  auto same = [](double x, double y) {
    return (std::isnan(x) && std::isnan(y)) || x == y;
  };
  int64_t scalesWrong = 0;
  for (auto [got, want, before, scale, width] :
       {std::tuple<std::vector<double>, std::vector<double> *,
                   const std::vector<double> *, Buffer *, int64_t>{
            kCache->toDense(), &kWant, &kBefore, kScale, p.headDim},
        {vCache->toDense(), &vWant, &vBefore, vScale, p.valueHeadDim}}) {
    // A quantized element: the byte nearest x / its scale (QuantRules).
    if (quantized)
      scalesWrong +=
          checkQuantized(*want, *before, got, scale,
                         scale == kScale ? kScaleBefore : vScaleBefore, width,
                         Hkv, rows, cacheElt);
    for (size_t i = 0; i < got.size(); ++i) {
      bool isNew = !same((*want)[i], (*before)[i]);
      written += isNew;
      if (!same(got[i], (*want)[i]))
        ++(isNew ? wrong : clobbered);
    }
  }
  bool pass = wrong == 0 && clobbered == 0 && scalesWrong == 0;
  llvm::outs() << "@" << kernelName << " append "
               << (slotted ? "T=" + std::to_string(p.newLen) +
                                 " slots=" + std::to_string(p.numBlocks) + "x" +
                                 std::to_string(p.blockSize)
                           : "B=" + std::to_string(B) +
                                 " S_new=" + std::to_string(p.newLen))
               << " Hkv=" << Hkv << " D=" << p.headDim
               << " Dv=" << p.valueHeadDim << " " << elt
               << (slotted ? ""
                   : paged ? " paged bs=" + std::to_string(p.blockSize) +
                                 " max_blocks=" + std::to_string(p.maxBlocks)
                           : " capacity=" + std::to_string(p.capacity))
               << " seed=" << seed << ": rows_written=" << rowsWritten
               << " elements_written=" << written << " wrong=" << wrong
               << " clobbered=" << clobbered;
  if (quantized)
    llvm::outs() << " cache=" << cacheElt
                 << " k_scale=" << scaleLabel(kScale, kScaleWritten)
                 << " v_scale=" << scaleLabel(vScale, vScaleWritten)
                 << " scales_wrong=" << scalesWrong;

  if (attention) {
    // The reference attention over the old rows, then the new ones, as one
    // contiguous K/V: nothing of the append's reference is reused. A
    // quantized cache's new rows are what the append stored (checked
    // above), read back dequantized by the scales it wrote: the attention
    // must find them, and their scales, where the append put them.
    const int64_t L = p.capacity, d = p.headDim, dv = p.valueHeadDim;
    std::vector<double> kFull(B * Hkv * L * d, 0.0),
        vFull(B * Hkv * L * dv, 0.0);
    std::vector<double> kn = kNew->toDense(), vn = vNew->toDense();
    if (quantized) {
      kBefore = dequantized(*kCache, kScale);
      vBefore = dequantized(*vCache, vScale);
    }
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hkv; ++h)
        for (int64_t j = 0; j < attnLens[b]; ++j) {
          const std::vector<double> *ks = &kBefore, *vs = &vBefore;
          int64_t krow, vrow;
          if (j < kvLens[b] || quantized) {
            int64_t slot = b, r = j;
            if (paged) {
              slot = blockTable[b * p.maxBlocks + j / p.blockSize];
              r = j % p.blockSize;
            }
            krow = vrow = (slot * Hkv + h) * rows + r;
          } else {
            ks = &kn;
            vs = &vn;
            krow = vrow = (b * Hkv + h) * p.newLen + (j - kvLens[b]);
          }
          const int64_t dst = (b * Hkv + h) * L + j;
          for (int64_t x = 0; x < d; ++x)
            kFull[dst * d + x] = (*ks)[krow * d + x];
          for (int64_t x = 0; x < dv; ++x)
            vFull[dst * dv + x] = (*vs)[vrow * dv + x];
        }
    std::vector<double> refO, refLse;
    ref::attention(ap, q->toDense(), kFull, vFull, refO, refLse);
    int64_t unwritten = 0;
    double relErr = relativeError(o->toDense(), refO, unwritten);
    double lseErr = 0;
    if (lse) {
      std::vector<double> gotLse = lse->toDense();
      for (size_t i = 0; i < gotLse.size(); ++i) {
        if (std::isnan(gotLse[i]))
          ++unwritten;
        else if (refLse[i] == -kInf)
          lseErr = std::max(lseErr, gotLse[i] == -kInf ? 0.0 : kInf);
        else
          lseErr = std::max(lseErr, std::abs(gotLse[i] - refLse[i]) /
                                        std::max(1.0, std::abs(refLse[i])));
      }
    }
    double tol = tolerance > 0 ? double(tolerance) : elt.isF32() ? 1e-4 : 1e-2;
    pass = pass && relErr <= tol && unwritten == 0 && lseErr <= 1e-3;
    llvm::outs() << "; attention Hq=" << ap.qHeads << " Sq=" << ap.qLen
                 << " rel_err=" << llvm::format("%.3e", relErr) << " (tol "
                 << tol << ")";
    if (lse)
      llvm::outs() << " lse_err=" << llvm::format("%.3e", lseErr);
    llvm::outs() << " unwritten=" << unwritten;
  }
  llvm::outs() << (pass ? " PASS" : " FAIL") << "\n";
  return pass ? 0 : 1;
}

} // namespace attn_run
