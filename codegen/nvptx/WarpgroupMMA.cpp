//===- WarpgroupMMA.cpp - wgmma products of the wgmma tier ----------------===//
//
// The products are attn_nv.wgmma groups and the register pins around them
// attn_nv.fence_registers (attn-nv-to-nvvm expands both into inline PTX);
// the wait is NVVM's.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/WarpgroupMMA.h"

#include "codegen/nvptx/AttnNVDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn::nvptx;

WarpgroupMMA::WarpgroupMMA(ImplicitLocOpBuilder &b, Value shared, Type elt)
    : b(b), elt(elt) {
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, shared);
  base = arith::IndexCastUIOp::create(b, b.getI64Type(), address);
}

Value WarpgroupMMA::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

SmallVector<Value> WarpgroupMMA::pin(ArrayRef<Value> vectors) {
  return llvm::to_vector_of<Value>(nv::FenceRegistersOp::create(b, vectors).getResults());
}

/// n / 16 accumulator tiles.
static SmallVector<Type> accumulatorTypes(ImplicitLocOpBuilder &b,
                                          int64_t n) {
  return SmallVector<Type>(n / 16, VectorType::get({8}, b.getF32Type()));
}

SmallVector<Value> WarpgroupMMA::productKMajor(Value aTile, int64_t aRows,
                                               Value aRow, Value bTile,
                                               int64_t n, int64_t k) {
  return settle(issueKMajor(aTile, aRows, aRow, bTile, n, k));
}

SmallVector<Value> WarpgroupMMA::issueKMajor(Value aTile, int64_t aRows,
                                             Value aRow, Value bTile,
                                             int64_t n, int64_t k) {
  // The warpgroup's first row of A.
  Value aStart = arith::AddIOp::create(
      b, aTile, arith::MulIOp::create(b, aRow, idx(kBlockRow)));
  auto product = nv::WgmmaOp::create(
      b, accumulatorTypes(b, n), base, aStart, bTile, ValueRange{},
      ValueRange{}, b.getI64IntegerAttr(k), b.getI64IntegerAttr(aRows),
      TypeAttr::get(elt));
  return llvm::to_vector_of<Value>(product.getResults());
}

SmallVector<Value> WarpgroupMMA::settle(ArrayRef<Value> tiles) {
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  return pin(tiles);
}

SmallVector<Value> WarpgroupMMA::productRegisters(ArrayRef<Value> a,
                                                  Value bTile, int64_t n,
                                                  int64_t k,
                                                  ArrayRef<Value> accTiles,
                                                  bool wait) {
  // The accumulators and A were written by ordinary instructions: pin
  // them before the fence, so none of those writes moves past it.
  SmallVector<Value> pinned = pin(accTiles);
  SmallVector<Value> aPinned = pin(a);
  SmallVector<Value> product = llvm::to_vector_of<Value>(
      nv::WgmmaOp::create(b, accumulatorTypes(b, n), base, /*a_tile=*/Value(),
                          bTile, aPinned, pinned, b.getI64IntegerAttr(k),
                          /*a_rows=*/IntegerAttr(), TypeAttr::get(elt))
          .getResults());
  if (!wait)
    return product;
  return settle(product);
}
