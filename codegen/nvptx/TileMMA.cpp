//===- TileMMA.cpp - 16x16x16 warp tile products, WMMA or mma.sync --------===//

#include "codegen/nvptx/TileMMA.h"

#include "codegen/nvptx/AttnNVDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn::nvptx;

namespace {

class WMMATileMMA : public TileMMA {
public:
  WMMATileMMA(ImplicitLocOpBuilder &b, Type elt) : b(b), elt(elt) {}

  Value loadA(Value mem, Value row, Value col, int64_t ld) override {
    return load(type(elt, "AOp"), mem, row, col, ld, false);
  }
  Value loadB(Value mem, Value row, Value col, int64_t ld,
              bool transpose) override {
    return load(type(elt, "BOp"), mem, row, col, ld, transpose);
  }
  Value zeroC() override {
    return gpu::SubgroupMmaConstantMatrixOp::create(
        b, type(b.getF32Type(), "COp"),
        arith::ConstantOp::create(b, b.getF32FloatAttr(0)));
  }
  Value mma(Value a, Value bFrag, Value c) override {
    return gpu::SubgroupMmaComputeOp::create(b, a, bFrag, c, UnitAttr(),
                                             UnitAttr());
  }
  void storeC(Value c, Value mem, Value row, Value col, int64_t ld) override {
    gpu::SubgroupMmaStoreMatrixOp::create(b, c, mem, ValueRange{row, col},
                                          b.getIndexAttr(ld), UnitAttr());
  }
  Value loadC(Value mem, Value row, Value col, int64_t ld) override {
    return load(type(b.getF32Type(), "COp"), mem, row, col, ld, false);
  }
  Value mulC(Value x, Value y) override {
    return gpu::SubgroupMmaElementwiseOp::create(
        b, x.getType(), ValueRange{x, y}, gpu::MMAElementwiseOp::MULF);
  }

private:
  Type type(Type t, StringRef kind) {
    return gpu::MMAMatrixType::get({16, 16}, t, kind);
  }
  Value load(Type type, Value mem, Value row, Value col, int64_t ld,
             bool transpose) {
    return gpu::SubgroupMmaLoadMatrixOp::create(
        b, type, mem, ValueRange{row, col}, b.getIndexAttr(ld),
        transpose ? b.getUnitAttr() : UnitAttr());
  }

  ImplicitLocOpBuilder &b;
  Type elt;
};

} // namespace

std::unique_ptr<TileMMA>
mlir::attn::nvptx::createWMMATileMMA(ImplicitLocOpBuilder &b, Type elt) {
  return std::make_unique<WMMATileMMA>(b, elt);
}

Value mlir::attn::nvptx::packPair(ImplicitLocOpBuilder &b, Value two) {
  Value one =
      vector::BitCastOp::create(b, VectorType::get({1}, b.getI32Type()), two);
  return vector::ExtractOp::create(b, one, ArrayRef<int64_t>{0});
}

Value mlir::attn::nvptx::accumulatorToA(ImplicitLocOpBuilder &b, Type elt,
                                        ArrayRef<Value> e) {
  // A register i = (row half i & 1, column half i >> 1) = accumulator
  // elements 2i, 2i + 1.
  SmallVector<Value> regs;
  for (int64_t i = 0; i < 4; ++i) {
    Value lo = arith::TruncFOp::create(b, elt, e[2 * i]);
    Value hi = arith::TruncFOp::create(b, elt, e[2 * i + 1]);
    regs.push_back(packPair(b, vector::FromElementsOp::create(
                                   b, VectorType::get({2}, elt),
                                   ValueRange{lo, hi})));
  }
  return vector::FromElementsOp::create(
      b, VectorType::get({4}, b.getI32Type()), regs);
}

Value mlir::attn::nvptx::rowBroadcast(ImplicitLocOpBuilder &b, Value top,
                                      Value bottom) {
  SmallVector<Value> e;
  for (int64_t i = 0; i < 8; ++i)
    e.push_back(MmaSyncTileMMA::rowHalf(i) ? bottom : top);
  return vector::FromElementsOp::create(
      b, VectorType::get({8}, b.getF32Type()), e);
}

Value mlir::attn::nvptx::swizzleColumn(ImplicitLocOpBuilder &b, Value row,
                                       Value col) {
  Value seven = arith::ConstantIndexOp::create(b, 7);
  Value three = arith::ConstantIndexOp::create(b, 3);
  Value mask = arith::ShLIOp::create(
      b, arith::AndIOp::create(b, row, seven), three);
  return arith::XOrIOp::create(b, col, mask);
}

Value mlir::attn::nvptx::byteChunkSwizzle(ImplicitLocOpBuilder &b, Value row,
                                          int64_t chunksPerRow) {
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, v); };
  Value parity = arith::AndIOp::create(b, row, c(1));
  Value high = arith::ShLIOp::create(b, parity, c(2));
  Value pair = arith::ShRUIOp::create(b, row, c(1));
  Value pairMod = arith::AndIOp::create(b, pair, c(3));
  Value low = arith::ShLIOp::create(b, pairMod, c(1));
  Value x = arith::XOrIOp::create(b, high, low);
  return arith::AndIOp::create(b, x, c(chunksPerRow - 1));
}

/// The m16n8k16 layout (PTX ISA, "Matrix Fragments for mma.m16n8k16"):
/// with g = lane / 4 and t = lane % 4,
///   A (16x16): register i holds A[g + 8 (i & 1)][2t + 8 (i >> 1) + {0, 1}]
///   B (16x8):  register j holds B[2t + 8j + {0, 1}][g]
///   C (16x8):  c0, c1 = C[g][2t + {0, 1}], c2, c3 = C[g + 8][2t + {0, 1}]
/// A 16x16 tile is two 16x8 halves side by side: B as vector<4xi32>
/// (half h in elements 2h, 2h + 1), C as vector<8xf32> (half h in 4h..4h+3).
/// A is vector<4xi32>; each i32 packs two inputs, the lower index first.
MmaSyncTileMMA::MmaSyncTileMMA(ImplicitLocOpBuilder &b, Type elt, Value lane,
                               bool swizzled)
    : b(b), elt(elt), swizzled(swizzled) {
  Value four = idx(4), eight = idx(8);
  g = arith::DivUIOp::create(b, lane, four);
  Value laneInQuad = arith::RemUIOp::create(b, lane, four);
  t2 = arith::MulIOp::create(b, laneInQuad, idx(2));
  // Matrix m = lane / 8 of an ldmatrix.x4 covers rows 8 (m & 1) and
  // columns 8 (m >> 1) (or the other way round), row lane % 8 of it.
  Value m = arith::DivUIOp::create(b, lane, eight);
  Value r = arith::RemUIOp::create(b, lane, eight);
  Value low =
      arith::MulIOp::create(b, arith::AndIOp::create(b, m, idx(1)), eight);
  Value high =
      arith::MulIOp::create(b, arith::ShRUIOp::create(b, m, idx(1)), eight);
  rowOfHalf0 = arith::AddIOp::create(b, low, r);
  colOfHalf1 = high;
  rowOfHalf1 = arith::AddIOp::create(b, high, r);
  colOfHalf0 = low;
  swizzleMask = arith::MulIOp::create(b, r, eight);
}

// ldmatrix.x4: lane l gives the address of row l % 8 of 8x8 matrix l / 8
// and gets register i of the fragment from matrix i, already in the layout
// above (.trans for B stored k-major).
Value MmaSyncTileMMA::loadA(Value mem, Value row, Value col, int64_t) {
  return ldmatrix(mem, row, col, rowOfHalf0, colOfHalf1, false);
}

Value MmaSyncTileMMA::loadB(Value mem, Value row, Value col, int64_t,
                            bool transpose) {
  if (transpose) // B[k][n] = mem[row + n][col + k]: matrix i = (n/8, k/8)
    return ldmatrix(mem, row, col, rowOfHalf1, colOfHalf0, false);
  // B[k][n] = mem[row + k][col + n]: matrix i = (k/8 = i & 1, n/8)
  return ldmatrix(mem, row, col, rowOfHalf0, colOfHalf1, true);
}

Value MmaSyncTileMMA::zeroC() {
  auto type = VectorType::get({8}, b.getF32Type());
  return arith::ConstantOp::create(
      b, type, DenseElementsAttr::get(type, b.getF32FloatAttr(0)));
}

Value MmaSyncTileMMA::mma(Value a, Value bFrag, Value c) {
  return nv::MmaTileOp::create(b, VectorType::get({8}, b.getF32Type()), a,
                               bFrag, c, TypeAttr::get(elt));
}

void MmaSyncTileMMA::storeC(Value c, Value mem, Value row, Value col,
                            int64_t) {
  storeRounded(c, mem, row, col, /*swizzle=*/false);
}

void MmaSyncTileMMA::storeRounded(Value c, Value mem, Value row, Value col,
                                  bool swizzle) {
  nv::StoreAccumulatorOp::create(b, c, mem, row, col, g, t2,
                                 swizzle ? b.getUnitAttr() : UnitAttr());
}

Value MmaSyncTileMMA::loadC(Value mem, Value row, Value col, int64_t) {
  SmallVector<Value> e;
  auto two = VectorType::get({2}, b.getF32Type());
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t half = 0; half < 2; ++half) {
      Value v = vector::LoadOp::create(
          b, two, mem, ValueRange{add(row, g, 8 * half), add(col, t2, 8 * h)});
      e.append(elements(v, 2));
    }
  return vector::FromElementsOp::create(
      b, VectorType::get({8}, b.getF32Type()), e);
}

Value MmaSyncTileMMA::mulC(Value x, Value y) {
  return arith::MulFOp::create(b, x, y);
}

Value MmaSyncTileMMA::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

Value MmaSyncTileMMA::add(Value x, Value y, int64_t c) {
  Value sum = arith::AddIOp::create(b, x, y);
  return c ? arith::AddIOp::create(b, sum, idx(c)) : sum;
}

VectorType MmaSyncTileMMA::i32Vec(int64_t n) {
  return VectorType::get({n}, b.getI32Type());
}

/// Four 8x8 matrices of 16-bit elements as vector<4xi32>, register i from
/// matrix i; this lane addresses mem[row + laneRow][col + laneCol], the
/// column swizzled where the tile is (attn_nv.ldmatrix's lowering).
Value MmaSyncTileMMA::ldmatrix(Value mem, Value row, Value col, Value laneRow,
                               Value laneCol, bool transpose) {
  bool swizzle =
      swizzled &&
      isSwizzledWidth(cast<MemRefType>(mem.getType()).getShape().back());
  return nv::LdMatrixOp::create(b, i32Vec(4), mem, ValueRange{row, col},
                                ValueRange{laneRow, laneCol},
                                swizzle ? swizzleMask : Value(), transpose);
}

SmallVector<Value> MmaSyncTileMMA::elements(Value v, int64_t n) {
  SmallVector<Value> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(vector::ExtractOp::create(b, v, ArrayRef<int64_t>{i}));
  return out;
}
