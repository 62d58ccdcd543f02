//===- ByteFragments.cpp - mma.sync operands decoded from one-byte tiles --===//

#include "codegen/nvptx/ByteFragments.h"

#include "codegen/nvptx/KernelCommon.h"
#include "codegen/nvptx/TileMMA.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

ByteFragments::ByteFragments(ImplicitLocOpBuilder &b, Type elt, Type kvElt,
                             int sm, const MmaSyncTileMMA &tiles)
    : b(b), elt(elt), kvElt(kvElt), sm(sm), g(tiles.laneRow()),
      t2(tiles.laneColumn()) {}

Value ByteFragments::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

Value ByteFragments::scaled(Value x, int64_t m, int64_t c) {
  // One builder call a statement: C++ leaves argument order unspecified.
  Value product = arith::MulIOp::create(b, x, idx(m));
  return arith::AddIOp::create(b, product, idx(c));
}

Value ByteFragments::i32(int64_t v) {
  return arith::ConstantIntOp::create(b, b.getI32Type(), v);
}

Value ByteFragments::unpack(Value word, VectorType type) {
  Value one = vector::FromElementsOp::create(
      b, VectorType::get({1}, b.getI32Type()), word);
  return vector::BitCastOp::create(b, type, one);
}

Value ByteFragments::permute(Value lo, Value hi, int64_t selector) {
  Value select = i32(selector);
  return NVVM::PermuteOp::create(b, b.getI32Type(), lo, hi, select,
                                 NVVM::PermuteMode::DEFAULT);
}

Value ByteFragments::decodeHalf(Value word, int64_t half) {
  auto halves = VectorType::get({2}, b.getF16Type());
  Value h;
  if (kvFormatOf(kvElt) == KVFormat::Int8) {
    // Bytes 2 half and 2 half + 1 (offset by 0x80 when loaded) under
    // 0x64: the f16 pair 1024 + (x + 128), exact (ulp 1 at 1024); minus
    // 1152 they are x. One prmt and one f16x2 subtraction a pair.
    Value magic = i32(0x64646464);
    Value bits =
        permute(word, magic, 2 * half | 4 << 4 | (2 * half + 1) << 8 | 4 << 12);
    Value biased = unpack(bits, halves);
    Value bias = arith::ConstantOp::create(
        b, halves, DenseElementsAttr::get(halves, b.getF16FloatAttr(1152)));
    h = arith::SubFOp::create(b, biased, bias);
  } else {
    Value four = unpack(word, VectorType::get({4}, kvElt));
    Value bytes = vector::ShuffleOp::create(
        b, four, four, ArrayRef<int64_t>{2 * half, 2 * half + 1});
    h = fp8ToF16(b, bytes, sm);
    if (fp8TimesUnit(kvElt, sm)) {
      Value unit = arith::ConstantOp::create(
          b, halves, DenseElementsAttr::get(halves, b.getF16FloatAttr(256)));
      h = arith::MulFOp::create(b, h, unit);
    }
  }
  if (elt.isBF16()) {
    // Every decoded byte is exact in bf16 too (at most 4 significant
    // bits for fp8, 7 for i8), so the rounding changes nothing.
    Value wide =
        arith::ExtFOp::create(b, VectorType::get({2}, b.getF32Type()), h);
    h = arith::TruncFOp::create(b, VectorType::get({2}, elt), wide);
  }
  return packPair(b, h);
}

SmallVector<Value> ByteFragments::loadWords(Value tile, Value row, Value col,
                                            int64_t n) {
  auto type = cast<MemRefType>(tile.getType());
  const int64_t chunks = type.getShape().back() / 16;
  Value chunk = arith::DivUIOp::create(b, col, idx(16));
  Value within = arith::RemUIOp::create(b, col, idx(16));
  Value placed =
      arith::XOrIOp::create(b, chunk, byteChunkSwizzle(b, row, chunks));
  Value at = arith::AddIOp::create(b, arith::MulIOp::create(b, placed, idx(16)),
                                   within);
  Value x = vector::LoadOp::create(b, VectorType::get({n}, kvElt), tile,
                                   ValueRange{row, at}, /*nontemporal=*/false,
                                   llvm::Align(n));
  Value bytes =
      arith::BitcastOp::create(b, VectorType::get({n}, b.getI8Type()), x);
  Value words = vector::BitCastOp::create(
      b, VectorType::get({n / 4}, b.getI32Type()), bytes);
  SmallVector<Value> out;
  for (int64_t i = 0; i < n / 4; ++i) {
    Value w = vector::ExtractOp::create(b, words, i);
    // i8: every byte offset by 0x80, once a word (decodeHalf's bias).
    if (kvFormatOf(kvElt) == KVFormat::Int8) {
      Value offset = i32(0x80808080);
      w = arith::XOrIOp::create(b, w, offset);
    }
    out.push_back(w);
  }
  return out;
}

SmallVector<Value> ByteFragments::loadQ(Value qs, Value row, int64_t d) {
  auto regs = VectorType::get({4}, b.getI32Type());
  auto eight = VectorType::get({8}, elt);
  SmallVector<Value> frags;
  for (int64_t H = 0; H < d / 64; ++H) {
    // Rows g and g + 8: 16 columns from 64H + 16t, two 16-byte chunks.
    Value cols[2];
    for (int64_t rh = 0; rh < 2; ++rh) {
      Value r = arith::AddIOp::create(b, row,
                                      arith::AddIOp::create(b, g, idx(8 * rh)));
      Value first = scaled(t2, 8, 64 * H);
      Value lo = vector::LoadOp::create(
          b, eight, qs, ValueRange{r, swizzleColumn(b, r, first)},
          /*nontemporal=*/false, llvm::Align(16));
      Value second = arith::AddIOp::create(b, first, idx(8));
      Value hi = vector::LoadOp::create(
          b, eight, qs, ValueRange{r, swizzleColumn(b, r, second)},
          /*nontemporal=*/false, llvm::Align(16));
      cols[rh] = vector::ShuffleOp::create(b, lo, hi,
                                           ArrayRef<int64_t>{0, 1, 2, 3, 4, 5,
                                                             6, 7, 8, 9, 10, 11,
                                                             12, 13, 14, 15});
    }
    for (int64_t q = 0; q < 4; ++q) {
      // Register i: row half i & 1, column half i >> 1, which stand for
      // columns 4q + 2 (i >> 1) + {0, 1} of the lane's 16.
      SmallVector<Value> four;
      for (int64_t i = 0; i < 4; ++i) {
        int64_t at = 4 * q + 2 * (i >> 1);
        Value pair = vector::ShuffleOp::create(b, cols[i & 1], cols[i & 1],
                                               ArrayRef<int64_t>{at, at + 1});
        four.push_back(packPair(b, pair));
      }
      frags.push_back(vector::FromElementsOp::create(b, regs, four));
    }
  }
  return frags;
}

SmallVector<Value> ByteFragments::loadK(Value ks, Value key, int64_t d) {
  auto regs = VectorType::get({4}, b.getI32Type());
  SmallVector<Value> frags;
  for (int64_t H = 0; H < d / 64; ++H) {
    // Keys g and 8 + g (the tile's two 8-key halves), 16 bytes each.
    SmallVector<Value> words[2];
    for (int64_t h = 0; h < 2; ++h) {
      Value r = arith::AddIOp::create(b, key,
                                      arith::AddIOp::create(b, g, idx(8 * h)));
      Value col = scaled(t2, 8, 64 * H);
      words[h] = loadWords(ks, r, col, 16);
    }
    for (int64_t q = 0; q < 4; ++q) {
      // Half h in registers 2h, 2h + 1; register j from word q's bytes
      // 2j, 2j + 1.
      SmallVector<Value> four;
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t j = 0; j < 2; ++j)
          four.push_back(decodeHalf(words[h][q], j));
      frags.push_back(vector::FromElementsOp::create(b, regs, four));
    }
  }
  return frags;
}

SmallVector<Value> ByteFragments::loadV(Value vs, Value key, int64_t dv) {
  auto regs = VectorType::get({4}, b.getI32Type());
  SmallVector<Value> frags;
  for (int64_t G = 0; G < dv / 32; ++G) {
    // Keys 2t, 2t + 1, 2t + 8, 2t + 9: 4 bytes each from column 32G + 4g.
    Value words[4];
    Value col = scaled(g, 4, 32 * G);
    for (int64_t i = 0; i < 4; ++i) {
      Value r = arith::AddIOp::create(
          b, key, arith::AddIOp::create(b, t2, idx(8 * (i / 2) + i % 2)));
      words[i] = loadWords(vs, r, col, 4).front();
    }
    for (int64_t s = 0; s < 2; ++s) {
      // Block 2G + s: n-tiles u = 2s (half 0) and 2s + 1 (half 1), each
      // register j pairing keys 2t + 8j and 2t + 8j + 1 at byte u; one
      // prmt gathers both halves' pairs of keys j.
      const int64_t u = 2 * s;
      Value pairs[2];
      for (int64_t j = 0; j < 2; ++j)
        pairs[j] = permute(words[2 * j], words[2 * j + 1],
                           u | (4 + u) << 4 | (u + 1) << 8 | (5 + u) << 12);
      SmallVector<Value> four;
      for (int64_t half = 0; half < 2; ++half)
        for (int64_t j = 0; j < 2; ++j)
          four.push_back(decodeHalf(pairs[j], half));
      frags.push_back(vector::FromElementsOp::create(b, regs, four));
    }
  }
  return frags;
}

Value ByteFragments::valueColumn(int64_t nb, int64_t e) {
  return scaled(t2, 4, 32 * (nb / 2) + 4 * (e % 2) + 2 * (nb % 2) + e / 4);
}

Value ByteFragments::groupColumn(int64_t group) {
  return scaled(t2, 4, 32 * group);
}
