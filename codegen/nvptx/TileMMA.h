//===- TileMMA.h - 16x16x16 warp tile products, WMMA or mma.sync -*- C++ -*-===//
//
// The wmma tier's kernel multiplies 16x16 tiles held by one warp: A and B
// loaded from shared memory, C accumulated in registers, stored back or
// rescaled element-wise. Two instruction sets do it behind this interface:
//
//  - WMMA (gpu.subgroup_mma, m16n16k16): fragments are opaque; f16 only,
//    because gpu.subgroup_mma has no bf16.
//  - mma.sync m16n8k16 (attn_nv.mma_tile, two per 16x16 tile, and
//    attn_nv.ldmatrix): fragments in the register layout the PTX ISA
//    documents, loaded and stored by each lane itself; f16 and bf16,
//    sm_80+. attn-nv-to-nvvm expands them into nvvm.mma.sync rather than
//    nvgpu.mma.sync: in LLVM 22 nvgpu.mma.sync cannot lower bf16 operands
//    ("failed to deduce operand PTX types"), and for f16 its
//    vector<4x2xf16> operand form added 65 lines of 16-bit moves to the
//    D64 kernel's PTX (tried 2026-11-24).
//
// A kernel uses one of them for every fragment, so the layouts never mix.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_TILEMMA_H
#define ATTN_CODEGEN_NVPTX_TILEMMA_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <memory>

namespace mlir::attn::nvptx {

/// The mma tier's shared layout for input tiles whose rows are a multiple
/// of 64 elements (128 bytes): rows unpadded, and the 16-byte chunks of
/// each 128 bytes permuted by row, element (r, c) at column
/// c ^ 8 (r % 8). The 8 rows an ldmatrix reads at one column, and the 8
/// chunks a quarter-warp's cp.async writes in one row, then fall in 8
/// distinct groups of 4 banks.
inline bool isSwizzledWidth(int64_t width) { return width % 64 == 0; }
Value swizzleColumn(ImplicitLocOpBuilder &b, Value row, Value col);
/// The one-byte tiles' layout (nv::TileLayout::Bytes): 16-byte chunk k of
/// row r sits at chunk k ^ byteChunkSwizzle(r), which is
/// (4 (r % 2) ^ 2 ((r / 2) % 4)) masked to the row's `chunksPerRow` (a
/// power of two). ByteFragments.h's K reads (rows g, g + 1 at chunks t,
/// 4 + t of a quarter-warp) and V reads (rows 2t + c at one 32-byte
/// column group) then fall in distinct banks.
Value byteChunkSwizzle(ImplicitLocOpBuilder &b, Value row,
                       int64_t chunksPerRow);

/// mma.sync's fragments, for the tiers and for attn-nv-to-nvvm:
/// two 16-bit elements (vector<2xT>) as one i32 register;
Value packPair(ImplicitLocOpBuilder &b, Value two);
/// a thread's accumulator elements of a 16x16 tile (mma.sync's C layout),
/// rounded to `elt`, as the A fragment of the same tile: the two layouts
/// agree, so P = exp(S) feeds P V without leaving registers;
Value accumulatorToA(ImplicitLocOpBuilder &b, Type elt,
                     ArrayRef<Value> elements);
/// an accumulator holding `top` in rows 0-7 and `bottom` in rows 8-15 (a
/// per-row factor for the thread's two rows).
Value rowBroadcast(ImplicitLocOpBuilder &b, Value top, Value bottom);

class TileMMA {
public:
  virtual ~TileMMA() = default;
  /// A[i][k] = mem[row + i][col + k] (elements of the input type).
  virtual Value loadA(Value mem, Value row, Value col, int64_t ld) = 0;
  /// B[k][j] = mem[row + k][col + j], or mem[row + j][col + k] transposed.
  virtual Value loadB(Value mem, Value row, Value col, int64_t ld,
                      bool transpose) = 0;
  /// An f32 accumulator of zeros.
  virtual Value zeroC() = 0;
  /// a * b + c.
  virtual Value mma(Value a, Value b, Value c) = 0;
  /// An f32 tile to and from mem[row + i][col + j].
  virtual void storeC(Value c, Value mem, Value row, Value col,
                      int64_t ld) = 0;
  virtual Value loadC(Value mem, Value row, Value col, int64_t ld) = 0;
  /// Element-wise product of two accumulator-layout tiles.
  virtual Value mulC(Value x, Value y) = 0;
};

/// WMMA fragments of `elt` (f16) inputs.
std::unique_ptr<TileMMA> createWMMATileMMA(ImplicitLocOpBuilder &b, Type elt);

/// mma.sync m16n8k16 fragments of `elt` (f16 or bf16) inputs, in the PTX
/// ISA's register layout (TileMMA.cpp), which the mma tier computes with:
/// element e (0..7) of a thread's accumulator of a 16x16 tile sits at row
/// laneRow() + 8 * rowHalf(e), column laneColumn() + columnOffset(e).
class MmaSyncTileMMA : public TileMMA {
public:
  /// With `swizzled`, ldmatrix reads tiles of isSwizzledWidth rows in the
  /// swizzled layout.
  MmaSyncTileMMA(ImplicitLocOpBuilder &b, Type elt, Value lane,
                 bool swizzled = false);

  Value loadA(Value mem, Value row, Value col, int64_t ld) override;
  Value loadB(Value mem, Value row, Value col, int64_t ld,
              bool transpose) override;
  Value zeroC() override;
  Value mma(Value a, Value b, Value c) override;
  void storeC(Value c, Value mem, Value row, Value col, int64_t ld) override;
  Value loadC(Value mem, Value row, Value col, int64_t ld) override;
  Value mulC(Value x, Value y) override;

  static int64_t rowHalf(int64_t e) { return (e / 2) % 2; }
  static int64_t columnOffset(int64_t e) { return 8 * (e / 4) + e % 2; }
  Type inputType() const { return elt; }
  Value laneRow() const { return g; }
  Value laneColumn() const { return t2; }
  /// The free functions above, on this provider's builder and inputs.
  Value accumulatorToA(ArrayRef<Value> elements) {
    return nvptx::accumulatorToA(b, elt, elements);
  }
  Value rowBroadcast(Value top, Value bottom) {
    return nvptx::rowBroadcast(b, top, bottom);
  }
  /// storeC to a tile of f32 or of the input types, the elements rounded
  /// to it; with `swizzle`, a tile of 2-byte elements in the swizzled
  /// layout (swizzleColumn).
  void storeRounded(Value c, Value mem, Value row, Value col, bool swizzle);

private:
  Value idx(int64_t v);
  Value add(Value x, Value y, int64_t c);
  VectorType i32Vec(int64_t n);
  Value ldmatrix(Value mem, Value row, Value col, Value laneRow,
                 Value laneCol, bool transpose);
  SmallVector<Value> elements(Value v, int64_t n);

  ImplicitLocOpBuilder &b;
  Type elt;
  bool swizzled;
  Value g, t2; // lane / 4 and 2 (lane % 4)
  // ldmatrix addressing: this lane's row and column offsets in a 16x16 tile
  Value rowOfHalf0, colOfHalf1, rowOfHalf1, colOfHalf0;
  Value swizzleMask; // 8 (lane % 8): the swizzle of this lane's rows
};

} // namespace mlir::attn::nvptx

#endif // ATTN_CODEGEN_NVPTX_TILEMMA_H
