//===- CascadeRun.cpp - cascade attention from attn's own kernels ---------===//
//
// Cascade (shared-prefix) attention composed from three CPU kernels, as
// attn.cascade composes them on GPUs, and checked against float64
// attention over each request's whole sequence:
//
//   1. the prefix level: every request's queries, stacked into one
//      sequence, over the shared prefix's pages; the prefix is cut into
//      --prefix-chunks chunks of whole pages, each a sequence of its own
//      with the same queries (so one group fills a GPU there);
//   2. the suffix level: each request's queries over its own pages
//      (causal, bottom-right, when that kernel is);
//   3. attn.merge_states over the chunk parts and the suffix part.
//
// Both levels read one paged cache: the prefix's pages and every suffix's
// pages are shuffled through it. Suffixes may be empty (their part is
// LSE -inf), and a run with --prefix-len=0 has only empty prefix parts.
// The levels' O and LSE and the merge's outputs are NaN-poisoned first.
//
//   attn-run spec.mlir --cascade=prefix,suffix,merge --batch=B
//            --prefix-len=P --kv-len=S --q-len=Q [--prefix-chunks=C]
//
// Suffix lengths are random in [0, S] and query counts in [1, Q] (at most
// the suffix length + 1 when causal, so that every query sees the whole
// prefix, as cascade requires).
//
//===----------------------------------------------------------------------===//

#include "tools/attn-run/Run.h"

#include "lib/Transforms/CheckKernels.h"

#include "llvm/Support/Format.h"

#include <cmath>
#include <numeric>

namespace attn_run {

namespace {

/// One attention level's kernel: its arguments by role, and its sizes.
struct Level {
  func::FuncOp func;
  mlir::attn::AttentionOp op;
  DenseMap<unsigned, Role> roles;
  SmallVector<Buffer> buffers;

  Buffer &buffer(Role role) {
    for (auto [arg, r] : roles)
      if (r == role)
        return buffers[arg];
    llvm_unreachable("every role was bound");
  }
};

/// The function `name` of `module` and the one op of kind `OpT` in it.
template <typename OpT>
FailureOr<std::pair<func::FuncOp, OpT>>
kernelNamed(ModuleOp module, StringRef name, StringRef what) {
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (!func)
    return fail("--cascade: no func.func @" + name + " (the " + what + ")"),
           failure();
  if (failed(mlir::attn::checkKernelFunction(func)))
    return failure();
  OpT op;
  func.walk([&](OpT o) { op = op ? op : o; });
  if (!op)
    return fail("--cascade: @" + name + " (the " + what + ") holds no " +
                OpT::getOperationName()),
           failure();
  return std::pair(func, op);
}

/// Binds a level's operands to its arguments: a paged attention over
/// packed queries with kv_lens and an LSE, and nothing else.
LogicalResult bindLevel(Level &level, StringRef what) {
  mlir::attn::AttentionOp op = level.op;
  const std::string name = "@" + level.func.getSymName().str();
  if (!op.isPaged() || !op.isPackedQ() || !op.getKvLens() || !op.getLse())
    return fail("--cascade: the " + what + " " + name +
                " must be a paged attention over packed queries "
                "(cu_seqlens_q) with kv_lens and an lse output"),
           failure();
  if (op.getSinks() || !op.getCaptures().empty() || !op.getScoreMod().empty() ||
      !op.getMaskMod().empty() || op.getVFromK())
    return fail("--cascade: the " + what + " " + name +
                " has sinks, captures, a region or v_from_k; attn-run's "
                "cascade covers plain levels"),
           failure();
  auto bind = [&](Value v, Role role, StringRef operand) -> LogicalResult {
    FailureOr<unsigned> arg = argumentOf(level.func, v, operand);
    if (failed(arg))
      return failure();
    if (!level.roles.try_emplace(*arg, role).second)
      return fail("--cascade: argument " + Twine(*arg) + " of " + name +
                  " is two operands; the cascade run gives each its own "
                  "buffer"),
             failure();
    return success();
  };
  if (failed(bind(op.getQ(), Role::Q, "q")) ||
      failed(bind(op.getK(), Role::K, "k")) ||
      failed(bind(op.getV(), Role::V, "v")) ||
      failed(bind(op.getBlockTable(), Role::BlockTable, "block_table")) ||
      failed(bind(op.getKvLens(), Role::KVLens, "kv_lens")) ||
      failed(bind(op.getCuSeqlensQ(), Role::CuSeqlensQ, "cu_seqlens_q")) ||
      failed(bind(op.getO(), Role::O, "o")) ||
      failed(bind(op.getLse(), Role::LSE, "lse")))
    return failure();
  if (level.roles.size() != level.func.getNumArguments())
    return fail("every argument of " + name +
                " must be an operand of its attn.attention"),
           failure();
  return success();
}

/// One level's lengths: `seqs` sequences of `rows` query rows in all,
/// `tables` block-table rows of `maxBlocks` entries.
struct LevelSizes {
  std::vector<int32_t> cuQ, kvLens, table;
  int64_t maxBlocks = 1;
};

/// Allocates a level's buffers, fills its integer operands, poisons O
/// and the LSE. Q, K and V are filled by the caller.
LogicalResult allocateLevel(Level &level, const LevelSizes &sizes,
                            int64_t numBlocks) {
  mlir::attn::AttentionOp op = level.op;
  const int64_t seqs = sizes.kvLens.size(), rows = sizes.cuQ.back();
  const int64_t Hq = op.getNumQueryHeads(), Hkv = op.getNumKVHeads();
  const int64_t bs = op.getBlockSize();
  SmallVector<SmallVector<int64_t>> shapes;
  for (unsigned i = 0; i < level.func.getNumArguments(); ++i) {
    switch (level.roles[i]) {
    case Role::Q:
      shapes.push_back({rows, Hq, op.getHeadDim()});
      break;
    case Role::K:
      shapes.push_back({numBlocks, Hkv, bs, op.getHeadDim()});
      break;
    case Role::V:
      shapes.push_back({numBlocks, Hkv, bs, op.getValueHeadDim()});
      break;
    case Role::BlockTable:
      shapes.push_back({seqs, sizes.maxBlocks});
      break;
    case Role::KVLens:
      shapes.push_back({seqs});
      break;
    case Role::CuSeqlensQ:
      shapes.push_back({seqs + 1});
      break;
    case Role::O:
      shapes.push_back({rows, Hq, op.getValueHeadDim()});
      break;
    case Role::LSE:
      shapes.push_back({rows, Hq});
      break;
    default:
      llvm_unreachable("bindLevel binds no other role");
    }
  }
  SmallVector<Extent> extents;
  if (failed(measureWithinLimit(level.func, shapes, extents)))
    return failure();
  level.buffers = allocateArguments(level.func, shapes, extents);
  auto fill = [](Buffer &buf, ArrayRef<int32_t> values) {
    for (int64_t x = 0; x < buf.numElements(); ++x)
      buf.set(x, values[x]);
  };
  fill(level.buffer(Role::CuSeqlensQ), sizes.cuQ);
  fill(level.buffer(Role::KVLens), sizes.kvLens);
  fill(level.buffer(Role::BlockTable), sizes.table);
  for (Role out : {Role::O, Role::LSE}) {
    Buffer &buf = level.buffer(out);
    for (int64_t x = 0; x < buf.numElements(); ++x)
      buf.set(x, kNaN);
  }
  return success();
}

/// Runs `name` of a copy of `module` (the CPU pipeline lowers a whole
/// module, and the other kernels are still needed) on `buffers`.
LogicalResult callKernel(MLIRContext &context, ModuleOp module, StringRef name,
                         MutableArrayRef<Buffer> buffers) {
  OwningOpRef<ModuleOp> copy = module.clone();
  for (auto f : llvm::make_early_inc_range(copy->getOps<func::FuncOp>()))
    if (f.getSymName() != name)
      f.erase();
  return compileAndCall(context, *copy, copy->lookupSymbol<func::FuncOp>(name),
                        buffers);
}

} // namespace

int runCascade(MLIRContext &context, ModuleOp module,
               ArrayRef<std::string> names) {
  if (names.size() != 3)
    return fail("--cascade takes three kernels: prefix,suffix,merge");
  Level prefix, suffix;
  auto prefixKernel =
      kernelNamed<mlir::attn::AttentionOp>(module, names[0], "prefix level");
  auto suffixKernel =
      kernelNamed<mlir::attn::AttentionOp>(module, names[1], "suffix level");
  auto mergeKernel =
      kernelNamed<mlir::attn::MergeStatesOp>(module, names[2], "merge");
  if (failed(prefixKernel) || failed(suffixKernel) || failed(mergeKernel))
    return 1;
  std::tie(prefix.func, prefix.op) = *prefixKernel;
  std::tie(suffix.func, suffix.op) = *suffixKernel;
  auto [mergeFunc, merge] = *mergeKernel;
  if (failed(bindLevel(prefix, "prefix level")) ||
      failed(bindLevel(suffix, "suffix level")))
    return 1;

  // The levels must read one cache with one problem's terms.
  mlir::attn::AttentionOp pre = prefix.op, suf = suffix.op;
  ref::Problem p, prefixTerms;
  setScoreTerms(p, suf);
  setScoreTerms(prefixTerms, pre);
  auto typeOf = [](Value v) { return cast<MemRefType>(v.getType()); };
  if (typeOf(pre.getQ()).getElementType() !=
          typeOf(suf.getQ()).getElementType() ||
      typeOf(pre.getK()) != typeOf(suf.getK()) ||
      typeOf(pre.getV()) != typeOf(suf.getV()) ||
      pre.getNumQueryHeads() != suf.getNumQueryHeads() ||
      prefixTerms.scale != p.scale || prefixTerms.softcap != p.softcap)
    return fail("--cascade: the prefix and suffix levels must take one Q "
                "element type, one K and V cache type, one head count, "
                "scale and softcap");
  if (prefixTerms.mask.left != -1 || prefixTerms.mask.right != -1)
    return fail("--cascade: the prefix level must be unmasked: every query "
                "sees the whole prefix");
  if (p.mask.left != -1 ||
      (p.mask.right != -1 && !(p.mask.right == 0 && p.mask.bottomRight)))
    return fail("--cascade: the suffix level may be unmasked or causal "
                "(bottom-right), nothing else; a window would reach into "
                "the prefix");
  const bool causal = p.mask.right == 0;
  const int64_t Hq = suf.getNumQueryHeads(), Hkv = suf.getNumKVHeads(),
                D = suf.getHeadDim(), Dv = suf.getValueHeadDim(),
                bs = suf.getBlockSize();
  if (merge.getNumHeads() != Hq || merge.getValueHeadDim() != Dv)
    return fail("--cascade: the merge's heads and Dv must be the levels'");

  const int64_t B = batchOpt, P = prefixLen, S = kvLenOpt, Q = qLenOpt,
                C = prefixChunks;
  if (B < 1 || B > 256 || P < 0 || P > 1 << 16 || S < 0 || S > 1 << 16 ||
      Q < 1 || Q > 256 || C < 1 || C > 64)
    return fail("--cascade needs --batch in [1, 256], --prefix-len and "
                "--kv-len in [0, 2^16], --q-len in [1, 256] and "
                "--prefix-chunks in [1, 64]");

  uint64_t seed = runSeed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);

  // Each request's suffix and query count.
  auto suffixLens = lengthsFrom(kvLensOpt, "kv-lens", B, 0, S,
                                /*anyInList=*/false, rng);
  if (failed(suffixLens))
    return 1;
  std::vector<int32_t> qLens(B);
  for (int64_t b = 0; b < B; ++b) {
    int64_t hi = causal ? std::min<int64_t>(Q, (*suffixLens)[b] + 1) : Q;
    qLens[b] = std::uniform_int_distribution<int64_t>(1, hi)(rng);
  }
  auto pages = [&](int64_t tokens) { return (tokens + bs - 1) / bs; };
  const int64_t prefixPages = pages(P);
  // Chunks of whole pages; the last ones may be short or empty.
  const int64_t chunkPages = std::max<int64_t>(1, (prefixPages + C - 1) / C);
  int64_t usedPages = prefixPages;
  for (int32_t s : *suffixLens)
    usedPages += pages(s);
  const int64_t numBlocks = usedPages + 3;
  if (usedPages == 0)
    return fail("--cascade: the run has no key at all; give --prefix-len "
                "or --kv-len");
  std::vector<int32_t> order = shuffledBlocks(numBlocks, usedPages, rng);
  std::vector<int32_t> prefixBlocks(order.begin(), order.begin() + prefixPages);

  LevelSizes prefixSizes, suffixSizes;
  const int64_t T = std::accumulate(qLens.begin(), qLens.end(), int64_t(0));
  prefixSizes.maxBlocks = chunkPages;
  for (int64_t c = 0; c < C; ++c) {
    prefixSizes.cuQ.push_back(c * T);
    int64_t lo = std::min(P, c * chunkPages * bs);
    int64_t hi = std::min(P, (c + 1) * chunkPages * bs);
    prefixSizes.kvLens.push_back(hi - lo);
    for (int64_t j = 0; j < chunkPages; ++j) {
      int64_t page = c * chunkPages + j;
      // Entries past a sequence's pages are valid blocks the kernel must
      // not read.
      prefixSizes.table.push_back(
          order[page < prefixPages ? page : page % usedPages]);
    }
  }
  prefixSizes.cuQ.push_back(C * T);
  suffixSizes.maxBlocks = std::max<int64_t>(1, pages(S));
  std::vector<std::vector<int32_t>> suffixBlocks(B);
  int64_t next = prefixPages;
  suffixSizes.cuQ.push_back(0);
  for (int64_t b = 0; b < B; ++b) {
    suffixSizes.cuQ.push_back(suffixSizes.cuQ.back() + qLens[b]);
    suffixSizes.kvLens.push_back((*suffixLens)[b]);
    for (int64_t j = 0; j < suffixSizes.maxBlocks; ++j) {
      bool used = j < pages((*suffixLens)[b]);
      int32_t block = used ? order[next++] : order[(b + j) % usedPages];
      suffixSizes.table.push_back(block);
      if (used)
        suffixBlocks[b].push_back(block);
    }
  }
  if (pre.getMaxQLen() && int64_t(*pre.getMaxQLen()) < T)
    return fail("--cascade: the prefix level's max_q_len is below its " +
                Twine(T) + " stacked queries");

  const double work = double(T) * Hq * (P + S) * double(D + Dv);
  if (work > maxWork)
    return fail("the run needs " + shortDouble(work) +
                " multiply-adds, more than --max-work=" + shortDouble(maxWork));

  if (failed(allocateLevel(prefix, prefixSizes, numBlocks)) ||
      failed(allocateLevel(suffix, suffixSizes, numBlocks)))
    return 1;
  // One cache and one Q for both levels: the prefix level's Q is the
  // suffix level's, once per chunk.
  for (Role role : {Role::K, Role::V, Role::Q}) {
    Buffer &s = suffix.buffer(role), &pbuf = prefix.buffer(role);
    for (int64_t x = 0; x < s.numElements(); ++x)
      s.set(x, uniform(rng));
    for (int64_t x = 0; x < pbuf.numElements(); ++x)
      pbuf.set(x, s.get(x % s.numElements()));
  }
  std::vector<double> q = suffix.buffer(Role::Q).toDense(),
                      kCache = suffix.buffer(Role::K).toDense(),
                      vCache = suffix.buffer(Role::V).toDense();

  // The reference: each request's whole sequence, prefix then suffix,
  // packed from the cache.
  std::vector<int32_t> cuK{0};
  std::vector<double> kPacked, vPacked;
  auto gather = [&](const std::vector<double> &cache, int64_t width,
                    int32_t block, int64_t row, std::vector<double> &out) {
    for (int64_t h = 0; h < Hkv; ++h)
      for (int64_t x = 0; x < width; ++x)
        out.push_back(cache[((block * Hkv + h) * bs + row) * width + x]);
  };
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t j = 0; j < P; ++j) {
      gather(kCache, D, prefixBlocks[j / bs], j % bs, kPacked);
      gather(vCache, Dv, prefixBlocks[j / bs], j % bs, vPacked);
    }
    for (int64_t j = 0; j < (*suffixLens)[b]; ++j) {
      gather(kCache, D, suffixBlocks[b][j / bs], j % bs, kPacked);
      gather(vCache, Dv, suffixBlocks[b][j / bs], j % bs, vPacked);
    }
    cuK.push_back(cuK.back() + P + (*suffixLens)[b]);
  }
  p.batch = B;
  p.qHeads = Hq;
  p.kvHeads = Hkv;
  p.headDim = D;
  p.valueHeadDim = Dv;
  p.qLen = Q;
  p.kvLen = P + S;
  p.cuSeqlensQ = suffixSizes.cuQ.data();
  p.cuSeqlensK = cuK.data();
  std::vector<double> refO, refLse;
  ref::attention(p, q, kPacked, vPacked, refO, refLse);

  // The levels.
  const std::string prefixName = names[0], suffixName = names[1];
  if (failed(callKernel(context, module, prefixName, prefix.buffers)) ||
      failed(callKernel(context, module, suffixName, suffix.buffers)))
    return 1;

  // The merge: parts [C + 1, T, Hq, Dv], the prefix chunks then the suffix.
  const int64_t N = C + 1;
  FailureOr<SmallVector<MergeRole>> mergeArgs = mergeRoles(mergeFunc, merge);
  if (failed(mergeArgs))
    return 1;
  SmallVector<SmallVector<int64_t>> shapes;
  for (MergeRole role : *mergeArgs)
    shapes.push_back(mergeShape(merge, role, N, T));
  SmallVector<Extent> extents;
  if (failed(measureWithinLimit(mergeFunc, shapes, extents)))
    return 1;
  SmallVector<Buffer> mergeBuffers =
      allocateArguments(mergeFunc, shapes, extents);
  Buffer *o = nullptr, *lse = nullptr;
  const int64_t rowsO = T * Hq * Dv, rowsL = T * Hq;
  std::vector<double> prefixO = prefix.buffer(Role::O).toDense(),
                      prefixL = prefix.buffer(Role::LSE).toDense(),
                      suffixO = suffix.buffer(Role::O).toDense(),
                      suffixL = suffix.buffer(Role::LSE).toDense();
  int64_t levelUnwritten = 0, emptyParts = 0;
  for (double x : llvm::concat<double>(prefixO, prefixL, suffixO, suffixL))
    levelUnwritten += std::isnan(x);
  for (double x : llvm::concat<double>(prefixL, suffixL))
    emptyParts += x == -kInf;
  for (unsigned i = 0; i < mergeBuffers.size(); ++i) {
    Buffer &buf = mergeBuffers[i];
    switch ((*mergeArgs)[i]) {
    case MergeRole::OParts:
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, x < C * rowsO ? prefixO[x] : suffixO[x - C * rowsO]);
      break;
    case MergeRole::LseParts:
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, x < C * rowsL ? prefixL[x] : suffixL[x - C * rowsL]);
      break;
    case MergeRole::O:
    case MergeRole::Lse:
      ((*mergeArgs)[i] == MergeRole::O ? o : lse) = &buf;
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, kNaN);
      break;
    }
  }
  const std::string mergeName = names[2];
  if (failed(callKernel(context, module, mergeName, mergeBuffers)))
    return 1;

  int64_t unwritten = 0;
  double relErr = relativeError(o->toDense(), refO, unwritten);
  double lseErr = 0;
  if (lse) {
    std::vector<double> gotLse = lse->toDense();
    for (size_t r = 0; r < gotLse.size(); ++r) {
      if (std::isnan(gotLse[r]))
        ++unwritten;
      else if (refLse[r] == -kInf || gotLse[r] == -kInf)
        lseErr = std::max(lseErr, gotLse[r] == refLse[r] ? 0.0 : kInf);
      else
        lseErr = std::max(lseErr, std::abs(gotLse[r] - refLse[r]) /
                                      std::max(1.0, std::abs(refLse[r])));
    }
  }
  // The levels' O is rounded to its element type before the merge.
  auto isF32 = [&](Value v) { return typeOf(v).getElementType().isF32(); };
  const bool allF32 = isF32(suf.getQ()) && isF32(suf.getK()) &&
                      isF32(suf.getO()) && isF32(merge.getOParts()) &&
                      isF32(merge.getO());
  const double tol = tolerance > 0 ? double(tolerance) : allF32 ? 1e-4 : 1e-2;
  const bool pass =
      relErr <= tol && lseErr <= 1e-3 && unwritten == 0 && levelUnwritten == 0;
  llvm::outs() << "cascade @" << prefixName << " + @" << suffixName << " -> @"
               << mergeName << " B=" << B << " Hq=" << Hq << " Hkv=" << Hkv
               << " D=" << D << " Dv=" << Dv << " bs=" << bs << " prefix=" << P
               << " chunks=" << C << " rows=" << T << (causal ? " causal" : "")
               << " seed=" << seed << ": empty_parts=" << emptyParts
               << " rel_err=" << llvm::format("%.3e", relErr) << " (tol " << tol
               << ")";
  if (lse)
    llvm::outs() << " lse_err=" << llvm::format("%.3e", lseErr);
  llvm::outs() << " unwritten=" << unwritten + levelUnwritten
               << (pass ? " PASS" : " FAIL") << "\n";
  return pass ? 0 : 1;
}

} // namespace attn_run
