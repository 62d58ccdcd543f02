//===- AttentionRun.cpp - attn.attention: run and compare -----------------===//
//
// attn.attention through the CPU pipeline: fresh random inputs (and
// lengths, offsets, block tables, sinks, captures), O and the LSE compared
// with the float64 reference, every element checked written.
//
//===----------------------------------------------------------------------===//

#include "tools/attn-run/Run.h"

#include "dialect/AttnMods.h"
#include "dialect/AttnSemantics.h"
#include "tools/attn-run/ModEval.h"

#include "llvm/Support/Format.h"

#include <cmath>

namespace attn_run {

namespace {
/// The magnitude of the run's typical stored K/V value: i8 integers up to
/// 127, fp8 values up to a quarter of the format's largest (448 e4m3,
/// 57344 e5m2), so that scales near 1 / range make K/V of O(1).
double quantizedRange(Type elt) {
  if (elt.isInteger())
    return 127.0;
  return quantizedLargest(elt) / 4;
}

/// Fresh stored values of a quantized K/V buffer: i8 integers in
/// [-127, 127]; fp8 values, half of them any finite code (subnormals and
/// the largest included, so every decoding path is checked) and half in
/// (-range, range) rounded to the format.
void fillQuantized(Buffer &buf, std::mt19937_64 &rng) {
  const double range = quantizedRange(buf.elt);
  std::uniform_int_distribution<int> ints(-127, 127), codes(0, 255);
  std::uniform_real_distribution<double> reals(-range, range);
  std::bernoulli_distribution anyCode(0.5);
  std::optional<bool> e4m3 = buf.fp8E4M3();
  for (int64_t x = 0; x < buf.numElements(); ++x) {
    if (!e4m3) {
      buf.set(x, double(ints(rng)));
      continue;
    }
    double value = reals(rng);
    if (anyCode(rng)) {
      double code = ::attn::host::fromFP8(uint8_t(codes(rng)), *e4m3);
      value = std::isfinite(code) ? code : 0.0;
    }
    buf.set(x, value);
  }
}

/// A scale's granularity by its rank: none, tensor, head or token.
std::string scaleGranularity(const Buffer *scale) {
  if (!scale)
    return "none";
  return scale->shape.empty()       ? "tensor"
         : scale->shape.size() == 1 ? "head"
                                    : "token";
}

/// --quantize-from-float: fresh floats in (-1, 1), quantized into `data`
/// as an engine would: each scale absmax / largest over its elements (1
/// for none, or an all-zero group), each byte the nearest of x / scale.
/// Returns the floats, which the reference then reads.
std::vector<double> quantizeFloats(Buffer &data, Buffer *scale,
                                   std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> floats(data.numElements());
  for (double &x : floats)
    x = uniform(rng);
  const double largest = quantizedLargest(data.elt);
  if (scale) {
    std::vector<double> absMax(scale->numElements(), 0.0);
    for (size_t i = 0; i < floats.size(); ++i) {
      double &m = absMax[scaleIndex(data, scale, i)];
      m = std::max(m, std::abs(floats[i]));
    }
    for (size_t s = 0; s < absMax.size(); ++s)
      scale->set(s, absMax[s] > 0 ? absMax[s] / largest : 1.0);
  }
  for (size_t i = 0; i < floats.size(); ++i) {
    double r =
        floats[i] / (scale ? scale->get(scaleIndex(data, scale, i)) : 1.0);
    // fp8: Buffer::set rounds to the nearest (saturating); i8 here.
    data.set(i, data.elt.isInteger()
                    ? std::clamp(std::nearbyint(r), -127.0, 127.0)
                    : r);
  }
  return floats;
}

/// " kv=<type> k_scale=<granularity> v_scale=<granularity>" for the
/// run's line.
std::string quantizedLabel(const Buffer &k, const Buffer *kScale,
                           const Buffer *vScale) {
  std::string type;
  llvm::raw_string_ostream os(type);
  os << k.elt;
  return " kv=" + type + " k_scale=" + scaleGranularity(kScale) +
         " v_scale=" + scaleGranularity(vScale);
}
} // namespace

int runAttention(MLIRContext &context, ModuleOp module, func::FuncOp func,
                 mlir::attn::AttentionOp op) {
  // Each operand of the op must be an argument of the kernel. A read-only
  // argument may be two operands (the verifier keeps outputs apart): K and
  // V, or an operand and a capture; the buffer is made for its first role.
  DenseMap<unsigned, Role> roles;
  SmallVector<std::pair<unsigned, Role>> aliases;
  auto bind = [&](Value v, Role role, StringRef name) -> LogicalResult {
    if (!v)
      return success();
    FailureOr<unsigned> arg = argumentOf(func, v, name);
    if (failed(arg))
      return failure();
    auto [it, first] = roles.try_emplace(*arg, role);
    if (first)
      return success();
    if (!(it->second == Role::K && role == Role::V) && role != Role::Capture)
      return fail("argument " + Twine(*arg) + " is operand '" + name +
                  "' and another operand; attn-run checks one buffer as "
                  "two operands only for k and v, or as a capture"),
             failure();
    aliases.push_back({*arg, role});
    return success();
  };
  if (failed(bind(op.getQ(), Role::Q, "q")) ||
      failed(bind(op.getK(), Role::K, "k")) ||
      failed(bind(op.getV(), Role::V, "v")) ||
      failed(bind(op.getBlockTable(), Role::BlockTable, "block_table")) ||
      failed(bind(op.getKvLens(), Role::KVLens, "kv_lens")) ||
      failed(bind(op.getCuSeqlensQ(), Role::CuSeqlensQ, "cu_seqlens_q")) ||
      failed(bind(op.getCuSeqlensK(), Role::CuSeqlensK, "cu_seqlens_k")) ||
      failed(bind(op.getSinks(), Role::Sinks, "sinks")) ||
      failed(bind(op.getKScale(), Role::KScale, "k_scale")) ||
      failed(bind(op.getVScale(), Role::VScale, "v_scale")) ||
      failed(bind(op.getQScale(), Role::QScale, "q_scale")) ||
      failed(bind(op.getO(), Role::O, "o")) ||
      failed(bind(op.getLse(), Role::LSE, "lse")))
    return 1;
  for (auto [i, capture] : llvm::enumerate(op.getCaptures()))
    if (failed(bind(capture, Role::Capture, ("capture #" + Twine(i)).str())))
      return 1;
  if (roles.size() != func.getNumArguments())
    return fail("every argument of @" + func.getSymName() +
                " must be an operand of its attn.attention");

  // Sizes.
  auto qType = cast<MemRefType>(op.getQ().getType());
  auto kType = cast<MemRefType>(op.getK().getType());
  const bool packedQ = op.isPackedQ(), packedKV = op.isPackedKV();
  ref::Problem p;
  auto batch = packedQ ? FailureOr<int64_t>(batchOpt)
                       : resolve(qType, 0, batchOpt, "batch (--batch)");
  // Packed Q: --q-len bounds the random lengths (and max_q_len).
  auto qLen = packedQ ? FailureOr<int64_t>(qLenOpt)
                      : resolve(qType, 2, qLenOpt, "query length (--q-len)");
  if (failed(batch) || failed(qLen))
    return 1;
  if (*batch < 1 || *qLen < 1 || *batch > 4096 || *qLen > 65536)
    return fail("--batch and --q-len must be in [1, 4096] and [1, 65536]");
  p.batch = *batch;
  p.qLen = *qLen;
  if (std::optional<int64_t> maxQLen = op.getMaxQLen()) {
    p.qLen = std::min(p.qLen, *maxQLen);
    // The CPU nest walks the tiles of the promised longest sequence, as
    // the decode tier's grid does: a promise far past every generated
    // length (2^31-1 is legal) would take minutes. The tighter promise
    // holds for this run's lengths and gives the same results.
    if (*maxQLen > p.qLen) {
      op.setMaxQLenAttr(Builder(&context).getI64IntegerAttr(p.qLen));
      llvm::errs() << "attn-run: note: max_q_len " << *maxQLen
                   << " is past the longest generated sequence; the run "
                      "promises "
                   << p.qLen << " (--q-len)\n";
    }
  }
  p.qHeads = op.getNumQueryHeads();
  p.kvHeads = op.getNumKVHeads();
  p.headDim = op.getHeadDim();
  p.valueHeadDim = op.getValueHeadDim();
  setScoreTerms(p, op);

  if (op.isPaged() || packedKV) {
    if (kvLenOpt < 1 || kvLenOpt > 1 << 20)
      return fail("paged or packed K/V needs --kv-len (the longest "
                  "sequence) in [1, 2^20]");
    p.kvLen = kvLenOpt;
  } else {
    auto kvLen = resolveRows(kType, "key length (--kv-len)");
    if (failed(kvLen))
      return 1;
    p.kvLen = *kvLen;
  }
  if (op.isPaged()) {
    p.blockSize = op.getBlockSize();
    auto blocks = pagedBlocks(kType, p.batch, p.kvLen, p.blockSize);
    if (failed(blocks))
      return 1;
    std::tie(p.maxBlocks, p.numBlocks) = *blocks;
  }

  uint64_t seed = runSeed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);

  std::vector<int32_t> kvLens, blockTable, cuQ, cuK;
  if (op.getKvLens() || packedKV) {
    auto lens = lengthsFrom(kvLensOpt, "kv-lens", p.batch, 0, p.kvLen,
                            /*anyInList=*/false, rng);
    if (failed(lens))
      return 1;
    kvLens = *lens;
    if (packedKV) {
      cuK.push_back(0);
      for (int32_t len : kvLens)
        cuK.push_back(cuK.back() + len);
      p.cuSeqlensK = cuK.data();
    } else {
      p.kvLens = kvLens.data();
    }
  }
  if (packedQ) {
    auto lens = lengthsFrom(qLensOpt, "q-lens", p.batch, 0, p.qLen,
                            /*anyInList=*/false, rng);
    if (failed(lens))
      return 1;
    cuQ.push_back(0);
    for (int32_t len : *lens)
      cuQ.push_back(cuQ.back() + len);
    p.cuSeqlensQ = cuQ.data();
  }
  if (op.isPaged()) {
    blockTable = shuffledBlocks(p.numBlocks, p.batch * p.maxBlocks, rng);
    p.blockTable = blockTable.data();
  }

  // The reference's work, checked before anything is allocated: static
  // head counts and head dims are not bounded like --batch and the lengths.
  const double work = double(p.batch) * p.qHeads * p.qLen * p.kvLen *
                      double(p.headDim + p.valueHeadDim);
  if (work > maxWork)
    return fail("the run needs " + shortDouble(work) +
                " multiply-adds (B*Hq*Sq*Sk*(D+Dv)), more than --max-work=" +
                shortDouble(maxWork));

  // Buffers, in argument order.
  const int64_t B = p.batch, Hq = p.qHeads, Hkv = p.kvHeads;
  const int64_t kvRows = op.isPaged() ? p.blockSize : p.kvLen;
  const int64_t kvOuter = op.isPaged() ? p.numBlocks : B;
  // Packed operands have exactly their sequences' rows (an unwritten row
  // of O would show as poison).
  const int64_t totalQ = packedQ ? cuQ.back() : 0;
  const int64_t totalK = packedKV ? cuK.back() : 0;
  auto qShape = [&](int64_t width) -> SmallVector<int64_t> {
    if (packedQ)
      return width ? SmallVector<int64_t>{totalQ, Hq, width}
                   : SmallVector<int64_t>{totalQ, Hq};
    return width ? SmallVector<int64_t>{B, Hq, p.qLen, width}
                 : SmallVector<int64_t>{B, Hq, p.qLen};
  };
  // With `width` 0, the shape of a per-token scale (no D).
  auto kvShape = [&](int64_t width) -> SmallVector<int64_t> {
    SmallVector<int64_t> shape{kvOuter, Hkv, kvRows};
    if (packedKV)
      shape = {totalK, Hkv};
    if (width)
      shape.push_back(width);
    return shape;
  };
  Buffer *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *lse = nullptr,
         *sinks = nullptr, *kScale = nullptr, *vScale = nullptr,
         *qScale = nullptr;
  SmallVector<SmallVector<int64_t>> shapes;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    SmallVector<int64_t> &shape = shapes.emplace_back();
    switch (roles[i]) {
    case Role::Q:
      shape = qShape(p.headDim);
      break;
    case Role::K:
      shape = kvShape(p.headDim);
      break;
    case Role::V:
      shape = kvShape(p.valueHeadDim);
      break;
    case Role::BlockTable:
      shape = {B, p.maxBlocks};
      break;
    case Role::KVLens:
      shape = {B};
      break;
    case Role::CuSeqlensQ:
    case Role::CuSeqlensK:
      shape = {B + 1};
      break;
    case Role::O:
      shape = qShape(p.valueHeadDim);
      break;
    case Role::LSE:
      shape = qShape(0);
      break;
    case Role::Sinks:
      shape = {Hq};
      break;
    case Role::KScale:
    case Role::VScale: {
      // Per tensor, per K/V head, or K/V's shape without D.
      auto type = cast<MemRefType>(func.getArgument(i).getType());
      if (type.getRank() == 1)
        shape = {Hkv};
      else if (type.getRank() > 1)
        shape = kvShape(0);
      break;
    }
    case Role::QScale:
      // Per tensor, or per query head.
      if (cast<MemRefType>(func.getArgument(i).getType()).getRank() == 1)
        shape = {Hq};
      break;
    case Role::Capture: {
      auto type = cast<MemRefType>(func.getArgument(i).getType());
      int64_t dynamic =
          captureDim > 0 ? int64_t(captureDim) : std::max(p.qLen, p.kvLen);
      for (int64_t d : type.getShape())
        shape.push_back(ShapedType::isDynamic(d) ? dynamic : d);
      break;
    }
    }
  }
  SmallVector<Extent> extents;
  if (failed(measureWithinLimit(func, shapes, extents)))
    return 1;
  SmallVector<Buffer> buffers = allocateArguments(func, shapes, extents);
  for (unsigned i = 0; i < buffers.size(); ++i) {
    Buffer &buf = buffers[i];
    switch (roles[i]) {
    case Role::Q:
      q = &buf;
      if (mlir::attn::kvFormatOf(buf.elt) != mlir::attn::KVFormat::None) {
        fillQuantized(buf, rng);
        continue;
      }
      break;
    case Role::K:
    case Role::V:
      (roles[i] == Role::K ? k : v) = &buf;
      if (mlir::attn::kvFormatOf(buf.elt) != mlir::attn::KVFormat::None) {
        fillQuantized(buf, rng);
        continue;
      }
      break;
    case Role::O:
      o = &buf;
      break;
    case Role::LSE:
      lse = &buf;
      break;
    case Role::BlockTable:
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, blockTable[x]);
      continue;
    case Role::KVLens:
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, kvLens[x]);
      continue;
    case Role::Sinks: {
      // Past the scores' usual range too, so that a sink sometimes
      // dominates its row.
      std::uniform_real_distribution<double> logits(-2.0, 4.0);
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, logits(rng));
      sinks = &buf;
      continue;
    }
    case Role::KScale:
    case Role::VScale:
    case Role::QScale: {
      // Around 1 / the stored values' range, so dequantized Q, K, V are
      // O(1).
      std::uniform_real_distribution<double> spread(0.5, 1.5);
      const double range =
          quantizedRange(roles[i] == Role::QScale ? qType.getElementType()
                                                  : kType.getElementType());
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, spread(rng) / range);
      (roles[i] == Role::KScale   ? kScale
       : roles[i] == Role::VScale ? vScale
                                  : qScale) = &buf;
      continue;
    }
    case Role::Capture:
      if (buf.elt.isInteger()) {
        // Values the element type holds: [0, 2) for i1, below 2^(w-1).
        const unsigned bits = buf.elt.getIntOrFloatBitWidth();
        int64_t top = std::max<int64_t>(captureIntMax, 1);
        if (bits < 64)
          top =
              std::min<int64_t>(top, bits == 1 ? 2 : int64_t(1) << (bits - 1));
        std::uniform_int_distribution<int64_t> ints(0, top - 1);
        for (int64_t x = 0; x < buf.numElements(); ++x)
          buf.set(x, double(ints(rng)));
      } else {
        for (int64_t x = 0; x < buf.numElements(); ++x)
          buf.set(x, uniform(rng));
      }
      continue;
    case Role::CuSeqlensQ:
    case Role::CuSeqlensK: {
      const std::vector<int32_t> &offsets =
          roles[i] == Role::CuSeqlensQ ? cuQ : cuK;
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, offsets[x]);
      continue;
    }
    }
    bool output = roles[i] == Role::O || roles[i] == Role::LSE;
    for (int64_t x = 0; x < buf.numElements(); ++x)
      buf.set(x, output ? kNaN : uniform(rng)); // poison outputs
  }
  for (auto [arg, role] : aliases)
    if (role == Role::V)
      v = &buffers[arg];
  // The reference's Q, K, V: the buffers' values dequantized, or, with
  // --quantize-from-float, the floats the quantized ones came from.
  auto isQuantized = [](const Buffer *buf) {
    return mlir::attn::kvFormatOf(buf->elt) != mlir::attn::KVFormat::None;
  };
  std::vector<double> qRef, kRef, vRef;
  const bool fromFloat = quantizeFromFloat && isQuantized(k);
  if (fromFloat) {
    if (isQuantized(q))
      qRef = quantizeFloats(*q, qScale, rng);
    kRef = quantizeFloats(*k, kScale, rng);
    if (v)
      vRef = v == k ? kRef : quantizeFloats(*v, vScale, rng);
  }
  if (qRef.empty())
    qRef = dequantized(*q, qScale);
  if (kRef.empty())
    kRef = dequantized(*k, kScale);
  if (op.getVFromK()) {
    // MLA: V is each K row's first Dv columns, as dequantized.
    const int64_t d = p.headDim, dv = p.valueHeadDim;
    for (size_t row = 0; row < kRef.size() / d; ++row)
      vRef.insert(vRef.end(), kRef.begin() + row * d,
                  kRef.begin() + row * d + dv);
  }
  if (vRef.empty())
    vRef = dequantized(*v, vScale);

  // The regions, as the reference evaluates them (before the pipeline
  // replaces the op), reading the captures' contents.
  // In the op's capture order, which need not be the arguments'.
  std::vector<::attn::modeval::Capture> captures;
  for (Value capture : op.getCaptures()) {
    const Buffer &buf = buffers[cast<BlockArgument>(capture).getArgNumber()];
    captures.push_back(
        {std::vector<int64_t>(buf.shape.begin(), buf.shape.end()),
         buf.toDense()});
  }
  std::unique_ptr<::attn::modeval::Evaluator> scoreMod, maskMod;
  for (auto [region, kind, eval] :
       {std::tuple<Region *, mlir::attn::ModKind,
                   std::unique_ptr<::attn::modeval::Evaluator> *>{
            &op.getScoreMod(), mlir::attn::ModKind::Score, &scoreMod},
        {&op.getMaskMod(), mlir::attn::ModKind::Mask, &maskMod}}) {
    if (region->empty())
      continue;
    std::string error;
    *eval = ::attn::modeval::Evaluator::compile(
        *region, mlir::attn::numPositionArgs(kind), captures, error);
    if (!*eval)
      return fail(Twine(mlir::attn::modName(kind)) + ": " + error);
  }
  if (scoreMod)
    p.scoreMod = [&](double s, int64_t b, int64_t h, int64_t i, int64_t j) {
      double args[] = {s, double(b), double(h), double(i), double(j)};
      return (*scoreMod)(args);
    };
  if (maskMod)
    p.maskMod = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
      double args[] = {double(b), double(h), double(i), double(j)};
      return (*maskMod)(args) != 0;
    };
  const int64_t numCaptures = captures.size();
  // As the buffer holds them (rounded to its element type).
  std::vector<double> sinkValues;
  if (sinks) {
    sinkValues = sinks->toDense();
    p.sinks = sinkValues.data();
  }

  // The reference first: a region load outside its capture is refused
  // before the kernel makes the same load.
  std::vector<double> refO, refLse;
  // Quantized operands reach the reference dequantized in float64 (or
  // as their floats).
  ref::attention(p, qRef, kRef, vRef, refO, refLse);
  for (auto [eval, kind] : {std::pair{&scoreMod, mlir::attn::ModKind::Score},
                            std::pair{&maskMod, mlir::attn::ModKind::Mask}})
    if (*eval && !(*eval)->fault().empty())
      return fail(Twine(mlir::attn::modName(kind)) + ": " + (*eval)->fault() +
                  "; the region's loads must stay inside its captures");

  // Compile. The pipeline replaces `func` and `op`: keep what is needed.
  const std::string kernelName = func.getSymName().str();
  const bool paged = op.isPaged();
  Type elt = qType.getElementType();
  const std::string quantized =
      op.isQuantizedKV() ? quantizedLabel(*k, kScale, vScale) : "";
  const std::string quantizedQ =
      op.isQuantizedQ() ? " q_scale=" + scaleGranularity(qScale) : "";
  const bool vFromK = op.getVFromK();
  if (failed(compileAndCall(context, module, func, buffers)))
    return 1;

  if (!saveOutputs.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream out(saveOutputs, ec);
    if (ec)
      return fail("--save-outputs: " + ec.message());
    out.write(o->bytes.data(), o->bytes.size());
    if (lse)
      out.write(lse->bytes.data(), lse->bytes.size());
  }

  // Check.
  int64_t unwritten = 0;
  std::vector<double> gotO = o->toDense();
  double relErr = relativeError(gotO, refO, unwritten);
  // The largest error of an element of O, for --quantize-from-float's
  // report (O's elements are O(1)).
  double maxAbsErr = 0;
  for (size_t i = 0; i < gotO.size(); ++i)
    if (!std::isnan(gotO[i]))
      maxAbsErr = std::max(maxAbsErr, std::abs(gotO[i] - refO[i]));
  double lseErr = 0;
  int64_t emptyRows = 0, lseWrong = 0;
  if (lse) {
    std::vector<double> gotLse = lse->toDense();
    // A row that sees no key has its sink's LSE exactly in the reference
    // (one with keys has more); LSE is [B, Hq, Sq] or packed [total_q, Hq].
    auto sinkOf = [&](size_t i) {
      return sinkValues[packedQ ? i % Hq : i / p.qLen % Hq];
    };
    for (size_t i = 0; i < gotLse.size(); ++i) {
      if (std::isnan(gotLse[i])) {
        ++unwritten;
      } else if (refLse[i] == -kInf) {
        ++emptyRows;
        lseWrong += gotLse[i] != -kInf;
      } else {
        emptyRows += sinks && refLse[i] == sinkOf(i);
        // Relative to the LSE's size: at a huge scale the LSE is huge too,
        // and f32 carries it to about 7 digits, however exact O is.
        lseErr = std::max(lseErr, std::abs(gotLse[i] - refLse[i]) /
                                      std::max(1.0, std::abs(refLse[i])));
      }
    }
  }
  // O is only as precise as the narrowest of the inputs and O itself.
  // Dequantized inputs are exact in f32.
  const bool allF32 = (elt.isF32() || mlir::attn::kvFormatOf(elt) !=
                                          mlir::attn::KVFormat::None) &&
                      o->elt.isF32();
  double tol = tolerance > 0 ? double(tolerance) : allF32 ? 1e-4 : 1e-2;
  // From floats, the LSE carries the format's error too.
  const double lseTol = fromFloat ? tol : 1e-3;
  bool pass =
      relErr <= tol && unwritten == 0 && lseErr <= lseTol && lseWrong == 0;
  llvm::outs()
      << "@" << kernelName << " B=" << B << " Hq=" << Hq << " Hkv=" << Hkv
      << " Sq=" << p.qLen << " Sk=" << p.kvLen << " D=" << p.headDim
      << " Dv=" << p.valueHeadDim << " " << elt
      << (paged ? " paged bs=" + std::to_string(p.blockSize) : std::string())
      << (packedQ ? " packed_q=" + std::to_string(totalQ) : std::string())
      << (packedKV ? " packed_kv=" + std::to_string(totalK) : std::string())
      << (scoreMod ? " score_mod" : "") << (maskMod ? " mask_mod" : "")
      << (sinks ? " sinks" : "") << (vFromK ? " v_from_k" : "") << quantized
      << quantizedQ
      << (numCaptures ? " captures=" + std::to_string(numCaptures)
                      : std::string())
      << (fromFloat ? " from_float" : "") << " seed=" << seed
      << ": rel_err=" << llvm::format("%.3e", relErr) << " (tol " << tol << ")";
  if (fromFloat)
    llvm::outs() << " max_abs_err=" << llvm::format("%.3e", maxAbsErr);
  if (lse)
    llvm::outs() << " lse_err=" << llvm::format("%.3e", lseErr)
                 << " empty_rows=" << emptyRows;
  llvm::outs() << " unwritten=" << unwritten << (pass ? " PASS" : " FAIL")
               << "\n";
  return pass ? 0 : 1;
}

} // namespace attn_run
