//===- RegisterMath.h - the online softmax's arithmetic in registers -*- C++ -*-===//
//
// The few instructions every NVIDIA softmax is made of, as one spelling:
// the kernels build them directly (KernelEmitter's helpers call these) and
// attn-nv-to-nvvm builds them when it expands attn_nv.online_softmax.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_REGISTERMATH_H
#define ATTN_CODEGEN_NVPTX_REGISTERMATH_H

#include "dialect/AttnSemantics.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn::nvptx {

constexpr int64_t kWarp = 32;
/// Lazy rescale: a row's softmax reference m moves (and its l and acc are
/// rescaled) only when a score passes it by more than this many log2
/// units; otherwise p = 2^(s - m) <= 2^kRescaleSlack = 256, which f16,
/// bf16 and the f32 sums hold. Any reference gives the same (m, l, acc)
/// state up to scale.
constexpr double kRescaleSlack = 8.0;

Value f32Constant(ImplicitLocOpBuilder &b, double v);
/// 2^x on ex2.approx.ftz.f32. math.exp2 would become libdevice's exp2f,
/// whose non-ftz ex2 ptxas wraps in a subnormal fix-up (four instructions
/// instead of one). Flushing subnormal p to 0 loses nothing: every row
/// sum holds a p >= 2^-kRescaleSlack.
Value fastExp2(ImplicitLocOpBuilder &b, Value x);
/// Whether a row's reference `m` must move for `score` (kRescaleSlack).
Value referenceMoves(ImplicitLocOpBuilder &b, Value score, Value m);
/// Combines `x` with the values of the lanes `lane ^ offset`, for each
/// offset in turn: a reduction over the lanes those offsets span.
Value xorReduce(ImplicitLocOpBuilder &b, Value x, ArrayRef<int64_t> offsets,
                bool isMax);
/// `m == -inf ? 0 : m`: the shift that keeps empty rows NaN-free.
Value safeMax(ImplicitLocOpBuilder &b, Value m);
/// SoftmaxRules' builder for kernels (AttnSemantics.h): F32Exprs with 2^x
/// on fastExp2.
struct KernelF32Exprs : F32Exprs {
  Value exp2(Value x) { return fastExp2(b, x); }
};
using KernelSoftmaxRules = SoftmaxRules<KernelF32Exprs>;
/// Combines `values` pairwise, so a row's max or sum takes log2(n)
/// dependent steps rather than n.
Value pairwise(SmallVector<Value> values,
               function_ref<Value(Value, Value)> combine);

} // namespace mlir::attn::nvptx

#endif // ATTN_CODEGEN_NVPTX_REGISTERMATH_H
