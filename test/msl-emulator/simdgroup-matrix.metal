// simdgroup_matrix: the thread_elements() lane layout, loads and stores with
// origin and transpose, and 8x8 multiply-accumulate in float, half and
// bfloat.
#include <metal_stdlib>
using namespace metal;

// Each lane fills its two elements with row * 8 + col by the documented
// layout; stores show where the elements landed. Then a load shows which
// elements a lane receives.
kernel void layout(device float *stored [[buffer(0)]],
                   device const float *source [[buffer(1)]],
                   device float *loaded [[buffer(2)]],
                   ushort lane [[thread_index_in_simdgroup]]) {
  ushort q = lane / 4;
  ushort row = (q & 4) + (lane / 2) % 4;
  ushort col = (q & 2) * 2 + (lane % 2) * 2;
  simdgroup_float8x8 m;
  m.thread_elements()[0] = float(row * 8 + col);
  m.thread_elements()[1] = float(row * 8 + col + 1);
  simdgroup_store(m, stored, 8);
  simdgroup_store(m, stored + 64, 8, ulong2(0, 0), true);
  // An 8x8 block at column 8, row 2 of a 10 x 16 matrix.
  simdgroup_store(m, stored + 128, 16, ulong2(8, 2));
  simdgroup_store(simdgroup_float8x8(3.0f), stored + 288, 8);
  simdgroup_store(make_filled_simdgroup_matrix<float, 8, 8>(-2.0f),
                  stored + 352, 8);

  simdgroup_float8x8 l;
  simdgroup_load(l, source, 12, ulong2(3, 1));
  loaded[lane * 2] = l.thread_elements()[0];
  loaded[lane * 2 + 1] = l.thread_elements()[1];
  simdgroup_float8x8 t;
  simdgroup_load(t, source, 12, ulong2(3, 1), true);
  loaded[64 + lane * 2] = t.thread_elements()[0];
  loaded[64 + lane * 2 + 1] = t.thread_elements()[1];
}

struct GemmShape {
  uint m, n, k;
};

// C = A * B + C, all float, B row-major K x N; one simdgroup walks all tiles.
kernel void gemm_float(device const float *a [[buffer(0)]],
                       device const float *b [[buffer(1)]],
                       device float *c [[buffer(2)]],
                       constant GemmShape &shape [[buffer(3)]]) {
  for (uint i = 0; i < shape.m; i += 8)
    for (uint j = 0; j < shape.n; j += 8) {
      simdgroup_float8x8 acc;
      simdgroup_load(acc, c, shape.n, ulong2(j, i));
      for (uint k = 0; k < shape.k; k += 8) {
        simdgroup_float8x8 ta, tb;
        simdgroup_load(ta, a, shape.k, ulong2(k, i));
        simdgroup_load(tb, b, shape.n, ulong2(j, k));
        simdgroup_multiply_accumulate(acc, ta, tb, acc);
      }
      simdgroup_store(acc, c, shape.n, ulong2(j, i));
    }
}

// C = A * B with half inputs and a float accumulator; B is given transposed
// (N x K row-major) and loaded with transpose.
kernel void gemm_half_float_acc(device const half *a [[buffer(0)]],
                                device const half *bt [[buffer(1)]],
                                device float *c [[buffer(2)]],
                                constant GemmShape &shape [[buffer(3)]]) {
  for (uint i = 0; i < shape.m; i += 8)
    for (uint j = 0; j < shape.n; j += 8) {
      simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
      for (uint k = 0; k < shape.k; k += 8) {
        simdgroup_half8x8 ta, tb;
        simdgroup_load(ta, a, shape.k, ulong2(k, i));
        simdgroup_load(tb, bt, shape.k, ulong2(k, j), true);
        simdgroup_multiply_accumulate(acc, ta, tb, acc);
      }
      simdgroup_store(acc, c, shape.n, ulong2(j, i));
    }
}

// bfloat inputs, float accumulator, pointer offsets instead of origins.
kernel void gemm_bfloat_float_acc(device const bfloat *a [[buffer(0)]],
                                  device const bfloat *b [[buffer(1)]],
                                  device float *c [[buffer(2)]],
                                  constant GemmShape &shape [[buffer(3)]]) {
  for (uint i = 0; i < shape.m; i += 8)
    for (uint j = 0; j < shape.n; j += 8) {
      simdgroup_float8x8 acc = simdgroup_float8x8(0.0f);
      for (uint k = 0; k < shape.k; k += 8) {
        simdgroup_bfloat8x8 ta, tb;
        simdgroup_load(ta, a + i * shape.k + k, shape.k);
        simdgroup_load(tb, b + k * shape.n + j, shape.n);
        simdgroup_multiply_accumulate(acc, ta, tb, acc);
      }
      simdgroup_store(acc, c + i * shape.n + j, shape.n);
    }
}

// half accumulator, and simdgroup_multiply by a diagonal matrix (2 * I).
kernel void multiply_half(device const half *a [[buffer(0)]],
                          device const half *b [[buffer(1)]],
                          device half *product [[buffer(2)]],
                          device half *doubled [[buffer(3)]]) {
  simdgroup_half8x8 ta, tb, d;
  simdgroup_load(ta, a);
  simdgroup_load(tb, b);
  simdgroup_multiply(d, ta, tb);
  simdgroup_store(d, product);
  simdgroup_half8x8 twice;
  simdgroup_multiply(twice, simdgroup_half8x8(half(2.0f)), ta);
  simdgroup_store(twice, doubled);
}
