//===- TileMMA.h - 16x16x16 warp tile products, WMMA or mma.sync -*- C++ -*-===//
//
// The wmma tier's kernel multiplies 16x16 tiles held by one warp: A and B
// loaded from shared memory, C accumulated in registers, stored back or
// rescaled element-wise. Two instruction sets do it behind this interface:
//
//  - WMMA (gpu.subgroup_mma, m16n16k16): fragments are opaque; f16 only,
//    because gpu.subgroup_mma has no bf16.
//  - mma.sync m16n8k16 (nvvm.mma.sync, two per 16x16 tile): fragments in
//    the register layout the PTX ISA documents, loaded and stored by each
//    lane itself; f16 and bf16, sm_80+.
//
// A kernel uses one of them for every fragment, so the layouts never mix.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_TILEMMA_H
#define ATTN_CODEGEN_NVPTX_TILEMMA_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <memory>

namespace mlir::attn::nvptx {

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

/// mma.sync fragments of `elt` (f16 or bf16) inputs; `lane` is the thread's
/// lane in its warp.
std::unique_ptr<TileMMA> createMmaSyncTileMMA(ImplicitLocOpBuilder &b,
                                              Type elt, Value lane);

} // namespace mlir::attn::nvptx

#endif // ATTN_CODEGEN_NVPTX_TILEMMA_H
