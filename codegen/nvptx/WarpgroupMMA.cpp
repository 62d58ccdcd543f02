//===- WarpgroupMMA.cpp - wgmma products of the wgmma tier ----------------===//
//
// The products are inline PTX, both of them: LLVM 22's nvvm.wgmma.mma_async
// takes both operands through descriptors (P V needs A in registers) and
// lowers only through convert-nvvm-to-llvm, so one spelling serves both.
// The fence, commit and wait around them are NVVM ops.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/WarpgroupMMA.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <string>

using namespace mlir;
using namespace mlir::attn::nvptx;

namespace {
/// Bytes of a swizzle block's row, and of its 8-row repeat.
constexpr int64_t kBlockRow = 128, kAtom = 8 * kBlockRow;
/// Descriptor bits 62-63: the 128-byte swizzle.
constexpr uint64_t kSwizzle128 = uint64_t(1) << 62;
} // namespace

WarpgroupMMA::WarpgroupMMA(ImplicitLocOpBuilder &b, Value shared, Type elt)
    : b(b), elt(elt) {
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, shared);
  base = arith::IndexCastUIOp::create(b, b.getI64Type(), address);
}

Value WarpgroupMMA::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

Value WarpgroupMMA::descriptor(Value offset, int64_t leadingBytes) {
  // Bits 0-13: the address / 16; 16-29: the leading byte offset / 16;
  // 32-45: the stride byte offset / 16; 49-51: the base offset (0: blocks
  // start on 1024-byte boundaries); 62-63: the swizzle.
  Type i64 = b.getI64Type();
  Value at = arith::AddIOp::create(
      b, base, arith::IndexCastUIOp::create(b, i64, offset));
  Value sixteens =
      arith::ShRUIOp::create(b, at, arith::ConstantIntOp::create(b, i64, 4));
  Value field = arith::AndIOp::create(
      b, sixteens, arith::ConstantIntOp::create(b, i64, 0x3FFF));
  uint64_t fixed = (uint64_t(leadingBytes / 16) << 16) |
                   (uint64_t(kAtom / 16) << 32) | kSwizzle128;
  return arith::OrIOp::create(
      b, field,
      arith::ConstantIntOp::create(b, i64, static_cast<int64_t>(fixed)));
}

Value WarpgroupMMA::toStruct(ArrayRef<Value> tiles) {
  Type f32 = b.getF32Type();
  auto type = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(8 * tiles.size(), f32));
  Value s = LLVM::UndefOp::create(b, type);
  for (auto [t, tile] : llvm::enumerate(tiles))
    for (int64_t e = 0; e < 8; ++e)
      s = LLVM::InsertValueOp::create(
          b, s, vector::ExtractOp::create(b, tile, ArrayRef<int64_t>{e}),
          ArrayRef<int64_t>{static_cast<int64_t>(8 * t + e)});
  return s;
}

SmallVector<Value> WarpgroupMMA::fromStruct(Value s, int64_t n) {
  SmallVector<Value> tiles;
  for (int64_t t = 0; t < n / 16; ++t) {
    SmallVector<Value> e;
    for (int64_t i = 0; i < 8; ++i)
      e.push_back(LLVM::ExtractValueOp::create(b, s, 8 * t + i));
    tiles.push_back(vector::FromElementsOp::create(
        b, VectorType::get({8}, b.getF32Type()), e));
  }
  return tiles;
}

SmallVector<Value> WarpgroupMMA::pin(ArrayRef<Value> vectors) {
  // Every element of every vector through one empty asm ("=f" for f32,
  // "=r" for i32, each tied to its input).
  auto vectorType = cast<VectorType>(vectors.front().getType());
  const int64_t width = vectorType.getNumElements();
  Type element = vectorType.getElementType();
  const int64_t regs = width * vectors.size();
  std::string constraints;
  for (int64_t i = 0; i < regs; ++i)
    constraints += element.isF32() ? "=f," : "=r,";
  for (int64_t i = 0; i < regs; ++i)
    constraints += std::to_string(i) + (i + 1 < regs ? "," : "");
  SmallVector<Value> in;
  for (Value v : vectors)
    for (int64_t e = 0; e < width; ++e)
      in.push_back(vector::ExtractOp::create(b, v, ArrayRef<int64_t>{e}));
  auto type = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(regs, element));
  Value s = LLVM::InlineAsmOp::create(
                b, type, in, b.getStringAttr(""), b.getStringAttr(constraints),
                /*has_side_effects=*/b.getUnitAttr(),
                /*is_align_stack=*/nullptr, LLVM::TailCallKindAttr{},
                LLVM::AsmDialectAttr{}, ArrayAttr{})
                .getResult(0);
  SmallVector<Value> out;
  for (int64_t v = 0; v < static_cast<int64_t>(vectors.size()); ++v) {
    SmallVector<Value> e;
    for (int64_t i = 0; i < width; ++i)
      e.push_back(LLVM::ExtractValueOp::create(b, s, width * v + i));
    out.push_back(vector::FromElementsOp::create(b, vectorType, e));
  }
  return out;
}

/// One wgmma.mma_async: `regs` f32 accumulators (tied to `acc` when
/// given, else scale-d = 0), then `operands` with `operandConstraints`
/// and the text of the operands after D (`$N` placeholders numbered from
/// `regs`, or from 2 regs with `acc`).
static Value wgmma(ImplicitLocOpBuilder &b, StringRef shapeAndTypes,
                   int64_t regs, Value acc, ArrayRef<Value> operands,
                   ArrayRef<StringRef> operandConstraints,
                   function_ref<std::string(int64_t first)> operandText) {
  std::string constraints;
  SmallVector<Value> in;
  for (int64_t i = 0; i < regs; ++i)
    constraints += "=f,";
  if (acc)
    for (int64_t i = 0; i < regs; ++i) {
      constraints += std::to_string(i) + ",";
      in.push_back(LLVM::ExtractValueOp::create(b, acc, i));
    }
  for (StringRef c : operandConstraints)
    constraints += c.str() + ",";
  constraints += "r";
  in.append(operands.begin(), operands.end());
  in.push_back(arith::ConstantIntOp::create(b, b.getI32Type(), acc ? 1 : 0));
  int64_t first = acc ? 2 * regs : regs;
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                     std::to_string(first + operands.size()) +
                     ", 0;\nwgmma.mma_async.sync.aligned." +
                     shapeAndTypes.str() + " {";
  for (int64_t i = 0; i < regs; ++i)
    text += "$" + std::to_string(i) + (i + 1 < regs ? ", " : "");
  text += "}, " + operandText(first) + ";\n}";
  auto type = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(regs, b.getF32Type()));
  return LLVM::InlineAsmOp::create(
             b, type, in, b.getStringAttr(text),
             b.getStringAttr(constraints),
             /*has_side_effects=*/b.getUnitAttr(), /*is_align_stack=*/nullptr,
             LLVM::TailCallKindAttr{}, LLVM::AsmDialectAttr{}, ArrayAttr{})
      .getResult(0);
}

static std::string shapeAndTypes(int64_t n, Type elt) {
  std::string t = elt.isBF16() ? "bf16" : "f16";
  return "m64n" + std::to_string(n) + "k16.f32." + t + "." + t;
}

SmallVector<Value> WarpgroupMMA::productKMajor(Value aTile, int64_t aRows,
                                               Value aRow, Value bTile,
                                               int64_t n, int64_t k) {
  return settle(issueKMajor(aTile, aRows, aRow, bTile, n, k));
}

SmallVector<Value> WarpgroupMMA::issueKMajor(Value aTile, int64_t aRows,
                                             Value aRow, Value bTile,
                                             int64_t n, int64_t k) {
  // Block c of A starts at aTile + c * aRows * 128, its rows from aRow.
  Value aStart = arith::AddIOp::create(
      b, aTile, arith::MulIOp::create(b, aRow, idx(kBlockRow)));
  NVVM::WgmmaFenceAlignedOp::create(b);
  Value acc;
  for (int64_t kk = 0; kk < k / 16; ++kk) {
    int64_t block = kk / 4, within = (kk % 4) * 32;
    Value aAt = arith::AddIOp::create(
        b, aStart, idx(block * aRows * kBlockRow + within));
    Value bAt =
        arith::AddIOp::create(b, bTile, idx(block * n * kBlockRow + within));
    Value descA = descriptor(aAt, 16), descB = descriptor(bAt, 16);
    acc = wgmma(b, shapeAndTypes(n, elt), n / 2, acc, {descA, descB},
                {"l", "l"}, [](int64_t first) {
                  // scale-a, scale-b 1; neither transposed (K-major).
                  return "$" + std::to_string(first) + ", $" +
                         std::to_string(first + 1) + ", p, 1, 1, 0, 0";
                });
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  return fromStruct(acc, n);
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
  NVVM::WgmmaFenceAlignedOp::create(b);
  Value acc = toStruct(pinned);
  // B's 64-column blocks are k rows each: the leading byte offset.
  const int64_t blockBytes = k * kBlockRow;
  for (int64_t kk = 0; kk < k / 16; ++kk) {
    SmallVector<Value> ops;
    for (int64_t r = 0; r < 4; ++r)
      ops.push_back(
          vector::ExtractOp::create(b, aPinned[kk], ArrayRef<int64_t>{r}));
    ops.push_back(descriptor(
        arith::AddIOp::create(b, bTile, idx(kk * 16 * kBlockRow)),
        blockBytes));
    acc = wgmma(b, shapeAndTypes(n, elt), n / 2, acc, ops,
                {"r", "r", "r", "r", "l"}, [](int64_t first) {
                  std::string s = "{";
                  for (int64_t r = 0; r < 4; ++r)
                    s += "$" + std::to_string(first + r) + (r < 3 ? ", " : "");
                  // scale-a, scale-b 1; B transposed (MN-major).
                  return s + "}, $" + std::to_string(first + 4) +
                         ", p, 1, 1, 1";
                });
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  if (!wait)
    return fromStruct(acc, n);
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  return pin(fromStruct(acc, n));
}
