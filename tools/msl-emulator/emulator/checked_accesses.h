//===- emulator/checked_accesses.h - the checked accesses -------*- C++ -*-===//
//
// A part of metal_emulator.h, which includes the parts in order: each
// builds on those before it and is not included on its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_MSL_EMULATOR_EMULATOR_CHECKED_ACCESSES_H
#define ATTN_TOOLS_MSL_EMULATOR_EMULATOR_CHECKED_ACCESSES_H

#pragma clang system_header

//===----------------------------------------------------------------------===//
// The checked accesses: msl-emu-cc.sh compiles the kernel file, and only it,
// with clang's ThreadSanitizer instrumentation (-fsanitize=thread, no TSan
// runtime linked; ATTN_MSL_CHECKED_ACCESSES). Every load and store of the
// kernel calls one of these, which check it against the launch's device
// buffers and threadgroup memory (attn_msl::detail::checked_access). Weak,
// so that every translation unit may have them.
//===----------------------------------------------------------------------===//

#ifdef ATTN_MSL_CHECKED_ACCESSES
#define ATTN_MSL_TSAN_CALLBACK extern "C" __attribute__((weak, no_sanitize("thread")))
ATTN_MSL_TSAN_CALLBACK void __tsan_init() {}
ATTN_MSL_TSAN_CALLBACK void __tsan_func_entry(void *) {}
ATTN_MSL_TSAN_CALLBACK void __tsan_func_exit() {}
#define ATTN_MSL_TSAN_ACCESS(N)                                                \
  ATTN_MSL_TSAN_CALLBACK void __tsan_read##N(void *p) {                        \
    ::attn_msl::detail::checked_access(p, N, false);                           \
  }                                                                            \
  ATTN_MSL_TSAN_CALLBACK void __tsan_write##N(void *p) {                       \
    ::attn_msl::detail::checked_access(p, N, true);                            \
  }                                                                            \
  ATTN_MSL_TSAN_CALLBACK void __tsan_unaligned_read##N(void *p) {              \
    ::attn_msl::detail::checked_access(p, N, false);                           \
  }                                                                            \
  ATTN_MSL_TSAN_CALLBACK void __tsan_unaligned_write##N(void *p) {             \
    ::attn_msl::detail::checked_access(p, N, true);                            \
  }                                                                            \
  ATTN_MSL_TSAN_CALLBACK void __tsan_volatile_read##N(void *p) {               \
    ::attn_msl::detail::checked_access(p, N, false);                           \
  }                                                                            \
  ATTN_MSL_TSAN_CALLBACK void __tsan_volatile_write##N(void *p) {              \
    ::attn_msl::detail::checked_access(p, N, true);                            \
  }
ATTN_MSL_TSAN_ACCESS(1)
ATTN_MSL_TSAN_ACCESS(2)
ATTN_MSL_TSAN_ACCESS(4)
ATTN_MSL_TSAN_ACCESS(8)
ATTN_MSL_TSAN_ACCESS(16)
#undef ATTN_MSL_TSAN_ACCESS
ATTN_MSL_TSAN_CALLBACK void __tsan_read_range(void *p, unsigned long n) {
  ::attn_msl::detail::checked_access(p, n, false);
}
ATTN_MSL_TSAN_CALLBACK void __tsan_write_range(void *p, unsigned long n) {
  ::attn_msl::detail::checked_access(p, n, true);
}
ATTN_MSL_TSAN_CALLBACK void *__tsan_memcpy(void *d, const void *s, size_t n) {
  ::attn_msl::detail::checked_access(s, n, false);
  ::attn_msl::detail::checked_access(d, n, true);
  return std::memcpy(d, s, n);
}
ATTN_MSL_TSAN_CALLBACK void *__tsan_memmove(void *d, const void *s, size_t n) {
  ::attn_msl::detail::checked_access(s, n, false);
  ::attn_msl::detail::checked_access(d, n, true);
  return std::memmove(d, s, n);
}
ATTN_MSL_TSAN_CALLBACK void *__tsan_memset(void *d, int c, size_t n) {
  ::attn_msl::detail::checked_access(d, n, true);
  return std::memset(d, c, n);
}
#undef ATTN_MSL_TSAN_CALLBACK
#endif

#endif // ATTN_TOOLS_MSL_EMULATOR_EMULATOR_CHECKED_ACCESSES_H
