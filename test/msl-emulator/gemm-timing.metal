// A tiled GEMM the way an emitter writes one: 4 simdgroups (2x2) per
// threadgroup, each owning a 32x32 block of a 64x64 output tile; half A and
// B staged through threadgroup memory, float accumulators.
#include <metal_stdlib>
using namespace metal;

struct Shape {
  uint m, n, k;
};

constant uint kTile = 64; // output tile per threadgroup
constant uint kStep = 16; // K columns staged per iteration

// a_tile is kTile x kStep, b_tile kStep x kTile.
kernel void gemm_64x64(device const half *a [[buffer(0)]], // m x k
                       device const half *b [[buffer(1)]], // k x n
                       device float *c [[buffer(2)]],      // m x n
                       constant Shape &shape [[buffer(3)]],
                       threadgroup half *a_tile [[threadgroup(0)]],
                       threadgroup half *b_tile [[threadgroup(1)]],
                       uint2 group [[threadgroup_position_in_grid]],
                       uint tid [[thread_index_in_threadgroup]],
                       uint simd [[simdgroup_index_in_threadgroup]]) {
  uint row0 = group.y * kTile, col0 = group.x * kTile;
  uint simd_row = (simd / 2) * 32, simd_col = (simd % 2) * 32;
  simdgroup_float8x8 acc[4][4];
  for (uint i = 0; i < 4; ++i)
    for (uint j = 0; j < 4; ++j)
      acc[i][j] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);

  for (uint k0 = 0; k0 < shape.k; k0 += kStep) {
    for (uint e = tid; e < kTile * kStep; e += 128) {
      uint r = e / kStep, kk = e % kStep;
      a_tile[e] = a[(row0 + r) * shape.k + k0 + kk];
      uint kr = e / kTile, cc = e % kTile;
      b_tile[e] = b[(k0 + kr) * shape.n + col0 + cc];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint kk = 0; kk < kStep; kk += 8) {
      simdgroup_half8x8 ta[4], tb[4];
      for (uint i = 0; i < 4; ++i)
        simdgroup_load(ta[i], a_tile, kStep, ulong2(kk, simd_row + i * 8));
      for (uint j = 0; j < 4; ++j)
        simdgroup_load(tb[j], b_tile, kTile, ulong2(simd_col + j * 8, kk));
      for (uint i = 0; i < 4; ++i)
        for (uint j = 0; j < 4; ++j)
          simdgroup_multiply_accumulate(acc[i][j], ta[i], tb[j], acc[i][j]);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  for (uint i = 0; i < 4; ++i)
    for (uint j = 0; j < 4; ++j)
      simdgroup_store(acc[i][j], c, shape.n,
                      ulong2(col0 + simd_col + j * 8, row0 + simd_row + i * 8));
}
