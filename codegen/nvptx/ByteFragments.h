//===- ByteFragments.h - mma.sync operands decoded from one-byte tiles -*- C++
//-*-===//
//
// A quantized K/V cache (fp8 e4m3fn / e5m2, i8) reaches the tensor cores as
// f16 or bf16 fragments decoded in registers, on the way from shared memory
// to mma.sync, so the decode overlaps the copies and the other warps'
// products (converting whole tiles in shared memory between barriers
// measured no faster than the SIMT kernel). Its tiles hold the bytes as
// stored, in nv::TileLayout::Bytes. With g = lane / 4 and t = lane % 4
// (mma.sync's B operand: register j holds B[2t + 8j + {0, 1}][g]):
//
//   K (B of S = Q K^T, k = D): lane (g, t) reads 16 bytes of key g at
//     columns 64H + 16t .. 64H + 16t + 15, four 16-column steps' worth.
//     D's columns are summed over, so the steps see them permuted: in
//     step kk = 4H + q, index 2t + j stands for column 64H + 16t + 4q + j
//     and 2t + 8 + j for 64H + 16t + 4q + 2 + j. Q's A fragments are
//     loaded in the same order (loadQ), once.
//   V (B of acc + P V, k = keys): lane (g, t) reads 4 bytes (columns
//     32G + 4g .. 32G + 4g + 3) of each of its keys 2t, 2t + 1, 2t + 8,
//     2t + 9 (P's columns, unpermuted) and pairs them by column (a 4x4
//     byte transpose), so n-tile u (0..3) of group G holds column
//     32G + 4n + u at its index n. O's columns are permuted in turn:
//     valueColumn says where a thread's accumulator element belongs, and
//     a thread holds 8 consecutive columns of each group G.
//
// Bytes are decoded a 32-bit word at a time (ByteFragments.cpp). Scales
// are not applied here: the kernel multiplies the scores by k_scale and
// O by v_scale, or with a scale per token each key's p in P V.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_BYTEFRAGMENTS_H
#define ATTN_CODEGEN_NVPTX_BYTEFRAGMENTS_H

#include "codegen/nvptx/TileMMA.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn::nvptx {

class ByteFragments {
public:
  /// Fragments of `elt` (f16 or bf16, the products' input type) from K/V
  /// bytes of `kvElt`, on `sm`, for the lane `tiles` places (its g and 2t).
  ByteFragments(ImplicitLocOpBuilder &b, Type elt, Type kvElt, int sm,
                const MmaSyncTileMMA &tiles);

  /// Q's A fragments of rows `row`..`row` + 15 of `qs` (a swizzled tile
  /// of `elt`, TileMMA.h), one per 16 of D, in K's column order.
  SmallVector<Value> loadQ(Value qs, Value row, int64_t d);
  /// K's B fragments (transposed: keys are B's columns) of keys `key`..
  /// `key` + 15 of the byte tile `ks` ([keys, d]), one per 16 of D.
  SmallVector<Value> loadK(Value ks, Value key, int64_t d);
  /// V's B fragments of keys `key`..`key` + 15 of the byte tile `vs`
  /// ([keys, dv]), one per 16-column block of O (valueColumn's order).
  SmallVector<Value> loadV(Value vs, Value key, int64_t dv);
  /// The column of O that element `e` (0..7) of this lane's accumulator
  /// block `nb` holds: 32 (nb / 2) + 8t + 4 (e % 2) + 2 (nb % 2) + e / 4.
  Value valueColumn(int64_t nb, int64_t e);
  /// Its first column of group G (a thread's 8 consecutive): 32G + 8t.
  Value groupColumn(int64_t group);

private:
  Value idx(int64_t v);
  /// x * m + c.
  Value scaled(Value x, int64_t m, int64_t c);
  Value i32(int64_t v);
  /// An i32 `word` as a vector `type` of its bits.
  Value unpack(Value word, VectorType type);
  /// nvvm.prmt of `lo` and `hi` (bytes 0-3 and 4-7) by `selector`.
  Value permute(Value lo, Value hi, int64_t selector);
  /// Bytes 2 `half` and 2 `half` + 1 of `word` decoded into one register
  /// of two `elt`.
  Value decodeHalf(Value word, int64_t half);
  /// `n` bytes of row `row` of byte tile `tile` from byte column `col`
  /// (its chunks placed as nv::TileLayout::Bytes places them), as n / 4
  /// i32 words; an i8 cache's bytes offset by 0x80 (decodeHalf's bias).
  SmallVector<Value> loadWords(Value tile, Value row, Value col, int64_t n);

  ImplicitLocOpBuilder &b;
  Type elt, kvElt;
  int sm;
  /// The lane's g and 2t (MmaSyncTileMMA's laneRow, laneColumn).
  Value g, t2;
};

} // namespace mlir::attn::nvptx

#endif // ATTN_CODEGEN_NVPTX_BYTEFRAGMENTS_H
