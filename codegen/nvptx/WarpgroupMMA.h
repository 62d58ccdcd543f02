//===- WarpgroupMMA.h - wgmma products of the wgmma tier --------*- C++ -*-===//
//
// Hopper's warpgroup MMA (wgmma.mma_async, sm_90a): the four consecutive
// warps of a warpgroup compute a 64 x N product together, B (and A, for
// Q K^T) read by the tensor cores straight from shared memory through
// 64-bit matrix descriptors, the f32 accumulators in registers.
//
// Shared tiles are in the tier's `SwizzledBlocks` layout (PrefillPlan.h):
// 64-column blocks of 128-byte rows, one after another, each row's 16-byte
// chunks permuted by chunk ^ (row % 8). That is wgmma's 128-byte swizzle
// (the hardware XORs address bits 4-6 with bits 7-9), so every block must
// start on a 1024-byte boundary of shared memory. Seen through CUTLASS's
// canonical layouts (cute/arch/mma_sm90_desc.hpp), in 16-byte units T:
//
//   K-major (Q, K: the reduction dim contiguous)
//     ((8, m), (T, 2)) : ((8T, SBO), (1, T))     SBO = 1024 bytes, LBO unused
//   MN-major (V: the output columns contiguous)
//     ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO))
//                      LBO = one 64-column block, SBO = 1024 bytes
//
// A K step of 16 elements moves a K-major descriptor by 32 bytes inside
// the block (the swizzle applies to the address, so the step is a plain
// add) and an MN-major one by 16 rows.
//
// Each warp's share of a 64 x N accumulator is the m16n8 C fragments of
// its 16 rows (warp w of the group: rows 16w..16w+15), register 4j + e at
// column 8j, exactly mma.sync's accumulator layout (TileMMA.h); and the A
// operand in registers is mma.sync's A fragment. So the register score
// stage's softmax runs unchanged on wgmma's results.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_WARPGROUPMMA_H
#define ATTN_CODEGEN_NVPTX_WARPGROUPMMA_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn::nvptx {

/// Threads of a warpgroup.
constexpr int64_t kWarpgroup = 128;
/// Bytes of a swizzled block's row (64 16-bit elements), and of its 8-row
/// swizzle atom (a descriptor's stride byte offset).
constexpr int64_t kBlockRow = 128, kSwizzleAtom = 8 * kBlockRow;

class WarpgroupMMA {
public:
  /// `shared` is the block's dynamic shared memory (memref<?xi8, 3>);
  /// `elt` is f16 or bf16.
  WarpgroupMMA(ImplicitLocOpBuilder &b, Value shared, Type elt);

  /// S[64 x n] = A B^T for A the 64 rows of a K-major tile from
  /// `aRow` (of `aRows`) and B the n rows of a K-major tile, both `k`
  /// elements wide at byte offsets `aTile`, `bTile`. Returns n / 16
  /// accumulator tiles (vector<8xf32>, mma.sync's layout).
  SmallVector<Value> productKMajor(Value aTile, int64_t aRows, Value aRow,
                                   Value bTile, int64_t n, int64_t k);
  /// The same product, issued and left running: its tiles may be read
  /// only after a wait (settle).
  SmallVector<Value> issueKMajor(Value aTile, int64_t aRows, Value aRow,
                                 Value bTile, int64_t n, int64_t k);
  /// acc[64 x n] += A B for A in registers (k / 16 mma.sync A fragments,
  /// vector<4xi32>) and B an MN-major tile of k rows, n wide, at `bTile`.
  /// Without `wait` the product is left running: its results may be read
  /// only after a later wait (settle).
  SmallVector<Value> productRegisters(ArrayRef<Value> a, Value bTile,
                                      int64_t n, int64_t k,
                                      ArrayRef<Value> acc, bool wait = true);
  /// Waits for every product in flight; `tiles` (what they write) come
  /// back readable.
  SmallVector<Value> settle(ArrayRef<Value> tiles);

private:
  /// Pins `vectors` (of f32 or i32, one type) in place across a wgmma
  /// fence or wait: an empty asm with side effects that reads and writes
  /// each register, so LLVM computes operands before the fence and reads
  /// results after the wait (CUTLASS's warpgroup_fence_operand).
  SmallVector<Value> pin(ArrayRef<Value> vectors);
  Value idx(int64_t v);

  ImplicitLocOpBuilder &b;
  Type elt;
  /// The shared address of the dynamic shared memory, i64.
  Value base;
};

} // namespace mlir::attn::nvptx

#endif // ATTN_CODEGEN_NVPTX_WARPGROUPMMA_H
