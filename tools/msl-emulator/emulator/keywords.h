//===- emulator/keywords.h - MSL keywords and attributes --------*- C++ -*-===//
//
// A part of metal_emulator.h, which includes the parts in order: each
// builds on those before it and is not included on its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_MSL_EMULATOR_EMULATOR_KEYWORDS_H
#define ATTN_TOOLS_MSL_EMULATOR_EMULATOR_KEYWORDS_H

#pragma clang system_header

//===----------------------------------------------------------------------===//
// MSL keywords and attributes, last so that no header above sees them.
//===----------------------------------------------------------------------===//

// Address spaces: distinct clang address spaces (all of them host memory);
// thread is the default one. constant is read-only.
#define device ATTN_MSL_AS_DEVICE
#define constant const ATTN_MSL_AS_CONSTANT
#define thread
#define threadgroup ATTN_MSL_AS_THREADGROUP
#define kernel

// Kernel parameter attributes become default arguments that read the
// running thread's launch: `T p [[buffer(2)]]` turns into
// `T p [[]] = buffer_param(2)[kAttributeEnd[0]]`, the `]]` of the attribute
// closing the two subscripts.
#define ATTN_MSL_PARAM(SOURCE)                                                 \
  ]] = ::attn_msl::detail::SOURCE[::attn_msl::detail::kAttributeEnd[0
#define buffer(index) ATTN_MSL_PARAM(buffer_param(index))
// msl-emu-cc.sh rewrites [[threadgroup(n)]] to this: `threadgroup` is
// already the (empty) address-space macro.
#define ATTN_MSL_THREADGROUP_PARAM(index)                                      \
  ATTN_MSL_PARAM(threadgroup_param(index))
#define ATTN_MSL_BUILTIN(NAME)                                                 \
  ATTN_MSL_PARAM(builtin_param<::attn_msl::detail::Builtin::NAME>())
#define threadgroup_position_in_grid                                           \
  ATTN_MSL_BUILTIN(kThreadgroupPositionInGrid)
#define thread_position_in_threadgroup                                         \
  ATTN_MSL_BUILTIN(kThreadPositionInThreadgroup)
#define thread_position_in_grid ATTN_MSL_BUILTIN(kThreadPositionInGrid)
#define threads_per_threadgroup ATTN_MSL_BUILTIN(kThreadsPerThreadgroup)
#define threadgroups_per_grid ATTN_MSL_BUILTIN(kThreadgroupsPerGrid)
#define threads_per_grid ATTN_MSL_BUILTIN(kThreadsPerGrid)
#define thread_index_in_threadgroup ATTN_MSL_BUILTIN(kThreadIndexInThreadgroup)
#define thread_index_in_simdgroup ATTN_MSL_BUILTIN(kThreadIndexInSimdgroup)
#define simdgroup_index_in_threadgroup                                         \
  ATTN_MSL_BUILTIN(kSimdgroupIndexInThreadgroup)
#define threads_per_simdgroup ATTN_MSL_BUILTIN(kThreadsPerSimdgroup)
#define simdgroups_per_threadgroup ATTN_MSL_BUILTIN(kSimdgroupsPerThreadgroup)

// Vector constructors: float4(a, b, c, d), float4(x), float4(half4 v),
// float4(float2 v, z, w). A function-like macro expands only before `(`, so
// `float4 v;` still names the type.
#define float2(...) ::attn_msl::detail::make_vector<::float2>(__VA_ARGS__)
#define float3(...) ::attn_msl::detail::make_vector<::float3>(__VA_ARGS__)
#define float4(...) ::attn_msl::detail::make_vector<::float4>(__VA_ARGS__)
#define half2(...) ::attn_msl::detail::make_vector<::half2>(__VA_ARGS__)
#define half3(...) ::attn_msl::detail::make_vector<::half3>(__VA_ARGS__)
#define half4(...) ::attn_msl::detail::make_vector<::half4>(__VA_ARGS__)
#define bfloat2(...) ::attn_msl::detail::make_vector<::bfloat2>(__VA_ARGS__)
#define bfloat3(...) ::attn_msl::detail::make_vector<::bfloat3>(__VA_ARGS__)
#define bfloat4(...) ::attn_msl::detail::make_vector<::bfloat4>(__VA_ARGS__)
#define int2(...) ::attn_msl::detail::make_vector<::int2>(__VA_ARGS__)
#define int3(...) ::attn_msl::detail::make_vector<::int3>(__VA_ARGS__)
#define int4(...) ::attn_msl::detail::make_vector<::int4>(__VA_ARGS__)
#define uint2(...) ::attn_msl::detail::make_vector<::uint2>(__VA_ARGS__)
#define uint3(...) ::attn_msl::detail::make_vector<::uint3>(__VA_ARGS__)
#define uint4(...) ::attn_msl::detail::make_vector<::uint4>(__VA_ARGS__)
#define short2(...) ::attn_msl::detail::make_vector<::short2>(__VA_ARGS__)
#define short3(...) ::attn_msl::detail::make_vector<::short3>(__VA_ARGS__)
#define short4(...) ::attn_msl::detail::make_vector<::short4>(__VA_ARGS__)
#define ushort2(...) ::attn_msl::detail::make_vector<::ushort2>(__VA_ARGS__)
#define ushort3(...) ::attn_msl::detail::make_vector<::ushort3>(__VA_ARGS__)
#define ushort4(...) ::attn_msl::detail::make_vector<::ushort4>(__VA_ARGS__)
#define char2(...) ::attn_msl::detail::make_vector<::char2>(__VA_ARGS__)
#define char3(...) ::attn_msl::detail::make_vector<::char3>(__VA_ARGS__)
#define char4(...) ::attn_msl::detail::make_vector<::char4>(__VA_ARGS__)
#define uchar2(...) ::attn_msl::detail::make_vector<::uchar2>(__VA_ARGS__)
#define uchar3(...) ::attn_msl::detail::make_vector<::uchar3>(__VA_ARGS__)
#define uchar4(...) ::attn_msl::detail::make_vector<::uchar4>(__VA_ARGS__)
#define long2(...) ::attn_msl::detail::make_vector<::long2>(__VA_ARGS__)
#define long3(...) ::attn_msl::detail::make_vector<::long3>(__VA_ARGS__)
#define long4(...) ::attn_msl::detail::make_vector<::long4>(__VA_ARGS__)
#define ulong2(...) ::attn_msl::detail::make_vector<::ulong2>(__VA_ARGS__)
#define ulong3(...) ::attn_msl::detail::make_vector<::ulong3>(__VA_ARGS__)
#define ulong4(...) ::attn_msl::detail::make_vector<::ulong4>(__VA_ARGS__)

#endif // ATTN_TOOLS_MSL_EMULATOR_EMULATOR_KEYWORDS_H
