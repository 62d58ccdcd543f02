//===- RegisterMath.cpp - the online softmax's arithmetic in registers ----===//

#include "codegen/nvptx/RegisterMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <cmath>

using namespace mlir;

Value mlir::attn::nvptx::f32Constant(ImplicitLocOpBuilder &b, double v) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
}

Value mlir::attn::nvptx::fastExp2(ImplicitLocOpBuilder &b, Value x) {
  return LLVM::CallIntrinsicOp::create(
             b, b.getF32Type(),
             b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"), ValueRange{x})
      .getResult(0);
}

Value mlir::attn::nvptx::referenceMoves(ImplicitLocOpBuilder &b, Value score,
                                        Value m) {
  Value slack = f32Constant(b, kRescaleSlack);
  Value limit = arith::AddFOp::create(b, m, slack);
  return arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, score, limit);
}

Value mlir::attn::nvptx::xorReduce(ImplicitLocOpBuilder &b, Value x,
                                   ArrayRef<int64_t> offsets, bool isMax) {
  for (int64_t offset : offsets) {
    Value other =
        gpu::ShuffleOp::create(b, x, offset, kWarp, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    x = isMax ? Value(arith::MaxNumFOp::create(b, x, other))
              : Value(arith::AddFOp::create(b, x, other));
  }
  return x;
}

Value mlir::attn::nvptx::safeMax(ImplicitLocOpBuilder &b, Value m) {
  return F32Exprs{b}.safeMax(m);
}

Value mlir::attn::nvptx::pairwise(SmallVector<Value> values,
                                  function_ref<Value(Value, Value)> combine) {
  while (values.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(combine(values[i], values[i + 1]));
    if (values.size() % 2)
      next.push_back(values.back());
    values = std::move(next);
  }
  return values.front();
}
