//===- KernelCommon.cpp - shared pieces of the NVIDIA tiers ---------------===//

#include "codegen/nvptx/KernelCommon.h"

#include "codegen/nvptx/LaunchContract.h"

#include "dialect/AttnMods.h"

#include "lib/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

FailureOr<L1Nest> nvptx::matchNest(scf::ForallOp forall, StringRef pass) {
  FailureOr<L1Nest> nest = matchL1Nest(forall, pass);
  if (succeeded(nest) && nest->splitForall)
    return forall.emitError()
               << pass
               << ": attn-split-kv output is lowered by the CPU and Metal "
                  "pipelines; the NVIDIA decode tier splits K/V itself",
           failure();
  return nest;
}

SmallVector<std::pair<func::FuncOp, scf::ForallOp>>
nvptx::findNests(ModuleOp module) {
  SmallVector<std::pair<func::FuncOp, scf::ForallOp>> nests;
  module.walk([&](func::FuncOp func) {
    func.walk([&](scf::ForallOp forall) {
      if (!forall->getParentOfType<scf::ForallOp>() &&
          !forall.getBody()->getOps<LoadQOp>().empty())
        nests.push_back({func, forall});
    });
  });
  return nests;
}

gpu::GPUModuleOp nvptx::getKernelModule(ModuleOp module) {
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(module.getContext()));
  if (auto kernels = module.lookupSymbol<gpu::GPUModuleOp>("attn_kernels"))
    return kernels;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  return gpu::GPUModuleOp::create(builder, module.getLoc(), "attn_kernels");
}

void nvptx::tidyKernels(gpu::GPUModuleOp kernels) {
  // Constants only: merging other ops here too reorders what canonicalize
  // and cse leave later, and so the PTX (tried: 73 of 1,120 snapshot files
  // changed, paged and append kernels).
  DominanceInfo dominance(kernels);
  DenseMap<std::pair<Attribute, Type>, SmallVector<Operation *, 2>> seen;
  SmallVector<Operation *> repeated;
  kernels.walk<WalkOrder::PreOrder>([&](arith::ConstantOp c) {
    auto &earlier = seen[{c.getValue(), c.getType()}];
    // Not across an isolated region (attn_nv.mask_tile's mask_mod): its
    // body may use only its own values.
    Operation *scope = c->getParentWithTrait<OpTrait::IsIsolatedFromAbove>();
    for (Operation *first : earlier)
      if (first->getParentWithTrait<OpTrait::IsIsolatedFromAbove>() ==
              scope &&
          dominance.properlyDominates(first->getResult(0), c)) {
        c.getResult().replaceAllUsesWith(first->getResult(0));
        repeated.push_back(c);
        return;
      }
    earlier.push_back(c);
  });
  for (Operation *op : repeated)
    op->erase();
}

void nvptx::replaceWithLaunch(Operation *op, ImplicitLocOpBuilder &hb,
                              gpu::GPUFuncOp kernel, gpu::KernelDim3 grid,
                              int64_t threads, ValueRange operands,
                              LaunchAttr contract) {
  Value blockX = arith::ConstantIndexOp::create(hb, threads);
  Value one = arith::ConstantIndexOp::create(hb, 1);
  gpu::KernelDim3 block{blockX, one, one};
  Value smem = arith::ConstantOp::create(hb, hb.getI32IntegerAttr(0));
  auto launch =
      gpu::LaunchFuncOp::create(hb, kernel, grid, block, smem, operands);
  setLaunchContract(launch, contract);
  op->erase();
}

gpu::GPUFuncOp nvptx::createKernel(gpu::GPUModuleOp module, Location loc,
                                   StringRef name, TypeRange args,
                                   int64_t threads) {
  MLIRContext *ctx = module.getContext();
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto kernel = gpu::GPUFuncOp::create(builder, loc, name,
                                       FunctionType::get(ctx, args, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  kernel.setKnownBlockSizeAttr(
      DenseI32ArrayAttr::get(ctx, {int32_t(threads), 1, 1}));
  SymbolTable(module).insert(kernel);
  return kernel;
}

Value KernelEmitter::f32(double v) { return f32Constant(*b, v); }

Value KernelEmitter::i32(int64_t v) {
  return arith::ConstantOp::create(*b, b->getI32IntegerAttr(v));
}

Value KernelEmitter::exp2(Value x) { return fastExp2(*b, x); }

Value KernelEmitter::opaqueIndex(Value index) {
  Value i32 = arith::IndexCastOp::create(*b, b->getI32Type(), index);
  auto mov = LLVM::InlineAsmOp::create(
      *b, b->getI32Type(), ValueRange{i32}, b->getStringAttr("mov.b32 $0, $1;"),
      b->getStringAttr("=r,r"), /*has_side_effects=*/b->getUnitAttr(),
      /*is_align_stack=*/nullptr, LLVM::TailCallKindAttr{},
      LLVM::AsmDialectAttr{}, ArrayAttr{});
  return arith::IndexCastOp::create(*b, b->getIndexType(), mov.getResult(0));
}

Value nvptx::tanhApprox(ImplicitLocOpBuilder &b, Value x) {
  // LLVM 22 has no NVVM intrinsic for it: inline PTX, without side
  // effects so that LLVM may move and merge it.
  return LLVM::InlineAsmOp::create(
             b, b.getF32Type(), ValueRange{x},
             b.getStringAttr("tanh.approx.f32 $0, $1;"),
             b.getStringAttr("=f,f"), /*has_side_effects=*/nullptr,
             /*is_align_stack=*/nullptr, LLVM::TailCallKindAttr{},
             LLVM::AsmDialectAttr{}, ArrayAttr{})
      .getResult(0);
}

Value nvptx::transformDot(ImplicitLocOpBuilder &b, ScoreTransform score,
                          Value dot, double unit) {
  if (score.softcap) {
    Value factor = f32Constant(b, score.tanhInputFactor());
    Value s = tanhApprox(b, arith::MulFOp::create(b, dot, factor));
    Value cap = f32Constant(b, *score.softcap * unit);
    return arith::MulFOp::create(b, s, cap);
  }
  Value factor = f32Constant(b, score.scale * unit);
  return arith::MulFOp::create(b, dot, factor);
}

Value KernelEmitter::tanh(Value x) { return tanhApprox(*b, x); }

Value KernelEmitter::scoreFromDot(Value dot) {
  return transformDot(dot, kLog2E);
}

Value KernelEmitter::transformDot(Value dot, double unit) {
  return nvptx::transformDot(*b, scoreTransform(), dot, unit);
}

SmallVector<Value> KernelEmitter::kvRowIndices(LoadKVOp load, Value j) {
  Value batch = map.lookup(load.getBatch());
  Value head = map.lookup(load.getKvHead());
  if (Value seqStart = load.getSeqStart())
    return {add(map.lookup(seqStart), j), head};
  if (Value table = load.getBlockTable()) {
    int64_t bs = cast<MemRefType>(load.getSrc().getType()).getDimSize(2);
    Value entry = memref::LoadOp::create(
        *b, map.lookup(table),
        ValueRange{batch, arith::DivUIOp::create(*b, j, idx(bs))});
    Value block = arith::IndexCastOp::create(*b, b->getIndexType(), entry);
    return {block, head, arith::RemUIOp::create(*b, j, idx(bs))};
  }
  return {batch, head, j};
}

Value KernelEmitter::modScore(Value dot, Value batch, Value kvHead,
                              Value flatRow, Value key, Value qLen,
                              Value kvLen) {
  Value natural = transformDot(dot, 1.0);
  SmallVector<Value> args{natural};
  args.append(modPositions(n.qk.getScoreMod(), batch, kvHead, flatRow, key,
                           qLen, kvLen));
  args.append(mappedCaptures());
  Value s = inlineMod(*b, n.qk.getScoreMod(), args);
  return arith::MulFOp::create(*b, s, f32(kLog2E));
}

Value KernelEmitter::modVisible(Value batch, Value kvHead, Value flatRow,
                                Value key, Value qLen, Value kvLen) {
  SmallVector<Value> args = modPositions(n.mask.getMaskMod(), batch, kvHead,
                                         flatRow, key, qLen, kvLen);
  args.append(mappedCaptures());
  return inlineMod(*b, n.mask.getMaskMod(), args);
}

SmallVector<Value> KernelEmitter::mappedCaptures() {
  return llvm::map_to_vector(n.captures,
                             [&](Value c) { return map.lookup(c); });
}

SmallVector<Value> nvptx::modPositionArgs(ImplicitLocOpBuilder &b,
                                          int64_t group,
                                          std::pair<bool, bool> guards,
                                          Value batch, Value kvHead,
                                          Value flatRow, Value key,
                                          Value qLen, Value kvLen) {
  // Flat row f of a K/V head's rows is query f / G of head kvHead * G +
  // f % G (query-major GQA packing, as attn-tile lays the rows out). Each
  // op in a statement of its own.
  auto idx = [&](int64_t v) { return arith::ConstantIndexOp::create(b, v); };
  Value g = idx(group);
  Value firstHead = arith::MulIOp::create(b, kvHead, g);
  Value g2 = idx(group);
  Value headInGroup = arith::RemUIOp::create(b, flatRow, g2);
  Value head = arith::AddIOp::create(b, firstHead, headInGroup);
  Value g3 = idx(group);
  Value query = arith::DivUIOp::create(b, flatRow, g3);
  auto clampOutside = [&](Value x, Value size) -> Value {
    Value inside = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, size);
    Value zero = idx(0);
    return arith::SelectOp::create(b, inside, x, zero);
  };
  if (guards.first)
    query = clampOutside(query, qLen);
  if (guards.second)
    key = clampOutside(key, kvLen);
  return {batch, head, query, key};
}

std::pair<bool, bool> nvptx::modPositionGuards(Region &region,
                                               unsigned captures) {
  // q_idx and kv_idx are the last two position arguments.
  unsigned keyArg = region.front().getNumArguments() - captures - 1;
  return {addressesMemory(region, keyArg - 1), addressesMemory(region, keyArg)};
}

SmallVector<Value> KernelEmitter::modPositions(Region &region, Value batch,
                                               Value kvHead, Value flatRow,
                                               Value key, Value qLen,
                                               Value kvLen) {
  return modPositionArgs(*b, n.loadQ.getGroup(), positionGuards(region),
                         batch, kvHead, flatRow, key, qLen, kvLen);
}

std::pair<bool, bool> KernelEmitter::positionGuards(Region &region) {
  auto [it, inserted] = guards.try_emplace(&region);
  if (inserted)
    it->second = modPositionGuards(region, n.captures.size());
  return it->second;
}

ScoreTransform KernelEmitter::scoreTransform() {
  return ScoreTransform::of(n.qk);
}

std::optional<double> KernelEmitter::linearScoreScale() {
  if (n.qk.hasScoreMod())
    return std::nullopt;
  return scoreTransform().linearFactor();
}

Value KernelEmitter::visible(Value key, Value query, Value qLen, Value kvLen) {
  IndexExprs exprs{*b};
  return MaskRules<IndexExprs>(exprs, n.mask.getMask())
      .visible(key, query, qLen, kvLen);
}

Value KernelEmitter::bandTest(Value keyFirst, Value keyLast,
                              Value queryFirst, Value queryLast, Value qLen,
                              Value kvLen, bool every) {
  IndexExprs exprs{*b};
  return MaskRules<IndexExprs>(exprs, n.mask.getMask())
      .band(keyFirst, keyLast, queryFirst, queryLast, qLen, kvLen, every);
}

Value KernelEmitter::loadSink(Value sinks, Value head) {
  Value sink = memref::LoadOp::create(*b, sinks, ValueRange{head});
  if (!sink.getType().isF32())
    sink = arith::ExtFOp::create(*b, b->getF32Type(), sink);
  return sink;
}

KernelEmitter::SinkFold KernelEmitter::foldSink(Value m, Value l, Value sink) {
  // Each builder call in a statement of its own: the IR must not depend
  // on the C++ compiler's argument order.
  Value unit = f32(kLog2E);
  Value t = arith::MulFOp::create(*b, sink, unit);
  Value merged = arith::MaxNumFOp::create(*b, m, t);
  KernelF32Exprs exprs{{*b}};
  KernelSoftmaxRules rules(exprs);
  Value shift = rules.shift(merged);
  Value r = rules.weight(m, shift);
  Value sinkWeight = rules.weight(t, shift);
  Value scaled = arith::MulFOp::create(*b, l, r);
  Value sum = arith::AddFOp::create(*b, scaled, sinkWeight);
  return {merged, sum, r};
}

FailureOr<Value> KernelEmitter::mapSplitBlock() {
  Value split = gpu::BlockIdOp::create(*b, gpu::Dimension::x);
  map.map(n.forall.getInductionVar(1),
          gpu::BlockIdOp::create(*b, gpu::Dimension::y));
  FailureOr<Value> qTiles = materialize(getValueOrCreateConstantIndexOp(
      *b, n.forall.getLoc(), n.forall.getMixedUpperBound()[2]));
  if (failed(qTiles))
    return failure();
  Value z = gpu::BlockIdOp::create(*b, gpu::Dimension::z);
  map.map(n.forall.getInductionVar(0), arith::DivUIOp::create(*b, z, *qTiles));
  map.map(n.forall.getInductionVar(2), arith::RemUIOp::create(*b, z, *qTiles));
  return split;
}

// Sequence b's first tile, floor(cu[b] * G / blockQ) + b, is monotone in
// b, and floor(cu[b] G / Br) + ceil(len_b G / Br) <= floor(cu[b+1] G / Br)
// + 1, so the sequences' tile ranges do not overlap.
static Value firstPackedTile(ImplicitLocOpBuilder &b, Value offsets, Value seq,
                             int64_t group, int64_t blockQ) {
  Value entry = memref::LoadOp::create(b, offsets, ValueRange{seq});
  Value row = arith::IndexCastOp::create(b, b.getIndexType(), entry);
  Value rows = arith::MulIOp::create(
      b, row, arith::ConstantIndexOp::create(b, group));
  Value tile = arith::DivUIOp::create(
      b, rows, arith::ConstantIndexOp::create(b, blockQ));
  return arith::AddIOp::create(b, tile, seq);
}

void KernelEmitter::mapPackedBlock(int64_t blockQ) {
  const int64_t group = n.loadQ.getGroup();
  Value offsets = map.lookup(n.cuSeqlensQ);
  Value x = gpu::BlockIdOp::create(*b, gpu::Dimension::x);
  Value numOffsets = memref::DimOp::create(*b, offsets, 0);
  Value sequences = arith::SubIOp::create(*b, numOffsets, idx(1));
  // The last sequence whose first tile is at most x: lo = 0, hi = B keep
  // first(lo) <= x < first(hi) (first(B) is the grid's size).
  Type index = b->getIndexType();
  auto search = scf::WhileOp::create(
      *b, TypeRange{index, index}, ValueRange{idx(0), sequences},
      [&](OpBuilder &ob, Location loc, ValueRange args) {
        ImplicitLocOpBuilder cb(loc, ob);
        Value width = arith::SubIOp::create(cb, args[1], args[0]);
        Value more = arith::CmpIOp::create(
            cb, arith::CmpIPredicate::sgt, width,
            arith::ConstantIndexOp::create(cb, 1));
        scf::ConditionOp::create(cb, more, args);
      },
      [&](OpBuilder &ob, Location loc, ValueRange args) {
        ImplicitLocOpBuilder bb(loc, ob);
        Value sum = arith::AddIOp::create(bb, args[0], args[1]);
        Value mid = arith::DivUIOp::create(
            bb, sum, arith::ConstantIndexOp::create(bb, 2));
        Value first = firstPackedTile(bb, offsets, mid, group, blockQ);
        Value atOrBefore =
            arith::CmpIOp::create(bb, arith::CmpIPredicate::ule, first, x);
        Value lo = arith::SelectOp::create(bb, atOrBefore, mid, args[0]);
        Value hi = arith::SelectOp::create(bb, atOrBefore, args[1], mid);
        scf::YieldOp::create(bb, ValueRange{lo, hi});
      });
  Value seq = search.getResult(0);
  Value tile =
      arith::SubIOp::create(*b, x, firstPackedTile(*b, offsets, seq, group,
                                                   blockQ));
  map.map(n.forall.getInductionVar(0), seq);
  map.map(n.forall.getInductionVar(1),
          gpu::BlockIdOp::create(*b, gpu::Dimension::y));
  map.map(n.forall.getInductionVar(2), tile);
}

Value KernelEmitter::packedTileCount(ImplicitLocOpBuilder &hb,
                                     int64_t blockQ) {
  Value totalQ = memref::DimOp::create(hb, n.loadQ.getQ(), 0);
  Value offsets = memref::DimOp::create(hb, n.cuSeqlensQ, 0);
  Value sequences = arith::SubIOp::create(
      hb, offsets, arith::ConstantIndexOp::create(hb, 1));
  Value rows = arith::MulIOp::create(
      hb, totalQ, arith::ConstantIndexOp::create(hb, n.loadQ.getGroup()));
  Value tiles = arith::DivUIOp::create(
      hb, rows, arith::ConstantIndexOp::create(hb, blockQ));
  return arith::AddIOp::create(hb, tiles, sequences);
}

std::pair<Value, Value> KernelEmitter::splitRange(Value split, Value splits,
                                                  Value lo, Value hi,
                                                  int64_t granule) {
  Value range = arith::SubIOp::create(*b, hi, lo);
  Value length = arith::MaxSIOp::create(*b, range, idx(0));
  Value per;
  if (granule == 1) {
    per = arith::CeilDivSIOp::create(*b, length, splits);
  } else {
    Value granules = arith::CeilDivSIOp::create(*b, length, idx(granule));
    Value perGranules = arith::CeilDivSIOp::create(*b, granules, splits);
    per = mul(perGranules, idx(granule));
  }
  Value first = add(lo, mul(split, per));
  Value end = add(first, per);
  return {first, arith::MinSIOp::create(*b, end, hi)};
}

FailureOr<Value> KernelEmitter::materialize(Value v) {
  if (Value mapped = map.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumRegions() != 0 ||
      !(isPure(def) || isa<memref::LoadOp>(def)))
    return n.forall.emitError("cannot move the computation of ")
               << v << " into the kernel",
           failure();
  for (Value operand : def->getOperands())
    if (failed(materialize(operand)))
      return failure();
  Operation *clone = b->clone(*def, map);
  return clone->getResult(cast<OpResult>(v).getResultNumber());
}

Value nvptx::fp8ToF16(ImplicitLocOpBuilder &kb, Value x, int sm) {
  auto type = cast<VectorType>(x.getType());
  Type from = type.getElementType();
  auto i8Vec = VectorType::get(type.getShape(), kb.getI8Type());
  auto f16Vec = VectorType::get(type.getShape(), kb.getF16Type());
  Value bytes = arith::BitcastOp::create(kb, i8Vec, x);
  if (sm >= 89) {
    // cvt.rn.f16x2.{e4m3,e5m2}x2: two bytes a conversion, exact.
    auto pair = VectorType::get({2}, kb.getI8Type());
    auto halfPair = VectorType::get({2}, kb.getF16Type());
    SmallVector<Value> elements;
    for (int64_t i = 0; i < type.getNumElements(); i += 2) {
      Value lo = vector::ExtractOp::create(kb, bytes, i);
      Value hi = vector::ExtractOp::create(kb, bytes, i + 1);
      Value two = vector::FromElementsOp::create(kb, pair, ValueRange{lo, hi});
      Value h = NVVM::ConvertF8x2ToF16x2Op::create(kb, halfPair, two,
                                                   /*relu=*/false, from);
      elements.push_back(vector::ExtractOp::create(kb, h, 0));
      elements.push_back(vector::ExtractOp::create(kb, h, 1));
    }
    return vector::FromElementsOp::create(kb, f16Vec, elements);
  }
  // Below sm_89, bit operations: an e5m2 byte is the top byte of an f16
  // (infinities and NaNs included); an e4m3fn byte S.EEEE.MMM as the f16
  // S.0EEEE.MMM0000000 is its value times 2^-8 (subnormals too, exponent
  // 0 in both), times 256 after, except its NaN S.1111.111.
  auto i16Vec = VectorType::get(type.getShape(), kb.getI16Type());
  auto splat = [&](int64_t c) -> Value {
    return arith::ConstantOp::create(
        kb, i16Vec, DenseElementsAttr::get(i16Vec, kb.getI16IntegerAttr(c)));
  };
  Value wide = arith::ExtUIOp::create(kb, i16Vec, bytes);
  Value bits;
  if (kvFormatOf(from) == KVFormat::E5M2) {
    bits = arith::ShLIOp::create(kb, wide, splat(8));
  } else {
    // Each operand in a statement of its own: C++ leaves the order of a
    // call's arguments unspecified.
    Value signMask = splat(0x80), signShift = splat(8);
    Value signBit = arith::AndIOp::create(kb, wide, signMask);
    Value sign = arith::ShLIOp::create(kb, signBit, signShift);
    Value lowMask = splat(0x7f);
    Value low = arith::AndIOp::create(kb, wide, lowMask);
    Value bodyShift = splat(7);
    Value shifted = arith::ShLIOp::create(kb, low, bodyShift);
    Value body = arith::OrIOp::create(kb, sign, shifted);
    Value nanCode = splat(0x7f);
    Value isNaN =
        arith::CmpIOp::create(kb, arith::CmpIPredicate::eq, low, nanCode);
    Value nanBits = splat(0x7e00);
    Value nan = arith::OrIOp::create(kb, sign, nanBits);
    bits = arith::SelectOp::create(kb, isNaN, nan, body);
  }
  return arith::BitcastOp::create(kb, f16Vec, bits);
}

Value KernelEmitter::uniformScale(Value scale, Value kvHead) {
  if (!scale)
    return Value();
  auto type = cast<MemRefType>(scale.getType());
  switch (scaleGranularityOf(type)) {
  case ScaleGranularity::Tensor:
    return memref::LoadOp::create(*b, map.lookup(scale), ValueRange{});
  case ScaleGranularity::Head:
    return memref::LoadOp::create(*b, map.lookup(scale), ValueRange{kvHead});
  case ScaleGranularity::Token:
    return Value();
  }
  llvm_unreachable("a scale granularity");
}
