// tanh past 45, where Metal's fast tanh is NaN: run-tests.sh builds this in
// both math modes (ATTN_MSL_MATH=ieee and fast). Plain tanh is the fast one
// only under fast math; fast:: and precise:: do not depend on the mode. The
// kernel's own arithmetic is fast-math only in fast mode: a finite sentinel
// compares as written in both.
#include <metal_stdlib>
using namespace metal;

kernel void tanh_variants(device const float *in [[buffer(0)]],
                          device float *out [[buffer(1)]],
                          uint tid [[thread_index_in_threadgroup]]) {
  if (tid != 0)
    return;
  const float big = in[0], small = in[1];
  out[0] = tanh(big);
  out[1] = fast::tanh(big);
  out[2] = precise::tanh(big);
  out[3] = fast::tanh(small);
  out[4] = precise::tanh(small);
  out[5] = float(precise::tanh(half(big)));
  out[6] = fast::tanh(-big);
  const float no_score = -FLT_MAX / 2.0f;
  const float m = max(no_score, in[2]);
  out[7] = m > no_score ? fast::exp2(small - m) : 0.0f;
}
