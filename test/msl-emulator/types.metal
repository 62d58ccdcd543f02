// Scalar and vector types, conversions and math, checked value by value.
#include <metal_stdlib>
using namespace metal;

// Narrowing to bfloat; the host gives the inputs and expects exact bits.
// The emulator rounds double to bfloat correctly too (a double can arise
// in C++ from an unsuffixed literal), though MSL itself has no double:
// msl-check: allow double
kernel void bfloat_rounding(device const float *from_float [[buffer(0)]],
                            device const ulong *from_double_bits [[buffer(1)]],
                            device ushort *bits [[buffer(2)]],
                            device float *arithmetic [[buffer(3)]],
                            uint i [[thread_position_in_grid]]) {
  bits[i] = as_type<ushort>(bfloat(from_float[i]));
  double d = as_type<double>(from_double_bits[i]);
  bits[32 + i] = as_type<ushort>(bfloat(d));
  bfloat a = bfloat(from_float[i]), b = bfloat(0.375f);
  arithmetic[i] = float(a * b + a); // rounded to bfloat after each operation
}

// Everything else on one thread; each result goes to its own slot.
kernel void scalar_and_vector_ops(device const float *in [[buffer(0)]],
                                  device float *out [[buffer(1)]],
                                  uint tid [[thread_index_in_threadgroup]]) {
  if (tid != 0)
    return;
  float x = in[0], y = in[1]; // x in (0.5, 2), y in (-2, -0.5)
  uint n = 0;
  // Math on float.
  out[n++] = exp(x);
  out[n++] = exp2(y);
  out[n++] = log(x);
  out[n++] = log2(x);
  out[n++] = max(x, y);
  out[n++] = min(x, y);
  out[n++] = fmax(y, x);
  out[n++] = fabs(y);
  out[n++] = tanh(y);
  out[n++] = sqrt(x);
  out[n++] = rsqrt(x);
  out[n++] = select(x, y, x > 0.0f);
  out[n++] = clamp(y, -1.0f, 1.0f);
  out[n++] = fast::exp(x);
  out[n++] = precise::exp(x);
  out[n++] = metal::exp2(-INFINITY);
  out[n++] = max(-INFINITY, y);
  out[n++] = abs(y) + float(abs(-3));
  out[n++] = fma(x, y, 1.0f);
  // half: per-operation rounding; 1000 + 0.01 is 1000 in half.
  half big = 1000.0h, tiny = half(0.01f);
  out[n++] = float(big + tiny - big);
  out[n++] = float(0.5h + 2h);
  out[n++] = float(exp(half(x)));
  out[n++] = float(max(half(x), half(y)));
  // Vectors: constructors, swizzles, component-wise math.
  float4 v = float4(1.0f, 2.0f, 3.0f, 4.0f);
  float4 splat = float4(x);
  float4 joined = float4(v.zw, float2(y, 5.0f));
  float3 three = float3(v.xy, 7.0f);
  half4 narrowed = half4(v * 0.5f);
  uint2 u = uint2(3, 9);
  float2 swapped = v.yx;
  v.xy = float2(10.0f, 20.0f);
  out[n++] = v.x + v.y * 100.0f + v.z * 10000.0f + v.w * 1000000.0f;
  out[n++] = splat.w;
  out[n++] = joined.x + joined.y * 10.0f + joined.w * 100.0f + joined.z;
  out[n++] = three.z + three.x + float(sizeof(float3));
  out[n++] = float(narrowed.w) + float(narrowed.x);
  out[n++] = float(u.y - u.x);
  out[n++] = swapped.x;
  out[n++] = dot(float3(1.0f, 2.0f, 3.0f), float3(4.0f, 5.0f, 6.0f));
  float4 m = max(float4(x, y, 0.0f, -x), float4(y, x, 1.0f, -y));
  out[n++] = m.x + m.y + m.z + m.w;
  float4 e = exp2(float4(1.0f, 2.0f, 3.0f, -1.0f));
  out[n++] = e.x + e.y + e.z + e.w;
  float4 s = select(float4(1.0f), float4(2.0f), float4(x, y, x, y) > 0.0f);
  out[n++] = s.x * 1000.0f + s.y * 100.0f + s.z * 10.0f + s.w;
  out[n++] = float(all(float2(x, 1.0f) > 0.0f)) +
             10.0f * float(any(float2(y, -1.0f) > 0.0f));
  out[n++] = float(as_type<uint>(1.0f) == 0x3f800000u);
  // The rest of the math the README lists.
  out[n++] = exp10(y);
  out[n++] = log10(x);
  out[n++] = sin(y);
  out[n++] = cos(y);
  out[n++] = floor(y * 3.0f) + ceil(x * 3.0f) * 100.0f;
  out[n++] = trunc(y * 3.0f) + round(x * 3.0f) * 100.0f + rint(2.5f) * 10000.0f;
  out[n++] = saturate(x) + saturate(y) * 10.0f;
  out[n++] = fmin(x, y);
  out[n++] = pow(x, 3.5f) + powr(x, 0.5f);
  out[n++] = fmod(x * 7.0f, 1.5f);
  out[n++] = divide(x, y);
  out[n++] = mix(x, y, 0.25f);
  out[n++] = float(isnan(NAN)) + float(isinf(-INFINITY)) * 10.0f +
             float(isfinite(x)) * 100.0f + float(isnan(x)) * 1000.0f;
  out[n++] = float(exp(bfloat(x)));
  half2 hv = sqrt(half2(half(x), 4.0h));
  out[n++] = float(hv.x) + float(hv.y) * 10.0f;
  out[n++] = float(clamp(7, 0, 5) + min(3u, 9u) * 10u);
  out[n++] = float(n); // how many came before
}
