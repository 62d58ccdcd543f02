//===- KernelCommon.cpp - shared pieces of the NVIDIA tiers ---------------===//

#include "codegen/nvptx/KernelCommon.h"

#include "lib/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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

Value KernelEmitter::f32(double v) {
  return arith::ConstantOp::create(*b, b->getF32FloatAttr(v));
}

Value KernelEmitter::i32(int64_t v) {
  return arith::ConstantOp::create(*b, b->getI32IntegerAttr(v));
}

Value KernelEmitter::exp2(Value x) {
  return LLVM::CallIntrinsicOp::create(
             *b, b->getF32Type(),
             b->getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"), ValueRange{x})
      .getResult(0);
}

Value KernelEmitter::opaqueIndex(Value index) {
  Value i32 = arith::IndexCastOp::create(*b, b->getI32Type(), index);
  auto mov = LLVM::InlineAsmOp::create(
      *b, b->getI32Type(), ValueRange{i32}, b->getStringAttr("mov.b32 $0, $1;"),
      b->getStringAttr("=r,r"), /*has_side_effects=*/b->getUnitAttr(),
      /*is_align_stack=*/nullptr, LLVM::TailCallKindAttr{},
      LLVM::AsmDialectAttr{}, ArrayAttr{});
  return arith::IndexCastOp::create(*b, b->getIndexType(), mov.getResult(0));
}

Value KernelEmitter::tanh(Value x) {
  Value ax = math::AbsFOp::create(*b, x);
  Value e = exp2(arith::MulFOp::create(*b, ax, f32(2 * kLog2E)));
  Value one = f32(1);
  Value two = f32(2);
  Value denominator = arith::AddFOp::create(*b, e, f32(1));
  Value t = arith::SubFOp::create(
      *b, one, arith::DivFOp::create(*b, two, denominator));
  return math::CopySignOp::create(*b, t, x);
}

Value KernelEmitter::scoreFromDot(Value dot) {
  ScoreTransform score = scoreTransform();
  if (score.softcap) {
    Value s = tanh(arith::MulFOp::create(*b, dot, f32(score.tanhInputFactor())));
    return arith::MulFOp::create(*b, s, f32(score.tanhOutputFactor()));
  }
  return arith::MulFOp::create(*b, dot, f32(*score.linearFactor()));
}

ScoreTransform KernelEmitter::scoreTransform() {
  return ScoreTransform::of(n.qk);
}

std::optional<double> KernelEmitter::linearScoreScale() {
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

Value KernelEmitter::referenceMoves(Value score, Value m) {
  return arith::CmpFOp::create(
      *b, arith::CmpFPredicate::OGT, score,
      arith::AddFOp::create(*b, m, f32(kRescaleSlack)));
}

Value KernelEmitter::xorReduce(Value x, ArrayRef<int64_t> offsets,
                               bool isMax) {
  for (int64_t offset : offsets) {
    Value other =
        gpu::ShuffleOp::create(*b, x, offset, kWarp, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    x = isMax ? Value(arith::MaxNumFOp::create(*b, x, other))
              : Value(arith::AddFOp::create(*b, x, other));
  }
  return x;
}

Value KernelEmitter::safeMax(Value m) {
  Value isEmpty = arith::CmpFOp::create(*b, arith::CmpFPredicate::OEQ, m,
                                        f32(-INFINITY));
  return arith::SelectOp::create(*b, isEmpty, f32(0), m);
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
