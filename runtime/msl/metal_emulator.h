//===- metal_emulator.h - Run attn's MSL subset on the CPU -------*- C++
//-*-===//
//
// The subset of the Metal Shading Language that attn's MSL emitter produces,
// implemented in C++17 so that an emitted .metal file compiles with clang++
// and runs on the CPU. Threads of a threadgroup are cooperative fibers; SIMD
// collectives, simdgroup_matrix operations and barriers suspend a thread until
// every participant has arrived. A launch that cannot make progress (a barrier
// or collective some threads never reach) is reported as an error naming the
// kernel, threadgroup, threads and construct; it never hangs. Address spaces
// are distinct types; device buffers and threadgroup memory sit between
// guard pages, and kernels built by msl-emu-cc.sh have every load and store
// bounds-checked, and threadgroup memory checked for races (missing
// barriers); threads can run in several orders (ATTN_MSL_SCHEDULE).
//
// Compile emitted kernels through runtime/msl/msl-emu-cc.sh, which applies
// the flags and the one source rewrite this header needs. README.md describes
// the subset, the kernel parameter convention and the execution model.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_MSL_METAL_EMULATOR_H
#define ATTN_RUNTIME_MSL_METAL_EMULATOR_H

// System header: lets us declare the reserved literal suffix `h` (0.5h) and
// keeps the emulator's internals out of the kernel's warnings.
#pragma clang system_header

#if !defined(__clang__)
#error "the MSL emulator needs clang (ext_vector_type, _Float16, __bf16)"
#endif

// Every standard header the emulator needs comes before the MSL keyword
// macros at the end of this file, which would otherwise rewrite them.
#include <algorithm>
#include <atomic>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

//===----------------------------------------------------------------------===//
// Scalar and vector types. MSL declares them outside namespace metal.
//===----------------------------------------------------------------------===//

typedef _Float16 half;
// clang's __bf16 converts from float with round-to-nearest-even (tested in
// types.cpp) and does arithmetic like MSL's bfloat.
typedef __bf16 bfloat;

// Narrowing to __bf16 calls these compiler-runtime functions, which libgcc
// before GCC 13 lacks. `used` makes every translation unit emit them (the
// libcalls are no odr-use), weak lets the linker keep one; either way the
// rounding is to nearest, ties to even, and NaN stays a (quiet) NaN.
extern "C" __attribute__((weak, used)) inline __bf16 __truncsfbf2(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint16_t out;
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    out = uint16_t((bits >> 16) | 0x40u);
  else
    out = uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  return __builtin_bit_cast(__bf16, out);
}

namespace attn_msl {
namespace detail {
// Wider floats go to float rounding to odd (truncate, then set the last bit
// when inexact), so that rounding that float to bfloat gives the correctly
// rounded result, not a double rounding.
template <class Wide> float narrow_to_float_round_to_odd(Wide value) {
  float narrow = static_cast<float>(value);
  if (std::isnan(value) || static_cast<Wide>(narrow) == value)
    return narrow;
  uint32_t bits;
  std::memcpy(&bits, &narrow, sizeof bits);
  if (std::fabs(static_cast<Wide>(narrow)) > std::fabs(value))
    bits -= 1; // rounded away from zero: step back toward zero
  bits |= 1u;
  std::memcpy(&narrow, &bits, sizeof bits);
  return narrow;
}
} // namespace detail
} // namespace attn_msl

extern "C" __attribute__((weak, used)) inline __bf16
__truncdfbf2(double value) {
  return __truncsfbf2(attn_msl::detail::narrow_to_float_round_to_odd(value));
}
extern "C" __attribute__((weak, used)) inline __bf16
__truncxfbf2(long double value) {
  return __truncsfbf2(attn_msl::detail::narrow_to_float_round_to_odd(value));
}

// Same types as glibc's <sys/types.h> typedefs, so both may be visible.
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
typedef unsigned long ulong;

// Address spaces are clang address spaces, so that they are distinct types:
// a device pointer does not convert to a threadgroup one, and simdgroup_load
// takes device or threadgroup memory only. `thread` is the default address
// space, the one of local variables.
//
// ATTN_MSL_ERASE_ADDRESS_SPACES erases them instead (all memory in the
// default address space): clang's ThreadSanitizer instrumentation, which
// the checked accesses rely on, skips accesses in other address spaces, so
// msl-emu-cc.sh type-checks the kernel with address spaces first
// (-fsyntax-only) and then builds it with them erased.
#ifndef ATTN_MSL_ERASE_ADDRESS_SPACES
#define ATTN_MSL_AS_DEVICE __attribute__((address_space(1)))
#define ATTN_MSL_AS_CONSTANT __attribute__((address_space(2)))
#define ATTN_MSL_AS_THREADGROUP __attribute__((address_space(3)))
#else
#define ATTN_MSL_AS_DEVICE
#define ATTN_MSL_AS_CONSTANT
#define ATTN_MSL_AS_THREADGROUP
#endif

namespace attn_msl {
namespace detail {
// The address space of T (0 thread, 1 device, 2 constant, 3 threadgroup) and
// T without it.
template <class T> struct AddressSpace {
  static constexpr int value = 0;
  using type = T;
};
#ifndef ATTN_MSL_ERASE_ADDRESS_SPACES
template <class T> struct AddressSpace<ATTN_MSL_AS_DEVICE T> {
  static constexpr int value = 1;
  using type = T;
};
template <class T> struct AddressSpace<ATTN_MSL_AS_CONSTANT T> {
  static constexpr int value = 2;
  using type = T;
};
template <class T> struct AddressSpace<ATTN_MSL_AS_THREADGROUP T> {
  static constexpr int value = 3;
  using type = T;
};
constexpr bool kTypedAddressSpaces = true;
#else
constexpr bool kTypedAddressSpaces = false;
#endif
template <class T> constexpr int address_space_of = AddressSpace<T>::value;
template <class T>
using plain_t = std::remove_cv_t<typename AddressSpace<T>::type>;
template <class T> constexpr bool dependent_false = false;
} // namespace detail
} // namespace attn_msl

namespace metal {
// MSL vectors: 2-4 components, swizzles (.x .xy .zw ...), component-wise
// arithmetic, 3-component vectors padded to 4 like Metal's.
template <class T, int N> using vec = T __attribute__((ext_vector_type(N)));
} // namespace metal

#define ATTN_MSL_VECTOR_TYPES(T, NAME)                                         \
  typedef metal::vec<T, 2> NAME##2;                                            \
  typedef metal::vec<T, 3> NAME##3;                                            \
  typedef metal::vec<T, 4> NAME##4;
ATTN_MSL_VECTOR_TYPES(float, float)
ATTN_MSL_VECTOR_TYPES(half, half)
ATTN_MSL_VECTOR_TYPES(bfloat, bfloat)
ATTN_MSL_VECTOR_TYPES(int, int)
ATTN_MSL_VECTOR_TYPES(uint, uint)
ATTN_MSL_VECTOR_TYPES(short, short)
ATTN_MSL_VECTOR_TYPES(ushort, ushort)
ATTN_MSL_VECTOR_TYPES(char, char)
ATTN_MSL_VECTOR_TYPES(uchar, uchar)
ATTN_MSL_VECTOR_TYPES(long, long)
ATTN_MSL_VECTOR_TYPES(ulong, ulong)
#undef ATTN_MSL_VECTOR_TYPES

// MSL's half literal suffix: 0.5h, 2h.
constexpr half operator""h(long double value) { return (half)value; }
constexpr half operator""h(unsigned long long value) { return (half)value; }

#ifndef INFINITY
#define INFINITY __builtin_huge_valf()
#endif
#ifndef NAN
#define NAN __builtin_nanf("")
#endif
#ifndef MAXFLOAT
#define MAXFLOAT FLT_MAX
#endif
#define HUGE_VALH ((half)__builtin_huge_valf())
#define HALF_MAX ((half)65504.0f)
#define MAXHALF HALF_MAX
#define M_E_F 2.71828182845904523536f
#define M_LOG2E_F 1.44269504088896340736f
#define M_LOG10E_F 0.434294481903251827651f
#define M_LN2_F 0.693147180559945309417f
#define M_LN10_F 2.30258509299404568402f
#define M_PI_F 3.14159265358979323846f
#define M_SQRT2_F 1.41421356237309504880f
#define M_LOG2E_H ((half)M_LOG2E_F)
#define M_LN2_H ((half)M_LN2_F)

//===----------------------------------------------------------------------===//
// Fibers. On x86-64 a few instructions switch stacks (swapcontext would make
// a signal-mask system call per switch, 100x slower); elsewhere, or with
// ATTN_MSL_USE_UCONTEXT, ucontext does it.
//===----------------------------------------------------------------------===//

#if defined(__x86_64__) && !defined(ATTN_MSL_USE_UCONTEXT)
#define ATTN_MSL_X86_64_FIBERS 1
// Saves the callee-saved registers, MXCSR and the x87 control word on the
// current stack, stores the stack pointer in *save_sp, and resumes the stack
// at next_sp. Weak: every translation unit that includes this header has a
// copy.
extern "C" void attn_msl_fiber_switch(void **save_sp, void *next_sp);
__asm__(".pushsection .text\n"
        ".weak attn_msl_fiber_switch\n"
        ".type attn_msl_fiber_switch,@function\n"
        "attn_msl_fiber_switch:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  subq $8, %rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "  addq $8, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size attn_msl_fiber_switch, .-attn_msl_fiber_switch\n"
        ".popsection\n");
#endif

namespace attn_msl {
namespace detail {

#ifdef ATTN_MSL_X86_64_FIBERS
struct FiberContext {
  void *stack_pointer = nullptr;
};

inline void fiber_switch(FiberContext &from, FiberContext &to) {
  attn_msl_fiber_switch(&from.stack_pointer, to.stack_pointer);
}

// Lays out a stack that attn_msl_fiber_switch "returns" into `entry`, which
// must never return (it switches away for good instead).
inline void fiber_prepare(FiberContext &context, void *stack, size_t bytes,
                          void (*entry)()) {
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + bytes) & ~uintptr_t(15);
  auto *slot = reinterpret_cast<uint64_t *>(top);
  *--slot = 0;                                 // entry's return address
  *--slot = reinterpret_cast<uint64_t>(entry); // popped by `ret`
  for (int i = 0; i < 6; ++i)
    *--slot = 0; // rbp, rbx, r12-r15
  uint32_t mxcsr = __builtin_ia32_stmxcsr();
  uint16_t x87_control;
  __asm__ volatile("fnstcw %0" : "=m"(x87_control));
  *--slot = uint64_t(mxcsr) | uint64_t(x87_control) << 32;
  context.stack_pointer = slot;
}
#else
struct FiberContext {
  ucontext_t context;
};

inline void fiber_switch(FiberContext &from, FiberContext &to) {
  swapcontext(&from.context, &to.context);
}

inline void fiber_prepare(FiberContext &fiber, void *stack, size_t bytes,
                          void (*entry)()) {
  getcontext(&fiber.context);
  fiber.context.uc_stack.ss_sp = stack;
  fiber.context.uc_stack.ss_size = bytes;
  fiber.context.uc_link = nullptr;
  makecontext(&fiber.context, entry, 0);
}
#endif

//===----------------------------------------------------------------------===//
// Type traits over the MSL types.
//===----------------------------------------------------------------------===//

template <class T> struct VectorInfo {
  static constexpr int size = 0;
  using element = T;
};
template <class T, int N> struct VectorInfo<metal::vec<T, N>> {
  static constexpr int size = N;
  using element = T;
};
template <class T> constexpr bool is_vector = VectorInfo<T>::size > 0;
template <class T> using element_t = typename VectorInfo<T>::element;

template <class T>
constexpr bool is_float_scalar =
    std::is_same_v<T, float> || std::is_same_v<T, half> ||
    std::is_same_v<T, bfloat>;
template <class T>
constexpr bool is_int_scalar =
    std::is_integral_v<T> && !std::is_same_v<T, bool>;
// Scalar or vector of float/half/bfloat.
template <class T> constexpr bool is_float_like = is_float_scalar<element_t<T>>;
template <class T> constexpr bool is_int_like = is_int_scalar<element_t<T>>;
template <class T>
constexpr bool is_arithmetic_like = is_float_like<T> || is_int_like<T>;

template <class T> constexpr int component_count() {
  return is_vector<T> ? VectorInfo<T>::size : 1;
}

// Vector constructors: float4(x) splats, float4(half4) converts, and
// float4(a, float2, b) concatenates scalars and vectors in order.
template <class V, class Arg>
void append_components(V &out, int &next, const Arg &arg) {
  using E = element_t<V>;
  if constexpr (is_vector<Arg>) {
    for (int i = 0; i < VectorInfo<Arg>::size; ++i)
      out[next++] = static_cast<E>(arg[i]);
  } else {
    out[next++] = static_cast<E>(arg);
  }
}

template <class V, class... Args> V make_vector(const Args &...args) {
  static_assert(is_vector<V>, "make_vector builds MSL vector types only");
  constexpr int n = VectorInfo<V>::size;
  using E = element_t<V>;
  V out;
  if constexpr (sizeof...(Args) == 1 && (!is_vector<Args> && ...)) {
    E value = (static_cast<E>(args), ...);
    for (int i = 0; i < n; ++i)
      out[i] = value;
  } else {
    static_assert((component_count<Args>() + ...) == n,
                  "vector constructor: the components given do not add up "
                  "to the vector's size");
    int next = 0;
    (append_components(out, next, args), ...);
  }
  return out;
}

// Applies f to a scalar, or to each component of vectors, converting the
// result back to the element type.
template <class T, class F> T map_components(const T &x, F f) {
  if constexpr (is_vector<T>) {
    T out;
    for (int i = 0; i < VectorInfo<T>::size; ++i)
      out[i] = static_cast<element_t<T>>(f(x[i]));
    return out;
  } else {
    return static_cast<T>(f(x));
  }
}

template <class T, class F> T map_components(const T &x, const T &y, F f) {
  if constexpr (is_vector<T>) {
    T out;
    for (int i = 0; i < VectorInfo<T>::size; ++i)
      out[i] = static_cast<element_t<T>>(f(x[i], y[i]));
    return out;
  } else {
    return static_cast<T>(f(x, y));
  }
}

template <class T, class F>
T map_components(const T &x, const T &y, const T &z, F f) {
  if constexpr (is_vector<T>) {
    T out;
    for (int i = 0; i < VectorInfo<T>::size; ++i)
      out[i] = static_cast<element_t<T>>(f(x[i], y[i], z[i]));
    return out;
  } else {
    return static_cast<T>(f(x, y, z));
  }
}

// A type's identity and MSL-style name without RTTI (libstdc++ has no
// typeinfo for _Float16): a function template's static is one object per
// type in the whole program.
struct TypeTag {
  std::string name;
};

template <class T> std::string msl_type_name() {
  // "... msl_type_name() [T = float]"
  std::string pretty = __PRETTY_FUNCTION__;
  size_t begin = pretty.find("T = ") + 4;
  std::string name = pretty.substr(begin, pretty.rfind(']') - begin);
  const std::pair<const char *, const char *> spellings[] = {
      {"_Float16", "half"},       {"__bf16", "bfloat"},
      {"unsigned int", "uint"},   {"unsigned short", "ushort"},
      {"unsigned char", "uchar"}, {"unsigned long", "ulong"}};
  for (const auto &[from, to] : spellings)
    for (size_t at; (at = name.find(from)) != std::string::npos;)
      name.replace(at, std::strlen(from), to);
  return name;
}

template <class T> const TypeTag *type_tag() {
  static const TypeTag tag{msl_type_name<T>()};
  return &tag;
}

//===----------------------------------------------------------------------===//
// Execution state: one fiber per thread of the running threadgroup.
//===----------------------------------------------------------------------===//

constexpr unsigned kSimdWidth = 32;
constexpr unsigned kMaxThreadsPerThreadgroup = 1024;
constexpr size_t kMaxThreadgroupMemoryBytes = 32 * 1024;
constexpr unsigned kMaxBufferIndex = 30;

// Where a kernel called a collective or barrier; lanes that meet at
// different sites have diverged, which the scheduler reports.
struct Site {
  const char *file;
  unsigned line;
};
#define ATTN_MSL_CALL_SITE                                                     \
  ::attn_msl::detail::Site { __builtin_FILE(), __builtin_LINE() }

inline bool same_site(const Site &a, const Site &b) {
  return a.line == b.line && std::strcmp(a.file, b.file) == 0;
}

inline std::string describe_site(const Site &site) {
  return std::string(site.file) + ":" + std::to_string(site.line);
}

struct SimdArrival;
// Computes a SIMD collective once all lanes of a simdgroup arrived, reading
// each lane's inputs and writing its outputs through the lane's payload.
// Returns an error text, or an empty string.
using CombineFn = std::string (*)(SimdArrival *const *lanes, unsigned width);

struct ThreadState;
struct SimdArrival {
  const char *construct; // "simd_sum", "simdgroup_load", ...
  Site site;
  CombineFn combine;
  void *payload;
  const ThreadState *thread; // the lane that arrived
};

template <class Payload> Payload &payload_of(SimdArrival *arrival) {
  return *static_cast<Payload *>(arrival->payload);
}

// A fault inside a kernel (unbound buffer, wrong parameter type): unwinds
// the faulting thread to its fiber entry, which fails the launch.
struct KernelFault {
  std::string message;
};

enum class ThreadStatus { kReady, kAtSimd, kAtBarrier, kDone, kFailed };

struct ThreadState {
  uint index;     // thread_index_in_threadgroup
  uint3 position; // thread_position_in_threadgroup
  uint simdgroup; // simdgroup_index_in_threadgroup
  uint lane;      // thread_index_in_simdgroup
  ThreadStatus status = ThreadStatus::kReady;
  SimdArrival *arrival = nullptr; // valid while kAtSimd
  Site barrier_site{"", 0};       // valid while kAtBarrier
  unsigned barrier_flags = 0;     // its mem_flags, valid while kAtBarrier
  FiberContext context;
};

struct BoundBuffer {
  uint index;
  void *data;
  size_t bytes;
  const TypeTag *element; // nullptr: raw bytes, any parameter type
  size_t element_bytes;
};

struct LaunchState {
  const char *kernel_name;
  void (*kernel_body)();
  uint3 threadgroups_per_grid;
  uint3 threads_per_threadgroup;
  std::vector<BoundBuffer> buffers;
  std::vector<size_t> threadgroup_memory_bytes;
};

// What the watchdog reads from the launching OS thread.
struct Progress {
  std::atomic<uint64_t> switches{0};
  std::atomic<uint32_t> group_x{0}, group_y{0}, group_z{0};
  std::atomic<uint32_t> thread_index{0};
};

struct ThreadgroupState {
  const LaunchState *launch = nullptr;
  Progress *progress = nullptr;
  uint3 position;
  std::vector<ThreadState> threads;
  std::vector<unsigned char *> threadgroup_memory;
  std::vector<unsigned> waiting_in_simdgroup; // lanes at a SIMD collective
  unsigned waiting_at_barrier = 0;
  FiberContext scheduler;
  std::string failure;

  unsigned simdgroup_count() const {
    return unsigned((threads.size() + kSimdWidth - 1) / kSimdWidth);
  }
  // The last simdgroup is partial when the threadgroup size is not a
  // multiple of 32.
  unsigned simdgroup_width(unsigned simdgroup) const {
    return std::min<unsigned>(kSimdWidth, unsigned(threads.size()) -
                                              simdgroup * kSimdWidth);
  }
};

// The threadgroup running on this OS thread and the fiber running in it.
inline thread_local ThreadgroupState *t_group = nullptr;
inline thread_local ThreadState *t_thread = nullptr;

inline ThreadState &current_thread() {
  if (!t_thread)
    throw std::logic_error("attn-msl: an MSL kernel function was called "
                           "outside attn_msl::launch");
  return *t_thread;
}

inline std::string describe_position(uint3 p) {
  return "(" + std::to_string(p.x) + "," + std::to_string(p.y) + "," +
         std::to_string(p.z) + ")";
}

inline std::string describe_thread(const ThreadState &thread) {
  return "thread " + std::to_string(thread.index) + " (simdgroup " +
         std::to_string(thread.simdgroup) + ", lane " +
         std::to_string(thread.lane) + ", position " +
         describe_position(thread.position) + ")";
}

[[noreturn]] inline void fault(const std::string &message) {
  throw KernelFault{message};
}

// Suspends the running thread and returns to the scheduler.
inline void yield_to_scheduler() {
  ThreadState &self = current_thread();
  fiber_switch(self.context, t_group->scheduler);
}

// Suspends the running thread until all lanes of its simdgroup arrived at
// the same collective; the last arrival runs `combine` for all of them.
inline void simd_collective(const char *construct, Site site, CombineFn combine,
                            void *payload) {
  ThreadState &self = current_thread();
  SimdArrival arrival{construct, site, combine, payload, &self};
  self.arrival = &arrival;
  self.status = ThreadStatus::kAtSimd;
  yield_to_scheduler();
}

inline uint current_lane() { return current_thread().lane; }

//===----------------------------------------------------------------------===//
// Checked memory (README "Checks"). Every device buffer is copied for the
// launch into a mapping of its own, flush against guard pages, and every
// block of threadgroup memory lives in one too. Kernel code compiled by
// msl-emu-cc.sh reports each load and store (clang's ThreadSanitizer
// instrumentation, with the callbacks at the end of this file in place of
// the TSan runtime); an access that falls in a mapping but outside its
// bytes is out of bounds. Threadgroup memory keeps a shadow per byte: the
// last writer and the last reader(s), with the barrier epoch they acted in,
// so that two threads touching one byte, one of them writing, with no
// threadgroup_barrier (or, inside a simdgroup, simdgroup_barrier) between
// them, is a race: a missing barrier.
//===----------------------------------------------------------------------===//

constexpr uint16_t kNoThread = 0xffff;
constexpr uint16_t kManyThreads = 0xfffe;
constexpr unsigned kMemThreadgroupFlag = 2; // metal::mem_flags::mem_threadgroup

struct ShadowByte {
  uint32_t write_epoch = 0, read_epoch = 0;
  uint32_t write_simd_epoch = 0, read_simd_epoch = 0;
  uint16_t writer = kNoThread, reader = kNoThread;
  uint16_t writer_simdgroup = kNoThread, reader_simdgroup = kNoThread;
};

// One buffer or block of threadgroup memory, with guard pages around it.
struct CheckedRegion {
  void *mapping = nullptr;
  size_t mapping_bytes = 0;
  uintptr_t lo = 0, hi = 0; // the whole mapping, guards included
  unsigned char *data = nullptr;
  size_t bytes = 0;
  bool threadgroup = false;
  uint index = 0;
  size_t element_bytes = 1;
  std::string element_name = "byte";
  void *host = nullptr; // device: the host's memory, copied in and back
  std::vector<ShadowByte> shadow; // threadgroup: the race detector's

  CheckedRegion() = default;
  CheckedRegion(const CheckedRegion &) = delete;
  CheckedRegion &operator=(const CheckedRegion &) = delete;
  ~CheckedRegion() {
    if (mapping)
      munmap(mapping, mapping_bytes);
  }
  // Maps `bytes` with 64 KiB of PROT_NONE on either side, the bytes ending
  // at the upper guard: one past the end faults even uninstrumented.
  bool map(size_t count) {
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    const size_t guard = 64 * 1024;
    const size_t body = (std::max<size_t>(count, 1) + page - 1) / page * page;
    mapping_bytes = guard + body + guard;
    void *base = mmap(nullptr, mapping_bytes, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
      return false;
    mapping = base;
    if (mprotect(static_cast<char *>(base) + guard, body,
                 PROT_READ | PROT_WRITE) != 0)
      return false;
    data = static_cast<unsigned char *>(base) + guard + body - count;
    bytes = count;
    lo = reinterpret_cast<uintptr_t>(base);
    hi = lo + mapping_bytes;
    return true;
  }
  std::string name() const {
    return (threadgroup ? "[[threadgroup(" : "[[buffer(") +
           std::to_string(index) + ")]]";
  }
};

struct CheckState {
  std::vector<std::unique_ptr<CheckedRegion>> regions;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  bool races = true;
  // Advances when a threadgroup starts and at every threadgroup_barrier
  // with mem_threadgroup; simd_epoch[s] at every simdgroup_barrier of
  // simdgroup s with mem_threadgroup.
  uint32_t epoch = 1;
  std::vector<uint32_t> simd_epoch;
  Site last_barrier{"", 0};

  void add(std::unique_ptr<CheckedRegion> region) {
    lo = std::min(lo, region->lo);
    hi = std::max(hi, region->hi);
    regions.push_back(std::move(region));
  }
};

inline thread_local CheckState *t_checks = nullptr;

inline std::string describe_access(bool write, size_t n) {
  return std::string(write ? "write" : "read") + " of " + std::to_string(n) +
         (n == 1 ? " byte" : " bytes");
}

inline std::string out_of_bounds(const CheckedRegion &r, uintptr_t addr,
                                 size_t n, bool write) {
  const long offset = long(addr - reinterpret_cast<uintptr_t>(r.data));
  std::string where;
  if (r.threadgroup) {
    where = "at byte offset " + std::to_string(offset) + " of " + r.name() +
            ", which holds " + std::to_string(r.bytes) + " bytes";
  } else {
    const long e = long(r.element_bytes);
    const long element = offset >= 0 ? offset / e : -((-offset + e - 1) / e);
    where = "at index " + std::to_string(element) + " (byte offset " +
            std::to_string(offset) + ") of " + r.name() + ", which holds " +
            (r.element_bytes == 1 && r.element_name == "byte"
                 ? std::to_string(r.bytes) + " bytes"
                 : std::to_string(r.bytes / r.element_bytes) + " " +
                       r.element_name + " elements (" +
                       std::to_string(r.bytes) + " bytes)");
  }
  return "out-of-bounds " + describe_access(write, n) + " " + where;
}

inline std::string describe_other(uint16_t who) {
  return who == kManyThreads ? std::string("other threads")
                             : "thread " + std::to_string(who);
}

inline std::string race(const CheckState &c, const CheckedRegion &r,
                        const ThreadState &self, size_t offset, bool write,
                        uint16_t other, uint16_t other_simdgroup,
                        const char *other_did) {
  return "threadgroup memory race (a missing barrier?): this thread " +
         std::string(write ? "writes" : "reads") + " byte offset " +
         std::to_string(offset) + " of " + r.name() + ", which " +
         describe_other(other) + " " + other_did +
         " with no threadgroup_barrier(mem_flags::mem_threadgroup) " +
         (other_simdgroup == self.simdgroup
              ? "(nor simdgroup_barrier in their simdgroup) "
              : "") +
         "between them (" +
         (c.last_barrier.line ? "the last barrier passed is at " +
                                    describe_site(c.last_barrier)
                              : std::string("none passed yet in this "
                                            "threadgroup")) +
         ")";
}

// Is an access by simdgroup `sg` in (epoch, simd_epoch) ordered before now
// for a thread of simdgroup `self_sg`?
inline bool happened_before(const CheckState &c, uint32_t epoch,
                            uint32_t simd_epoch, uint16_t sg, uint self_sg) {
  return epoch != c.epoch ||
         (sg == self_sg && simd_epoch != c.simd_epoch[self_sg]);
}

inline std::string check_race(CheckState &c, CheckedRegion &r,
                              const ThreadState &self, size_t offset, size_t n,
                              bool write) {
  const uint16_t me = uint16_t(self.index);
  const uint sg = self.simdgroup;
  for (size_t i = offset; i < offset + n; ++i) {
    ShadowByte &b = r.shadow[i];
    if (b.writer != kNoThread && b.writer != me &&
        !happened_before(c, b.write_epoch, b.write_simd_epoch,
                         b.writer_simdgroup, sg))
      return race(c, r, self, i, write, b.writer, b.writer_simdgroup,
                  "wrote");
    if (write) {
      if (b.read_epoch == c.epoch && b.reader != kNoThread &&
          b.reader != me &&
          !happened_before(c, b.read_epoch, b.read_simd_epoch,
                           b.reader_simdgroup, sg))
        return race(c, r, self, i, write, b.reader, b.reader_simdgroup,
                    "read");
      b.writer = me;
      b.writer_simdgroup = uint16_t(sg);
      b.write_epoch = c.epoch;
      b.write_simd_epoch = c.simd_epoch[sg];
    } else {
      if (b.read_epoch != c.epoch || b.reader == kNoThread) {
        b.reader = me;
        b.reader_simdgroup = uint16_t(sg);
      } else if (b.reader != me) {
        b.reader = kManyThreads;
        if (b.reader_simdgroup != sg)
          b.reader_simdgroup = kManyThreads;
      }
      b.read_epoch = c.epoch;
      b.read_simd_epoch = c.simd_epoch[sg];
    }
  }
  return {};
}

// An error text for an access of n bytes at addr by `self`, or "".
inline std::string access_error(const ThreadState &self, const void *p,
                                size_t n, bool write) {
  CheckState *c = t_checks;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  if (!c || addr >= c->hi || addr + n <= c->lo)
    return {};
  for (const auto &region : c->regions) {
    CheckedRegion &r = *region;
    if (addr >= r.hi || addr + n <= r.lo)
      continue;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(r.data);
    if (addr < begin || addr + n > begin + r.bytes)
      return out_of_bounds(r, addr, n, write);
    if (r.threadgroup && c->races)
      return check_race(*c, r, self, addr - begin, n, write);
    return {};
  }
  return {};
}

// The instrumented kernel's loads and stores come here.
inline void checked_access(const void *p, size_t n, bool write) {
  const CheckState *c = t_checks;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  if (!c || !t_thread || addr >= c->hi || addr + n <= c->lo)
    return;
  std::string error = access_error(*t_thread, p, n, write);
  if (!error.empty())
    fault(error);
}

// Uninstrumented code (ATTN_MSL_CHECKS=0, or an access size the
// instrumentation skips) that steps off a buffer into its guard pages gets
// SIGSEGV; this says which buffer, then exits with status 1. Any other
// fault goes on to the default action.
inline thread_local const char *t_fault_kernel_name = nullptr;
inline void guard_page_fault(int sig, siginfo_t *info, void *) {
  const CheckState *c = t_checks;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
  if (c && addr >= c->lo && addr < c->hi) {
    for (const auto &region : c->regions) {
      const CheckedRegion &r = *region;
      if (addr < r.lo || addr >= r.hi)
        continue;
      char text[512];
      const long offset = long(addr - reinterpret_cast<uintptr_t>(r.data));
      int n = std::snprintf(
          text, sizeof text,
          "attn-msl: kernel '%s', threadgroup (%u,%u,%u), thread %d: memory "
          "fault at byte offset %ld "
          "of %s(%u)]], which holds %zu bytes: out of bounds (in code the "
          "checked accesses do not see)\n",
          t_fault_kernel_name ? t_fault_kernel_name : "?",
          t_group ? t_group->position.x : 0, t_group ? t_group->position.y : 0,
          t_group ? t_group->position.z : 0,
          t_thread ? int(t_thread->index) : -1, offset,
          r.threadgroup ? "[[threadgroup" : "[[buffer", r.index, r.bytes);
      if (n > 0)
        (void)!write(2, text, size_t(std::min<int>(n, sizeof text - 1)));
      _exit(1);
    }
  }
  signal(sig, SIG_DFL); // not ours: fault again, the default way
}

// Installs guard_page_fault (on an alternate stack) for one launch.
class GuardFaultHandler {
public:
  explicit GuardFaultHandler(const char *kernel_name) {
    t_fault_kernel_name = kernel_name;
    stack_.resize(64 * 1024);
    stack_t alternate{};
    alternate.ss_sp = stack_.data();
    alternate.ss_size = stack_.size();
    sigaltstack(&alternate, &old_stack_);
    struct sigaction action {};
    action.sa_sigaction = &guard_page_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &old_action_);
  }
  ~GuardFaultHandler() {
    sigaction(SIGSEGV, &old_action_, nullptr);
    sigaltstack(&old_stack_, nullptr);
    t_fault_kernel_name = nullptr;
  }
  GuardFaultHandler(const GuardFaultHandler &) = delete;
  GuardFaultHandler &operator=(const GuardFaultHandler &) = delete;

private:
  std::vector<char> stack_;
  stack_t old_stack_{};
  struct sigaction old_action_ {};
};

//===----------------------------------------------------------------------===//
// Kernel parameters. The attribute macros at the end of this file turn
// `T name [[buffer(3)]]` into `T name [[]] = buffer_param(3)[...]`: every
// kernel parameter is a default argument that reads the running thread's
// launch, so the launcher calls `kernel()` with no arguments and parameter
// order does not matter.
//===----------------------------------------------------------------------===//

// The attribute macros end in `[kAttributeEnd[0`, which the attribute's own
// `]]` closes.
inline constexpr int kAttributeEnd[1] = {0};

inline const BoundBuffer &bound_buffer(uint index) {
  for (const BoundBuffer &buffer : t_group->launch->buffers)
    if (buffer.index == index)
      return buffer;
  fault("kernel parameter [[buffer(" + std::to_string(index) +
        ")]] has no buffer bound at index " + std::to_string(index));
}

template <class T> void check_buffer_type(const BoundBuffer &buffer) {
  static_assert(!kTypedAddressSpaces || address_space_of<T> == 1 ||
                    address_space_of<T> == 2,
                "a [[buffer(n)]] kernel parameter points to device or "
                "constant memory");
  using Element = plain_t<T>;
  // Byte views of any buffer are fine, as in Metal.
  if constexpr (std::is_same_v<Element, uchar> ||
                std::is_same_v<Element, char> || std::is_void_v<Element>)
    return;
  if (buffer.element && buffer.element != type_tag<Element>())
    fault("kernel parameter [[buffer(" + std::to_string(buffer.index) +
          ")]] points to " + type_tag<Element>()->name +
          " but the buffer bound there holds " + buffer.element->name);
  if constexpr (!std::is_void_v<Element>)
    if (buffer.bytes < sizeof(Element))
      fault("kernel parameter [[buffer(" + std::to_string(buffer.index) +
            ")]] needs " + std::to_string(sizeof(Element)) +
            " bytes but the buffer bound there has " +
            std::to_string(buffer.bytes));
}

struct BufferParam {
  uint index;
  // device float *p [[buffer(0)]]
  template <class T> operator T *() const {
    const BoundBuffer &buffer = bound_buffer(index);
    check_buffer_type<T>(buffer);
    return (T *)buffer.data; // into T's address space
  }
  // constant Params &p [[buffer(1)]]
  template <class T> operator T &() const {
    const BoundBuffer &buffer = bound_buffer(index);
    check_buffer_type<T>(buffer);
    return *(T *)buffer.data;
  }
};
struct BufferParamSelector {
  uint index;
  BufferParam operator[](int) const { return {index}; }
};
inline BufferParamSelector buffer_param(uint index) { return {index}; }

struct ThreadgroupParam {
  uint index;
  // threadgroup float *p [[threadgroup(0)]]
  template <class T> operator T *() const {
    static_assert(!kTypedAddressSpaces || address_space_of<T> == 3,
                  "a [[threadgroup(n)]] kernel parameter points to "
                  "threadgroup memory");
    const std::vector<size_t> &sizes =
        t_group->launch->threadgroup_memory_bytes;
    if (index >= sizes.size())
      fault("kernel parameter [[threadgroup(" + std::to_string(index) +
            ")]] has no threadgroup memory length set at index " +
            std::to_string(index));
    if constexpr (!std::is_void_v<plain_t<T>>)
      if (sizes[index] % sizeof(T) != 0)
        fault("threadgroup memory " + std::to_string(index) + " holds " +
              std::to_string(sizes[index]) + " bytes, not a whole number of " +
              type_tag<plain_t<T>>()->name);
    return (T *)t_group->threadgroup_memory[index];
  }
};
struct ThreadgroupParamSelector {
  uint index;
  ThreadgroupParam operator[](int) const { return {index}; }
};
inline ThreadgroupParamSelector threadgroup_param(uint index) {
  return {index};
}

enum class Builtin {
  kThreadgroupPositionInGrid,
  kThreadPositionInThreadgroup,
  kThreadPositionInGrid,
  kThreadsPerThreadgroup,
  kThreadgroupsPerGrid,
  kThreadsPerGrid,
  kThreadIndexInThreadgroup,
  kThreadIndexInSimdgroup,
  kSimdgroupIndexInThreadgroup,
  kThreadsPerSimdgroup,
  kSimdgroupsPerThreadgroup,
};

// Grid-shaped built-ins may be uint, uint2 or uint3 (or ushort forms), the
// rest are scalars; anything else is a compile error, as in Metal.
template <Builtin B> constexpr bool is_grid_shaped() {
  return B == Builtin::kThreadgroupPositionInGrid ||
         B == Builtin::kThreadPositionInThreadgroup ||
         B == Builtin::kThreadPositionInGrid ||
         B == Builtin::kThreadsPerThreadgroup ||
         B == Builtin::kThreadgroupsPerGrid || B == Builtin::kThreadsPerGrid;
}

template <Builtin B> uint3 builtin_value() {
  const ThreadState &thread = current_thread();
  const LaunchState &launch = *t_group->launch;
  uint3 group = t_group->position;
  uint3 size = launch.threads_per_threadgroup;
  switch (B) {
  case Builtin::kThreadgroupPositionInGrid:
    return group;
  case Builtin::kThreadPositionInThreadgroup:
    return thread.position;
  case Builtin::kThreadPositionInGrid:
    return group * size + thread.position;
  case Builtin::kThreadsPerThreadgroup:
    return size;
  case Builtin::kThreadgroupsPerGrid:
    return launch.threadgroups_per_grid;
  case Builtin::kThreadsPerGrid:
    return launch.threadgroups_per_grid * size;
  case Builtin::kThreadIndexInThreadgroup:
    return uint3{thread.index, 0, 0};
  case Builtin::kThreadIndexInSimdgroup:
    return uint3{thread.lane, 0, 0};
  case Builtin::kSimdgroupIndexInThreadgroup:
    return uint3{thread.simdgroup, 0, 0};
  case Builtin::kThreadsPerSimdgroup:
    return uint3{kSimdWidth, 0, 0};
  case Builtin::kSimdgroupsPerThreadgroup:
    return uint3{t_group->simdgroup_count(), 0, 0};
  }
  return uint3{0, 0, 0};
}

template <Builtin B> struct BuiltinParam {
  template <class T> operator T() const {
    using E = element_t<T>;
    static_assert(std::is_same_v<E, uint> || std::is_same_v<E, ushort>,
                  "MSL built-in parameters are uint or ushort (or vectors "
                  "of them)");
    static_assert(!is_vector<T> ||
                      (is_grid_shaped<B>() && VectorInfo<T>::size <= 3),
                  "this MSL built-in is a scalar; only grid positions and "
                  "sizes may be 2- or 3-component vectors");
    uint3 value = builtin_value<B>();
    if constexpr (!is_vector<T>)
      return static_cast<T>(value.x);
    else if constexpr (VectorInfo<T>::size == 2)
      return T{E(value.x), E(value.y)};
    else
      return T{E(value.x), E(value.y), E(value.z)};
  }
};
template <Builtin B> struct BuiltinParamSelector {
  BuiltinParam<B> operator[](int) const { return {}; }
};
template <Builtin B> BuiltinParamSelector<B> builtin_param() { return {}; }

// Position of element `e` (0 or 1) of `lane` in an 8x8 simdgroup_matrix, the
// layout of thread_elements() that MLX and tinygrad rely on.
struct MatrixCoord {
  uint row;
  uint col;
};
inline MatrixCoord lane_element_coord(uint lane, uint e) {
  uint q = lane / 4;
  return {(q & 4) + (lane / 2) % 4, (q & 2) * 2 + (lane % 2) * 2 + e};
}

// Metal's fast tanh, as reported: the exp ratio in float, NaN once e^2x
// overflows (x > ~44.4).
inline float fast_tanh(float x) {
  const float e = std::exp(2.0f * x);
  return (e - 1.0f) / (e + 1.0f);
}

} // namespace detail
} // namespace attn_msl

//===----------------------------------------------------------------------===//
// namespace metal: math, SIMD-group functions, barriers, simdgroup_matrix.
//===----------------------------------------------------------------------===//

namespace metal {

// Scalar math computes in float and rounds to the argument type; vectors
// apply it per component. Templates, so a float argument prefers the C
// library's exact-match overloads where a host header declared them (same
// result) and a mixed call like max(half, float) is rejected as in MSL.
#define ATTN_MSL_FLOAT_UNARY(NAME, EXPR)                                       \
  template <class T,                                                           \
            std::enable_if_t<::attn_msl::detail::is_float_like<T>, int> = 0>   \
  inline T NAME(T x) {                                                         \
    return ::attn_msl::detail::map_components(x,                               \
                                              [](float v) { return EXPR; });   \
  }
ATTN_MSL_FLOAT_UNARY(exp, std::exp(v))
ATTN_MSL_FLOAT_UNARY(exp2, std::exp2(v))
ATTN_MSL_FLOAT_UNARY(exp10, std::pow(10.0f, v))
ATTN_MSL_FLOAT_UNARY(log, std::log(v))
ATTN_MSL_FLOAT_UNARY(log2, std::log2(v))
ATTN_MSL_FLOAT_UNARY(log10, std::log10(v))
ATTN_MSL_FLOAT_UNARY(sqrt, std::sqrt(v))
ATTN_MSL_FLOAT_UNARY(rsqrt, 1.0f / std::sqrt(v))
// tanh: precise::tanh is the C library's. fast::tanh is modelled as Metal's
// fast one, (e^2x - 1) / (e^2x + 1) in float: NaN past |x| ~ 44.4, where
// e^2x overflows (TVM PR #16438, candle PR #2475). Plain tanh is the fast one
// when the kernel is compiled for fast math (ATTN_MSL_FAST_MATH, set by
// msl-emu-cc.sh with ATTN_MSL_MATH=fast), as in Metal, else the precise one.
ATTN_MSL_FLOAT_UNARY(attn_msl_precise_tanh, std::tanh(v))
ATTN_MSL_FLOAT_UNARY(attn_msl_fast_tanh, ::attn_msl::detail::fast_tanh(v))
template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_like<T>, int> = 0>
inline T tanh(T x) {
#ifdef ATTN_MSL_FAST_MATH
  return attn_msl_fast_tanh(x);
#else
  return attn_msl_precise_tanh(x);
#endif
}
ATTN_MSL_FLOAT_UNARY(sin, std::sin(v))
ATTN_MSL_FLOAT_UNARY(cos, std::cos(v))
ATTN_MSL_FLOAT_UNARY(fabs, std::fabs(v))
ATTN_MSL_FLOAT_UNARY(floor, std::floor(v))
ATTN_MSL_FLOAT_UNARY(ceil, std::ceil(v))
ATTN_MSL_FLOAT_UNARY(trunc, std::trunc(v))
ATTN_MSL_FLOAT_UNARY(round, std::round(v))
ATTN_MSL_FLOAT_UNARY(rint, std::rint(v))
ATTN_MSL_FLOAT_UNARY(saturate, std::fmin(std::fmax(v, 0.0f), 1.0f))
#undef ATTN_MSL_FLOAT_UNARY

#define ATTN_MSL_FLOAT_BINARY(NAME, EXPR)                                      \
  template <class T,                                                           \
            std::enable_if_t<::attn_msl::detail::is_float_like<T>, int> = 0>   \
  inline T NAME(T x, T y) {                                                    \
    return ::attn_msl::detail::map_components(                                 \
        x, y, [](float a, float b) { return EXPR; });                          \
  }
ATTN_MSL_FLOAT_BINARY(fmax, std::fmax(a, b))
ATTN_MSL_FLOAT_BINARY(fmin, std::fmin(a, b))
ATTN_MSL_FLOAT_BINARY(pow, std::pow(a, b))
ATTN_MSL_FLOAT_BINARY(powr, std::pow(a, b))
ATTN_MSL_FLOAT_BINARY(fmod, std::fmod(a, b))
ATTN_MSL_FLOAT_BINARY(divide, a / b)
#undef ATTN_MSL_FLOAT_BINARY

template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_like<T>, int> = 0>
inline T fma(T a, T b, T c) {
  return ::attn_msl::detail::map_components(
      a, b, c, [](float x, float y, float z) { return std::fma(x, y, z); });
}

template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_like<T>, int> = 0>
inline T mix(T x, T y, T a) {
  return x + (y - x) * a;
}

// max/min take floats (NaN-ignoring, like fmax) and integers.
template <class T,
          std::enable_if_t<::attn_msl::detail::is_arithmetic_like<T>, int> = 0>
inline T max(T x, T y) {
  return ::attn_msl::detail::map_components(x, y, [](auto a, auto b) {
    if constexpr (::attn_msl::detail::is_float_scalar<decltype(a)>)
      return static_cast<decltype(a)>(std::fmax(float(a), float(b)));
    else
      return a > b ? a : b;
  });
}
template <class T,
          std::enable_if_t<::attn_msl::detail::is_arithmetic_like<T>, int> = 0>
inline T min(T x, T y) {
  return ::attn_msl::detail::map_components(x, y, [](auto a, auto b) {
    if constexpr (::attn_msl::detail::is_float_scalar<decltype(a)>)
      return static_cast<decltype(a)>(std::fmin(float(a), float(b)));
    else
      return a < b ? a : b;
  });
}
template <class T,
          std::enable_if_t<::attn_msl::detail::is_arithmetic_like<T>, int> = 0>
inline T clamp(T x, T lo, T hi) {
  return min(max(x, lo), hi);
}
template <class T,
          std::enable_if_t<::attn_msl::detail::is_arithmetic_like<T>, int> = 0>
inline T abs(T x) {
  return ::attn_msl::detail::map_components(x, [](auto a) {
    if constexpr (::attn_msl::detail::is_float_scalar<decltype(a)>)
      return static_cast<decltype(a)>(std::fabs(float(a)));
    else if constexpr (std::is_signed_v<decltype(a)>)
      return static_cast<decltype(a)>(a < 0 ? -a : a);
    else
      return a;
  });
}

// select(a, b, c) is c ? b : a; vectors take a per-component mask (a
// comparison of vectors gives one: -1 where true, 0 where false).
template <class T,
          std::enable_if_t<::attn_msl::detail::is_arithmetic_like<T>, int> = 0>
inline T select(T a, T b, bool c) {
  return c ? b : a;
}
template <class T, class Mask,
          std::enable_if_t<
              ::attn_msl::detail::is_vector<T> && ::attn_msl::detail::is_vector<
                  Mask> && ::attn_msl::detail::VectorInfo<T>::size ==
                  ::attn_msl::detail::VectorInfo<Mask>::size,
              int> = 0>
inline T select(T a, T b, Mask c) {
  T out;
  for (int i = 0; i < ::attn_msl::detail::VectorInfo<T>::size; ++i)
    out[i] = c[i] ? b[i] : a[i];
  return out;
}

template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_scalar<T>, int> = 0>
inline bool isnan(T x) {
  return std::isnan(float(x));
}
template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_scalar<T>, int> = 0>
inline bool isinf(T x) {
  return std::isinf(float(x));
}
template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_scalar<T>, int> = 0>
inline bool isfinite(T x) {
  return std::isfinite(float(x));
}

template <class T, std::enable_if_t<::attn_msl::detail::is_vector<T>
                                        && ::attn_msl::detail::is_float_like<T>,
                                    int> = 0>
inline ::attn_msl::detail::element_t<T> dot(T x, T y) {
  float sum = 0.0f;
  for (int i = 0; i < ::attn_msl::detail::VectorInfo<T>::size; ++i)
    sum += float(x[i]) * float(y[i]);
  return static_cast<::attn_msl::detail::element_t<T>>(sum);
}

template <class Mask,
          std::enable_if_t<::attn_msl::detail::is_vector<Mask>, int> = 0>
inline bool all(Mask m) {
  for (int i = 0; i < ::attn_msl::detail::VectorInfo<Mask>::size; ++i)
    if (!m[i])
      return false;
  return true;
}
template <class Mask,
          std::enable_if_t<::attn_msl::detail::is_vector<Mask>, int> = 0>
inline bool any(Mask m) {
  for (int i = 0; i < ::attn_msl::detail::VectorInfo<Mask>::size; ++i)
    if (m[i])
      return true;
  return false;
}

// Reinterprets the bits of a value of the same size (float3 is 16 bytes, as
// in Metal).
template <class To, class From> inline To as_type(const From &from) {
  static_assert(sizeof(To) == sizeof(From), "as_type needs types of one size");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

// fast:: and precise:: variants compute the same thing here, except tanh
// (above).
#define ATTN_MSL_MATH_NAMES                                                    \
  using metal::exp;                                                            \
  using metal::exp2;                                                           \
  using metal::exp10;                                                          \
  using metal::log;                                                            \
  using metal::log2;                                                           \
  using metal::log10;                                                          \
  using metal::sqrt;                                                           \
  using metal::rsqrt;                                                          \
  using metal::sin;                                                            \
  using metal::cos;                                                            \
  using metal::fabs;                                                           \
  using metal::floor;                                                          \
  using metal::ceil;                                                           \
  using metal::trunc;                                                          \
  using metal::round;                                                          \
  using metal::rint;                                                           \
  using metal::saturate;                                                       \
  using metal::fmax;                                                           \
  using metal::fmin;                                                           \
  using metal::pow;                                                            \
  using metal::powr;                                                           \
  using metal::fmod;                                                           \
  using metal::divide;                                                         \
  using metal::fma;                                                            \
  using metal::max;                                                            \
  using metal::min;                                                            \
  using metal::clamp;
namespace fast {
ATTN_MSL_MATH_NAMES
template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_like<T>, int> = 0>
inline T tanh(T x) {
  return metal::attn_msl_fast_tanh(x);
}
} // namespace fast
namespace precise {
ATTN_MSL_MATH_NAMES
template <class T,
          std::enable_if_t<::attn_msl::detail::is_float_like<T>, int> = 0>
inline T tanh(T x) {
  return metal::attn_msl_precise_tanh(x);
}
} // namespace precise
#undef ATTN_MSL_MATH_NAMES

//===----------------------------------------------------------------------===//
// Barriers. Memory is coherent between fibers, so the flags only document.
//===----------------------------------------------------------------------===//

enum class mem_flags : unsigned {
  mem_none = 0,
  mem_device = 1,
  mem_threadgroup = 2,
  mem_texture = 4,
  mem_threadgroup_imageblock = 8,
  mem_object_data = 16,
};
constexpr mem_flags operator|(mem_flags a, mem_flags b) {
  return mem_flags(unsigned(a) | unsigned(b));
}

// Every thread of the threadgroup must reach the same barrier call.
inline void
threadgroup_barrier(mem_flags flags,
                    ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  using namespace ::attn_msl::detail;
  ThreadState &self = current_thread();
  self.barrier_site = site;
  self.barrier_flags = unsigned(flags);
  self.status = ThreadStatus::kAtBarrier;
  yield_to_scheduler();
}

} // namespace metal

namespace attn_msl {
namespace detail {

// A simdgroup_barrier with mem_threadgroup orders the simdgroup's
// threadgroup memory accesses (the race detector's simd epoch).
inline std::string combine_simdgroup_barrier(SimdArrival *const *lanes,
                                             unsigned) {
  const unsigned flags = *static_cast<const unsigned *>(lanes[0]->payload);
  if (t_checks && (flags & kMemThreadgroupFlag))
    ++t_checks->simd_epoch[lanes[0]->thread->simdgroup];
  return {};
}

template <class T> struct ValuePayload {
  T value;
  T result;
};

// A value plus a lane argument: source lane, xor mask or delta.
template <class T> struct ShufflePayload {
  T value;
  uint lane_arg;
  T result;
};

struct SumOp {
  template <class T> static T apply(T a, T b) { return a + b; }
};
struct ProductOp {
  template <class T> static T apply(T a, T b) { return a * b; }
};
struct MaxOp {
  template <class T> static T apply(T a, T b) { return metal::max(a, b); }
};
struct MinOp {
  template <class T> static T apply(T a, T b) { return metal::min(a, b); }
};
struct AndOp {
  template <class T> static T apply(T a, T b) { return a && b; }
};
struct OrOp {
  template <class T> static T apply(T a, T b) { return a || b; }
};

// Pairwise tree over the lanes, like a hardware reduction.
template <class T, class Op>
std::string combine_reduce(SimdArrival *const *lanes, unsigned width) {
  T partial[kSimdWidth];
  for (unsigned i = 0; i < width; ++i)
    partial[i] = payload_of<ValuePayload<T>>(lanes[i]).value;
  for (unsigned step = 1; step < width; step *= 2)
    for (unsigned i = 0; i + step < width; i += 2 * step)
      partial[i] = Op::apply(partial[i], partial[i + step]);
  for (unsigned i = 0; i < width; ++i)
    payload_of<ValuePayload<T>>(lanes[i]).result = partial[0];
  return {};
}

template <class T, bool Inclusive>
std::string combine_prefix_sum(SimdArrival *const *lanes, unsigned width) {
  T running = T(0);
  for (unsigned i = 0; i < width; ++i) {
    ValuePayload<T> &p = payload_of<ValuePayload<T>>(lanes[i]);
    T value = p.value;
    if (Inclusive)
      running = running + value;
    p.result = running;
    if (!Inclusive)
      running = running + value;
  }
  return {};
}

enum class ShuffleKind { kIndex, kXor, kDown, kUp, kBroadcast };

inline const char *shuffle_name(ShuffleKind kind) {
  switch (kind) {
  case ShuffleKind::kIndex:
    return "simd_shuffle";
  case ShuffleKind::kXor:
    return "simd_shuffle_xor";
  case ShuffleKind::kDown:
    return "simd_shuffle_down";
  case ShuffleKind::kUp:
    return "simd_shuffle_up";
  case ShuffleKind::kBroadcast:
    return "simd_broadcast";
  }
  return "simd_shuffle";
}

template <class T, ShuffleKind Kind>
std::string combine_shuffle(SimdArrival *const *lanes, unsigned width) {
  auto payload = [&](unsigned i) -> ShufflePayload<T> & {
    return payload_of<ShufflePayload<T>>(lanes[i]);
  };
  // Only simd_shuffle takes a per-lane source; Metal wants the broadcast
  // lane, xor mask and delta the same in every lane.
  if (Kind != ShuffleKind::kIndex)
    for (unsigned i = 1; i < width; ++i)
      if (payload(i).lane_arg != payload(0).lane_arg)
        return std::string(shuffle_name(Kind)) +
               " needs one lane argument for the whole simdgroup, but lane 0 "
               "passes " +
               std::to_string(payload(0).lane_arg) + " and lane " +
               std::to_string(i) + " passes " +
               std::to_string(payload(i).lane_arg);
  for (unsigned i = 0; i < width; ++i) {
    uint arg = payload(i).lane_arg;
    long source = 0;
    switch (Kind) {
    case ShuffleKind::kIndex:
    case ShuffleKind::kBroadcast:
      source = arg;
      break;
    case ShuffleKind::kXor:
      source = long(i ^ arg);
      break;
    case ShuffleKind::kDown:
      source = long(i) + arg;
      break;
    case ShuffleKind::kUp:
      source = long(i) - long(arg);
      break;
    }
    // Metal leaves the upper (down) or lower (up) delta lanes unchanged.
    if ((Kind == ShuffleKind::kDown && source >= long(kSimdWidth)) ||
        (Kind == ShuffleKind::kUp && source < 0)) {
      payload(i).result = payload(i).value;
      continue;
    }
    if (source < 0 || source >= long(width))
      return std::string(shuffle_name(Kind)) + ": lane " + std::to_string(i) +
             " reads lane " + std::to_string(source) +
             ", which does not exist in this simdgroup of " +
             std::to_string(width) + " threads";
    payload(i).result = payload(unsigned(source)).value;
  }
  return {};
}

template <class T, ShuffleKind Kind>
T simd_shuffle_collective(T value, uint lane_arg, Site site) {
  static_assert(is_arithmetic_like<T>,
                "SIMD functions take scalars or vectors of numbers");
  ShufflePayload<T> payload{value, lane_arg, value};
  simd_collective(shuffle_name(Kind), site, &combine_shuffle<T, Kind>,
                  &payload);
  return payload.result;
}

template <class T, class Op>
T simd_reduce_collective(const char *name, T value, Site site) {
  ValuePayload<T> payload{value, value};
  simd_collective(name, site, &combine_reduce<T, Op>, &payload);
  return payload.result;
}

} // namespace detail
} // namespace attn_msl

namespace metal {

// All lanes of the simdgroup must call the same SIMD function at the same
// place; the trailing `site` parameter is the emulator's, not MSL's.
#define ATTN_MSL_SIMD_REDUCTION(NAME, OP)                                      \
  template <class T>                                                           \
  inline T NAME(T data, ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {  \
    static_assert(::attn_msl::detail::is_arithmetic_like<T>,                   \
                  #NAME " takes a scalar or vector of numbers");               \
    return ::attn_msl::detail::simd_reduce_collective<T,                       \
                                                      ::attn_msl::detail::OP>( \
        #NAME, data, site);                                                    \
  }
ATTN_MSL_SIMD_REDUCTION(simd_sum, SumOp)
ATTN_MSL_SIMD_REDUCTION(simd_product, ProductOp)
ATTN_MSL_SIMD_REDUCTION(simd_max, MaxOp)
ATTN_MSL_SIMD_REDUCTION(simd_min, MinOp)
#undef ATTN_MSL_SIMD_REDUCTION

inline bool simd_all(bool value,
                     ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  return ::attn_msl::detail::simd_reduce_collective<bool,
                                                    ::attn_msl::detail::AndOp>(
      "simd_all", value, site);
}
inline bool simd_any(bool value,
                     ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  return ::attn_msl::detail::simd_reduce_collective<bool,
                                                    ::attn_msl::detail::OrOp>(
      "simd_any", value, site);
}

template <class T>
inline T
simd_prefix_exclusive_sum(T data,
                          ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  static_assert(::attn_msl::detail::is_arithmetic_like<T>,
                "simd_prefix_exclusive_sum takes numbers");
  ::attn_msl::detail::ValuePayload<T> payload{data, data};
  ::attn_msl::detail::simd_collective(
      "simd_prefix_exclusive_sum", site,
      &::attn_msl::detail::combine_prefix_sum<T, false>, &payload);
  return payload.result;
}
template <class T>
inline T
simd_prefix_inclusive_sum(T data,
                          ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  static_assert(::attn_msl::detail::is_arithmetic_like<T>,
                "simd_prefix_inclusive_sum takes numbers");
  ::attn_msl::detail::ValuePayload<T> payload{data, data};
  ::attn_msl::detail::simd_collective(
      "simd_prefix_inclusive_sum", site,
      &::attn_msl::detail::combine_prefix_sum<T, true>, &payload);
  return payload.result;
}

#define ATTN_MSL_SIMD_SHUFFLE(NAME, KIND, ARG)                                 \
  template <class T>                                                           \
  inline T NAME(T data, ushort ARG,                                            \
                ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {          \
    return ::attn_msl::detail::simd_shuffle_collective<                        \
        T, ::attn_msl::detail::ShuffleKind::KIND>(data, ARG, site);            \
  }
ATTN_MSL_SIMD_SHUFFLE(simd_shuffle, kIndex, simd_lane_id)
ATTN_MSL_SIMD_SHUFFLE(simd_shuffle_xor, kXor, mask)
ATTN_MSL_SIMD_SHUFFLE(simd_shuffle_down, kDown, delta)
ATTN_MSL_SIMD_SHUFFLE(simd_shuffle_up, kUp, delta)
ATTN_MSL_SIMD_SHUFFLE(simd_broadcast, kBroadcast, broadcast_lane_id)
#undef ATTN_MSL_SIMD_SHUFFLE

template <class T>
inline T
simd_broadcast_first(T data,
                     ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  return ::attn_msl::detail::simd_shuffle_collective<
      T, ::attn_msl::detail::ShuffleKind::kBroadcast>(data, 0, site);
}

// Every lane of the simdgroup must reach the same simdgroup_barrier call.
inline void
simdgroup_barrier(mem_flags flags,
                  ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  unsigned bits = unsigned(flags);
  ::attn_msl::detail::simd_collective(
      "simdgroup_barrier", site, &::attn_msl::detail::combine_simdgroup_barrier,
      &bits);
}

//===----------------------------------------------------------------------===//
// simdgroup_matrix: 8x8 matrices spread over the 32 lanes of a simdgroup,
// two elements a lane (see lane_element_coord). Load, store and multiply are
// collectives that need the full simdgroup, as on the hardware.
//===----------------------------------------------------------------------===//

template <class T, int Cols, int Rows> struct simdgroup_matrix {
  static_assert(Cols == 8 && Rows == 8,
                "the emulator supports 8x8 simdgroup matrices only");
  static_assert(::attn_msl::detail::is_float_scalar<T>,
                "simdgroup_matrix holds float, half or bfloat");

  // Uninitialized in Metal; NaN here so that reading it shows.
  simdgroup_matrix() : lane_elements{T(NAN), T(NAN)} {}

  // Metal's scalar constructor makes a diagonal matrix.
  explicit simdgroup_matrix(T diagonal) {
    uint lane = ::attn_msl::detail::current_lane();
    for (uint e = 0; e < 2; ++e) {
      ::attn_msl::detail::MatrixCoord at =
          ::attn_msl::detail::lane_element_coord(lane, e);
      lane_elements[e] = at.row == at.col ? diagonal : T(0);
    }
  }

  vec<T, 2> &thread_elements() { return lane_elements; }
  const vec<T, 2> &thread_elements() const { return lane_elements; }

  // This lane's two elements.
  vec<T, 2> lane_elements;
};

typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;

template <class T, int Cols, int Rows>
inline simdgroup_matrix<T, Cols, Rows> make_filled_simdgroup_matrix(T value) {
  simdgroup_matrix<T, Cols, Rows> m;
  m.lane_elements = vec<T, 2>{value, value};
  return m;
}

} // namespace metal

namespace attn_msl {
namespace detail {

inline std::string require_full_simdgroup(const char *construct,
                                          unsigned width) {
  if (width == kSimdWidth)
    return {};
  return std::string(construct) +
         " needs all 32 lanes, but this simdgroup "
         "has " +
         std::to_string(width) + " threads";
}

template <class T> struct MatrixTransferPayload {
  metal::simdgroup_matrix<T, 8, 8> *matrix;
  T *memory;
  ulong elements_per_row;
  ulong2 origin;
  bool transpose;
};

// Element (row, col) lives at memory[(origin.y + row) * elements_per_row +
// origin.x + col]; transposed, at the same place with row and col swapped.
// The origin is (column, row) in the memory's own coordinates.
template <class T>
size_t matrix_memory_offset(const MatrixTransferPayload<T> &p, MatrixCoord at) {
  ulong memory_row = p.transpose ? at.col : at.row;
  ulong memory_col = p.transpose ? at.row : at.col;
  return (p.origin.y + memory_row) * p.elements_per_row + p.origin.x +
         memory_col;
}

template <class T>
std::string check_uniform_transfer(const char *construct,
                                   SimdArrival *const *lanes) {
  const auto &first = payload_of<MatrixTransferPayload<T>>(lanes[0]);
  for (unsigned i = 1; i < kSimdWidth; ++i) {
    const auto &p = payload_of<MatrixTransferPayload<T>>(lanes[i]);
    if (p.memory != first.memory ||
        p.elements_per_row != first.elements_per_row ||
        p.origin.x != first.origin.x || p.origin.y != first.origin.y ||
        p.transpose != first.transpose)
      return std::string(construct) +
             " needs the same pointer, elements_per_row, origin and "
             "transpose in every lane, but lane " +
             std::to_string(i) + " differs from lane 0";
  }
  return {};
}

template <class T, bool Store>
std::string combine_matrix_transfer(SimdArrival *const *lanes, unsigned width) {
  const char *construct = Store ? "simdgroup_store" : "simdgroup_load";
  std::string error = require_full_simdgroup(construct, width);
  if (error.empty())
    error = check_uniform_transfer<T>(construct, lanes);
  if (!error.empty())
    return error;
  for (uint lane = 0; lane < kSimdWidth; ++lane) {
    auto &p = payload_of<MatrixTransferPayload<T>>(lanes[lane]);
    for (uint e = 0; e < 2; ++e) {
      size_t offset = matrix_memory_offset(p, lane_element_coord(lane, e));
      std::string fault_text =
          access_error(*lanes[lane]->thread, p.memory + offset, sizeof(T), Store);
      if (!fault_text.empty())
        return describe_thread(*lanes[lane]->thread) + ": " + fault_text;
      if (Store)
        p.memory[offset] = p.matrix->lane_elements[e];
      else
        p.matrix->lane_elements[e] = p.memory[offset];
    }
  }
  return {};
}

template <class TD, class TA, class TB, class TC> struct MultiplyPayload {
  metal::simdgroup_matrix<TD, 8, 8> *d;
  const metal::simdgroup_matrix<TA, 8, 8> *a;
  const metal::simdgroup_matrix<TB, 8, 8> *b;
  const metal::simdgroup_matrix<TC, 8, 8> *c; // nullptr: no accumulator
};

template <class M>
void gather_matrix(SimdArrival *const *lanes, float out[8][8], M getter) {
  for (uint lane = 0; lane < kSimdWidth; ++lane)
    for (uint e = 0; e < 2; ++e) {
      MatrixCoord at = lane_element_coord(lane, e);
      out[at.row][at.col] = float(getter(lanes[lane])->lane_elements[e]);
    }
}

// d = a * b + c with float products and a float running sum over k, then
// rounded to d's type. Everything is read before d is written, so d may be
// the same matrix as c (or a, b).
template <class TD, class TA, class TB, class TC>
std::string combine_multiply(SimdArrival *const *lanes, unsigned width) {
  using Payload = MultiplyPayload<TD, TA, TB, TC>;
  const char *construct = lanes[0]->construct;
  std::string error = require_full_simdgroup(construct, width);
  if (!error.empty())
    return error;
  float a[8][8], b[8][8], c[8][8] = {};
  gather_matrix(lanes, a,
                [](SimdArrival *s) { return payload_of<Payload>(s).a; });
  gather_matrix(lanes, b,
                [](SimdArrival *s) { return payload_of<Payload>(s).b; });
  if (payload_of<Payload>(lanes[0]).c)
    gather_matrix(lanes, c,
                  [](SimdArrival *s) { return payload_of<Payload>(s).c; });
  for (uint lane = 0; lane < kSimdWidth; ++lane)
    for (uint e = 0; e < 2; ++e) {
      MatrixCoord at = lane_element_coord(lane, e);
      float sum = c[at.row][at.col];
      for (int k = 0; k < 8; ++k)
        sum = std::fma(a[at.row][k], b[k][at.col], sum);
      payload_of<Payload>(lanes[lane]).d->lane_elements[e] = TD(sum);
    }
  return {};
}

} // namespace detail
} // namespace attn_msl

namespace metal {

// Metal loads and stores matrices from device or threadgroup memory only;
// one overload per address space, and a thread (or constant) pointer
// matches none but the refusing one below.
#define ATTN_MSL_MATRIX_TRANSFER(AS)                                           \
  template <class T, int Cols, int Rows>                                       \
  inline void simdgroup_load(                                                  \
      simdgroup_matrix<T, Cols, Rows> &d, const AS T *src,                     \
      ulong elements_per_row = Cols, ulong2 matrix_origin = ulong2{0, 0},      \
      bool transpose_matrix = false,                                           \
      ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {                    \
    ::attn_msl::detail::MatrixTransferPayload<T> payload{                      \
        &d, (T *)src, elements_per_row, matrix_origin, transpose_matrix};      \
    ::attn_msl::detail::simd_collective(                                       \
        "simdgroup_load", site,                                                \
        &::attn_msl::detail::combine_matrix_transfer<T, false>, &payload);     \
  }                                                                            \
  template <class T, int Cols, int Rows>                                       \
  inline void simdgroup_store(                                                 \
      const simdgroup_matrix<T, Cols, Rows> &d, AS T *dst,                     \
      ulong elements_per_row = Cols, ulong2 matrix_origin = ulong2{0, 0},      \
      bool transpose_matrix = false,                                           \
      ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {                    \
    ::attn_msl::detail::MatrixTransferPayload<T> payload{                      \
        const_cast<simdgroup_matrix<T, Cols, Rows> *>(&d), (T *)dst,           \
        elements_per_row, matrix_origin, transpose_matrix};                    \
    ::attn_msl::detail::simd_collective(                                       \
        "simdgroup_store", site,                                               \
        &::attn_msl::detail::combine_matrix_transfer<T, true>, &payload);      \
  }
#ifndef ATTN_MSL_ERASE_ADDRESS_SPACES
ATTN_MSL_MATRIX_TRANSFER(ATTN_MSL_AS_DEVICE)
ATTN_MSL_MATRIX_TRANSFER(ATTN_MSL_AS_THREADGROUP)
#else
ATTN_MSL_MATRIX_TRANSFER()
#endif
#undef ATTN_MSL_MATRIX_TRANSFER

#ifndef ATTN_MSL_ERASE_ADDRESS_SPACES
template <class T, int Cols, int Rows, class U,
          std::enable_if_t<::attn_msl::detail::address_space_of<U> == 0, int> =
              0>
inline void simdgroup_load(simdgroup_matrix<T, Cols, Rows> &, const U *,
                           ulong = Cols, ulong2 = ulong2{0, 0}, bool = false,
                           ::attn_msl::detail::Site = ATTN_MSL_CALL_SITE) {
  static_assert(::attn_msl::detail::dependent_false<U>,
                "simdgroup_load from thread memory: Metal loads a "
                "simdgroup_matrix from device or threadgroup memory only");
}
template <class T, int Cols, int Rows, class U,
          std::enable_if_t<::attn_msl::detail::address_space_of<U> == 0, int> =
              0>
inline void simdgroup_store(const simdgroup_matrix<T, Cols, Rows> &, U *,
                            ulong = Cols, ulong2 = ulong2{0, 0}, bool = false,
                            ::attn_msl::detail::Site = ATTN_MSL_CALL_SITE) {
  static_assert(::attn_msl::detail::dependent_false<U>,
                "simdgroup_store to thread memory: Metal stores a "
                "simdgroup_matrix to device or threadgroup memory only");
}
#endif

// Element types may differ (half or bfloat inputs, float accumulator).
template <class TD, class TA, class TB, class TC>
inline void simdgroup_multiply_accumulate(
    simdgroup_matrix<TD, 8, 8> &d, const simdgroup_matrix<TA, 8, 8> &a,
    const simdgroup_matrix<TB, 8, 8> &b, const simdgroup_matrix<TC, 8, 8> &c,
    ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  ::attn_msl::detail::MultiplyPayload<TD, TA, TB, TC> payload{&d, &a, &b, &c};
  ::attn_msl::detail::simd_collective(
      "simdgroup_multiply_accumulate", site,
      &::attn_msl::detail::combine_multiply<TD, TA, TB, TC>, &payload);
}

template <class TD, class TA, class TB>
inline void
simdgroup_multiply(simdgroup_matrix<TD, 8, 8> &d,
                   const simdgroup_matrix<TA, 8, 8> &a,
                   const simdgroup_matrix<TB, 8, 8> &b,
                   ::attn_msl::detail::Site site = ATTN_MSL_CALL_SITE) {
  ::attn_msl::detail::MultiplyPayload<TD, TA, TB, TD> payload{&d, &a, &b,
                                                              nullptr};
  ::attn_msl::detail::simd_collective(
      "simdgroup_multiply", site,
      &::attn_msl::detail::combine_multiply<TD, TA, TB, TD>, &payload);
}

} // namespace metal

//===----------------------------------------------------------------------===//
// The launcher.
//===----------------------------------------------------------------------===//

namespace attn_msl {

// A kernel and its name for error messages. Make one with ATTN_MSL_KERNEL:
// the kernel's parameters are all default arguments (see BufferParam), so
// the wrapper calls it with none.
struct Kernel {
  const char *name;
  void (*body)();
};
#define ATTN_MSL_KERNEL(fn) (::attn_msl::Kernel{#fn, [] { fn(); }})

// Memory bound to [[buffer(index)]]. The element type is checked against
// the kernel parameter's pointee type when the kernel reads the parameter.
struct Buffer {
  uint index;
  void *data;
  size_t bytes;
  const detail::TypeTag *element; // nullptr: untyped bytes
  size_t element_bytes;           // 1 for untyped bytes
};

template <class T> Buffer bind_buffer(uint index, T *data, size_t count = 1) {
  return {index, const_cast<void *>(static_cast<const void *>(data)),
          count * sizeof(T), detail::type_tag<std::remove_cv_t<T>>(),
          sizeof(T)};
}
inline Buffer bind_bytes(uint index, void *data, size_t bytes) {
  return {index, data, bytes, nullptr, 1};
}

// The order in which the scheduler runs the ready threads of a threadgroup
// between barriers and collectives. Kernels with a missing barrier give
// different results in different orders. ATTN_MSL_SCHEDULE overrides it:
// forward, reverse, shuffle, shuffle:SEED, simdgroups.
enum class Schedule {
  kForward,    // thread index order (the default)
  kReverse,    // highest thread index first
  kShuffle,    // a fresh random order every round (seeded, reproducible)
  kSimdgroups, // one simdgroup at a time, the last one first, each until
               // it waits at a threadgroup barrier or exits
};

struct LaunchOptions {
  // Also print a failure to stderr (negative tests turn this off).
  bool print_errors = true;
  // Per-thread fiber stack; overflowing it hits a guard page (SIGSEGV).
  size_t stack_bytes = 256 * 1024;
  // A thread that runs this long without reaching a barrier, a collective
  // or its end cannot be preempted (fibers are cooperative): the watchdog
  // prints what runs and exits the process with status 124 rather than
  // hang. 0 turns it off.
  double watchdog_seconds = 60;
  // Thread order; the ATTN_MSL_SCHEDULE environment variable overrides it.
  Schedule schedule = Schedule::kForward;
  unsigned shuffle_seed = 1;
  // Device buffers and threadgroup memory in guarded mappings, checked
  // accesses and the threadgroup memory race detector (README "Checks").
  bool check_memory = true;
  bool detect_races = true;
};

struct LaunchResult {
  bool ok = true;
  std::string error;
  explicit operator bool() const { return ok; }
};

namespace detail {

// Fiber stacks with a PROT_NONE guard page below each, reused by every
// threadgroup of a launch.
class FiberStacks {
public:
  FiberStacks(size_t count, size_t bytes) : bytes_(round_to_pages(bytes)) {
    for (size_t i = 0; i < count; ++i) {
      void *base = mmap(nullptr, bytes_ + page(), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (base == MAP_FAILED)
        return;
      mprotect(base, page(), PROT_NONE);
      bases_.push_back(base);
    }
  }
  ~FiberStacks() {
    for (void *base : bases_)
      munmap(base, bytes_ + page());
  }
  FiberStacks(const FiberStacks &) = delete;
  FiberStacks &operator=(const FiberStacks &) = delete;

  bool complete(size_t count) const { return bases_.size() == count; }
  void *stack(size_t i) const {
    return static_cast<char *>(bases_[i]) + page();
  }
  size_t bytes() const { return bytes_; }

private:
  static size_t page() { return size_t(sysconf(_SC_PAGESIZE)); }
  static size_t round_to_pages(size_t bytes) {
    return (bytes + page() - 1) / page() * page();
  }
  size_t bytes_;
  std::vector<void *> bases_;
};

inline std::string describe_list(const std::vector<uint> &values) {
  std::string out;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1)
      ++j;
    if (!out.empty())
      out += ", ";
    out += std::to_string(values[i]);
    if (j > i)
      out += "-" + std::to_string(values[j]);
    i = j + 1;
  }
  return out;
}

inline std::string
describe_threads(const std::vector<const ThreadState *> &threads) {
  std::vector<uint> indices;
  for (const ThreadState *t : threads)
    indices.push_back(t->index);
  return (threads.size() == 1 ? "thread " : "threads ") +
         describe_list(indices);
}

inline std::string
describe_lanes(const std::vector<const ThreadState *> &threads) {
  std::vector<uint> indices, lanes;
  for (const ThreadState *t : threads) {
    indices.push_back(t->index);
    lanes.push_back(t->lane);
  }
  return (threads.size() == 1 ? "thread " : "threads ") +
         describe_list(indices) + (lanes.size() == 1 ? " (lane " : " (lanes ") +
         describe_list(lanes) + ")";
}

inline std::string describe_wait(const ThreadState &t) {
  switch (t.status) {
  case ThreadStatus::kAtSimd:
    return std::string("waiting at ") + t.arrival->construct + " (" +
           describe_site(t.arrival->site) + ")";
  case ThreadStatus::kAtBarrier:
    return "waiting at threadgroup_barrier (" + describe_site(t.barrier_site) +
           ")";
  case ThreadStatus::kDone:
    return "exited the kernel";
  case ThreadStatus::kFailed:
    return "failed";
  case ThreadStatus::kReady:
    return "running";
  }
  return "?";
}

// Groups threads by what they wait for, in order of first appearance, and
// says so: "threads 0-15 (lanes 0-15) waiting at simd_sum (k.metal:9),
// while threads 16-31 (lanes 16-31) exited the kernel".
inline std::string
describe_groups(const std::vector<const ThreadState *> &threads,
                bool name_lanes) {
  std::vector<std::string> keys;
  std::vector<std::vector<const ThreadState *>> groups;
  for (const ThreadState *t : threads) {
    std::string key = describe_wait(*t);
    size_t g = std::find(keys.begin(), keys.end(), key) - keys.begin();
    if (g == keys.size()) {
      keys.push_back(key);
      groups.emplace_back();
    }
    groups[g].push_back(t);
  }
  std::string out;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (g)
      out += g + 1 == groups.size() ? ", while " : ", ";
    out +=
        (name_lanes ? describe_lanes(groups[g]) : describe_threads(groups[g])) +
        " " + keys[g];
  }
  return out;
}

struct ScheduleChoice {
  Schedule schedule = Schedule::kForward;
  unsigned seed = 1;
};

inline std::string describe_schedule(const ScheduleChoice &choice) {
  switch (choice.schedule) {
  case Schedule::kForward:
    return "forward";
  case Schedule::kReverse:
    return "reverse";
  case Schedule::kShuffle:
    return "shuffle:" + std::to_string(choice.seed);
  case Schedule::kSimdgroups:
    return "simdgroups";
  }
  return "?";
}

// ATTN_MSL_SCHEDULE, if set, else the options'. Returns an error text.
inline std::string choose_schedule(const LaunchOptions &options,
                                   ScheduleChoice &choice) {
  choice = {options.schedule, options.shuffle_seed};
  const char *env = std::getenv("ATTN_MSL_SCHEDULE");
  if (!env || !*env)
    return {};
  std::string text = env;
  if (text == "forward")
    choice.schedule = Schedule::kForward;
  else if (text == "reverse")
    choice.schedule = Schedule::kReverse;
  else if (text == "simdgroups")
    choice.schedule = Schedule::kSimdgroups;
  else if (text == "shuffle")
    choice.schedule = Schedule::kShuffle;
  else if (text.rfind("shuffle:", 0) == 0 && text.size() > 8 &&
           text.find_first_not_of("0123456789", 8) == std::string::npos) {
    choice.schedule = Schedule::kShuffle;
    choice.seed = unsigned(std::strtoul(text.c_str() + 8, nullptr, 10));
  } else {
    return "ATTN_MSL_SCHEDULE must be forward, reverse, shuffle, "
           "shuffle:SEED or simdgroups, not '" +
           text + "'";
  }
  return {};
}

class ThreadgroupRunner {
public:
  ThreadgroupRunner(ThreadgroupState &group, const FiberStacks &stacks,
                    const ScheduleChoice &schedule)
      : group_(group), stacks_(stacks), schedule_(schedule) {
    if (schedule.schedule == Schedule::kShuffle) {
      const uint3 p = group.position;
      rng_.seed(schedule.seed * 2654435761u ^ (p.x * 73856093u) ^
                (p.y * 19349663u) ^ (p.z * 83492791u));
    }
  }

  // Runs every thread to completion. Returns false with group.failure set
  // when a thread faults or the threads can no longer make progress.
  bool run() {
    start_fibers();
    for (;;) {
      bool ran_any = false;
      plan_round();
      for (unsigned index : order_) {
        ThreadState &thread = group_.threads[index];
        if (thread.status != ThreadStatus::kReady)
          continue;
        ran_any = true;
        resume(thread);
        if (!group_.failure.empty())
          return false;
        if (thread.status == ThreadStatus::kAtSimd)
          arrive_at_simd_collective(thread.simdgroup);
        else if (thread.status == ThreadStatus::kAtBarrier)
          arrive_at_barrier();
        if (!group_.failure.empty())
          return false;
      }
      if (ran_any)
        continue;
      if (std::all_of(group_.threads.begin(), group_.threads.end(),
                      [](const ThreadState &t) {
                        return t.status == ThreadStatus::kDone;
                      }))
        return true;
      group_.failure = prefix() + explain_stall();
      return false;
    }
  }

private:
  // The threads to offer a turn this round, in the schedule's order.
  void plan_round() {
    const unsigned n = unsigned(group_.threads.size());
    order_.clear();
    switch (schedule_.schedule) {
    case Schedule::kForward:
    case Schedule::kShuffle:
      for (unsigned i = 0; i < n; ++i)
        order_.push_back(i);
      if (schedule_.schedule == Schedule::kShuffle)
        std::shuffle(order_.begin(), order_.end(), rng_);
      break;
    case Schedule::kReverse:
      for (unsigned i = n; i-- > 0;)
        order_.push_back(i);
      break;
    case Schedule::kSimdgroups:
      // The last simdgroup with a ready thread, alone.
      for (unsigned s = group_.simdgroup_count(); s-- > 0;) {
        for (unsigned i = s * kSimdWidth;
             i < std::min(n, (s + 1) * kSimdWidth); ++i)
          if (group_.threads[i].status == ThreadStatus::kReady)
            order_.push_back(i);
        if (!order_.empty())
          break;
      }
      break;
    }
  }

  // Runs the kernel in this fiber, then leaves it for good: a finished
  // fiber is never resumed, so nothing may be left to destroy on its stack.
  static void fiber_entry() {
    run_kernel(*t_group, *t_thread);
    fiber_switch(t_thread->context, t_group->scheduler);
    __builtin_unreachable();
  }

  static void run_kernel(ThreadgroupState &group, ThreadState &self) {
    std::string error;
    try {
      group.launch->kernel_body();
      self.status = ThreadStatus::kDone;
      return;
    } catch (const KernelFault &f) {
      error = f.message;
    } catch (const std::exception &e) {
      error = std::string("exception: ") + e.what();
    } catch (...) {
      error = "unknown exception";
    }
    self.status = ThreadStatus::kFailed;
    group.failure = "attn-msl: kernel '" +
                    std::string(group.launch->kernel_name) + "', threadgroup " +
                    describe_position(group.position) + ", " +
                    describe_thread(self) + ": " + error;
  }

  void start_fibers() {
    for (size_t i = 0; i < group_.threads.size(); ++i) {
      ThreadState &thread = group_.threads[i];
      fiber_prepare(thread.context, stacks_.stack(i), stacks_.bytes(),
                    &ThreadgroupRunner::fiber_entry);
    }
  }

  void resume(ThreadState &thread) {
    group_.progress->thread_index.store(thread.index,
                                        std::memory_order_relaxed);
    group_.progress->switches.fetch_add(1, std::memory_order_relaxed);
    t_thread = &thread;
    fiber_switch(group_.scheduler, thread.context);
    t_thread = nullptr;
  }

  std::string prefix() const {
    return "attn-msl: kernel '" + std::string(group_.launch->kernel_name) +
           "', threadgroup " + describe_position(group_.position) + ": ";
  }

  void arrive_at_simd_collective(uint simdgroup) {
    unsigned width = group_.simdgroup_width(simdgroup);
    if (++group_.waiting_in_simdgroup[simdgroup] < width)
      return;
    ThreadState *lanes = &group_.threads[simdgroup * kSimdWidth];
    SimdArrival *arrivals[kSimdWidth];
    for (unsigned i = 0; i < width; ++i) {
      arrivals[i] = lanes[i].arrival;
      const SimdArrival &a = *arrivals[i], &first = *arrivals[0];
      if (a.combine != first.combine || !same_site(a.site, first.site) ||
          std::strcmp(a.construct, first.construct) != 0) {
        group_.failure =
            prefix() + "simdgroup " + std::to_string(simdgroup) +
            " diverged: " + describe_groups(simdgroup_threads(simdgroup), true);
        return;
      }
    }
    std::string error = arrivals[0]->combine(arrivals, width);
    if (!error.empty()) {
      group_.failure = prefix() + "simdgroup " + std::to_string(simdgroup) +
                       ", " + arrivals[0]->construct + " (" +
                       describe_site(arrivals[0]->site) + "): " + error;
      return;
    }
    for (unsigned i = 0; i < width; ++i) {
      lanes[i].status = ThreadStatus::kReady;
      lanes[i].arrival = nullptr;
    }
    group_.waiting_in_simdgroup[simdgroup] = 0;
  }

  void arrive_at_barrier() {
    if (++group_.waiting_at_barrier < group_.threads.size())
      return;
    const Site &site = group_.threads[0].barrier_site;
    for (const ThreadState &t : group_.threads)
      if (!same_site(t.barrier_site, site)) {
        group_.failure = prefix() + "threads reach different barriers: " +
                         describe_groups(all_threads(), false);
        return;
      }
    if (t_checks && (group_.threads[0].barrier_flags & kMemThreadgroupFlag)) {
      ++t_checks->epoch;
      t_checks->last_barrier = site;
    }
    for (ThreadState &t : group_.threads)
      t.status = ThreadStatus::kReady;
    group_.waiting_at_barrier = 0;
  }

  std::vector<const ThreadState *> simdgroup_threads(uint simdgroup) const {
    std::vector<const ThreadState *> out;
    for (const ThreadState &t : group_.threads)
      if (t.simdgroup == simdgroup)
        out.push_back(&t);
    return out;
  }
  std::vector<const ThreadState *> all_threads() const {
    std::vector<const ThreadState *> out;
    for (const ThreadState &t : group_.threads)
      out.push_back(&t);
    return out;
  }

  // No thread can run: some wait at a collective or barrier that others
  // will never reach. Blame the first simdgroup stuck at a SIMD collective,
  // else the barrier.
  std::string explain_stall() const {
    for (uint s = 0; s < group_.simdgroup_count(); ++s)
      if (group_.waiting_in_simdgroup[s] > 0)
        return "simdgroup " + std::to_string(s) +
               " cannot complete a SIMD collective: " +
               describe_groups(simdgroup_threads(s), true);
    return "threadgroup_barrier cannot complete: " +
           describe_groups(all_threads(), false);
  }

  ThreadgroupState &group_;
  const FiberStacks &stacks_;
  ScheduleChoice schedule_;
  std::vector<unsigned> order_;
  std::mt19937 rng_;
};

// Watches a launch from a second OS thread; see
// LaunchOptions::watchdog_seconds.
class Watchdog {
public:
  Watchdog(const char *kernel_name, const Progress &progress, double seconds)
      : kernel_name_(kernel_name), progress_(progress), seconds_(seconds) {
    if (seconds_ > 0)
      watcher_ = std::thread([this] { watch(); });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    if (watcher_.joinable())
      watcher_.join();
  }
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

private:
  void watch() {
    using Clock = std::chrono::steady_clock;
    uint64_t seen = progress_.switches.load(std::memory_order_relaxed);
    Clock::time_point last_change = Clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(50),
                           [this] { return done_; })) {
      uint64_t now_seen = progress_.switches.load(std::memory_order_relaxed);
      if (now_seen != seen) {
        seen = now_seen;
        last_change = Clock::now();
        continue;
      }
      if (std::chrono::duration<double>(Clock::now() - last_change).count() <
          seconds_)
        continue;
      std::fprintf(stderr,
                   "attn-msl: kernel '%s', threadgroup (%u,%u,%u), thread %u: "
                   "no barrier, SIMD collective or return for %g s; an "
                   "endless loop, or a spin-wait on memory that another "
                   "thread writes (fibers are not preempted; Metal does not "
                   "promise such progress either). Exiting with status 124.\n",
                   kernel_name_, progress_.group_x.load(),
                   progress_.group_y.load(), progress_.group_z.load(),
                   progress_.thread_index.load(), seconds_);
      std::fflush(stderr);
      std::_Exit(124);
    }
  }

  const char *kernel_name_;
  const Progress &progress_;
  double seconds_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread watcher_;
};

inline std::string validate_launch(const LaunchState &launch) {
  uint3 grid = launch.threadgroups_per_grid;
  uint3 size = launch.threads_per_threadgroup;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0)
    return "the grid " + describe_position(grid) + " has no threadgroups";
  if (size.x == 0 || size.y == 0 || size.z == 0)
    return "the threadgroup size " + describe_position(size) + " is empty";
  unsigned long threads = (unsigned long)size.x * size.y * size.z;
  if (threads > kMaxThreadsPerThreadgroup)
    return "the threadgroup size " + describe_position(size) + " has " +
           std::to_string(threads) + " threads, more than Metal's " +
           std::to_string(kMaxThreadsPerThreadgroup);
  std::vector<bool> seen(kMaxBufferIndex + 1);
  for (const BoundBuffer &b : launch.buffers) {
    if (b.index > kMaxBufferIndex)
      return "buffer index " + std::to_string(b.index) + " is beyond Metal's " +
             std::to_string(kMaxBufferIndex);
    if (seen[b.index])
      return "buffer index " + std::to_string(b.index) + " is bound twice";
    if (!b.data)
      return "buffer " + std::to_string(b.index) + " is a null pointer";
    seen[b.index] = true;
  }
  size_t total = 0;
  for (size_t i = 0; i < launch.threadgroup_memory_bytes.size(); ++i) {
    size_t bytes = launch.threadgroup_memory_bytes[i];
    if (bytes == 0 || bytes % 16 != 0)
      return "threadgroup memory " + std::to_string(i) + " is " +
             std::to_string(bytes) +
             " bytes; Metal needs a positive multiple of 16";
    total += bytes;
  }
  if (total > kMaxThreadgroupMemoryBytes)
    return "threadgroup memory totals " + std::to_string(total) +
           " bytes, more than Metal's " +
           std::to_string(kMaxThreadgroupMemoryBytes);
  return {};
}

inline LaunchResult launch_impl(const LaunchState &launch,
                                const LaunchOptions &options) {
  auto failed = [&](std::string message) {
    if (options.print_errors)
      std::fprintf(stderr, "%s\n", message.c_str());
    return LaunchResult{false, std::move(message)};
  };
  if (t_group)
    return failed("attn-msl: kernel '" + std::string(launch.kernel_name) +
                  "': launch called from inside a running kernel");
  std::string invalid = validate_launch(launch);
  if (!invalid.empty())
    return failed("attn-msl: kernel '" + std::string(launch.kernel_name) +
                  "': " + invalid);

  uint3 size = launch.threads_per_threadgroup;
  size_t thread_count = size_t(size.x) * size.y * size.z;
  FiberStacks stacks(thread_count, options.stack_bytes);
  if (!stacks.complete(thread_count))
    return failed("attn-msl: kernel '" + std::string(launch.kernel_name) +
                  "': cannot allocate fiber stacks");

  ScheduleChoice schedule;
  std::string bad_schedule = choose_schedule(options, schedule);
  if (!bad_schedule.empty())
    return failed("attn-msl: kernel '" + std::string(launch.kernel_name) +
                  "': " + bad_schedule);

  // Checked memory: device buffers copied into guarded mappings (unless two
  // bindings overlap, which stay where they are, unchecked), threadgroup
  // memory in guarded mappings. The copies go back to the host at the end.
  LaunchState checked_launch = launch;
  CheckState checks;
  checks.races = options.detect_races;
  struct CopyBack {
    CheckState &checks;
    ~CopyBack() {
      for (const auto &r : checks.regions)
        if (r->host && std::memcmp(r->host, r->data, r->bytes) != 0)
          std::memcpy(r->host, r->data, r->bytes);
    }
  } copy_back{checks};
  std::vector<unsigned char *> memory;
  std::vector<std::unique_ptr<unsigned char[]>> unchecked_memory;
  if (options.check_memory) {
    for (BoundBuffer &b : checked_launch.buffers) {
      const auto *begin = static_cast<const unsigned char *>(b.data);
      bool overlaps = false;
      for (const BoundBuffer &other : launch.buffers) {
        const auto *o = static_cast<const unsigned char *>(other.data);
        if (other.index != b.index && o < begin + b.bytes &&
            begin < o + other.bytes)
          overlaps = true;
      }
      if (overlaps)
        continue;
      auto region = std::make_unique<CheckedRegion>();
      if (!region->map(b.bytes))
        return failed("attn-msl: kernel '" + std::string(launch.kernel_name) +
                      "': cannot map a checked copy of buffer " +
                      std::to_string(b.index));
      std::memcpy(region->data, b.data, b.bytes);
      region->host = b.data;
      region->index = b.index;
      region->element_bytes = b.element ? b.element_bytes : 1;
      region->element_name = b.element ? b.element->name : "byte";
      b.data = region->data;
      checks.add(std::move(region));
    }
    for (size_t i = 0; i < launch.threadgroup_memory_bytes.size(); ++i) {
      auto region = std::make_unique<CheckedRegion>();
      if (!region->map(launch.threadgroup_memory_bytes[i]))
        return failed("attn-msl: kernel '" + std::string(launch.kernel_name) +
                      "': cannot map threadgroup memory");
      region->threadgroup = true;
      region->index = uint(i);
      region->shadow.assign(region->bytes, ShadowByte{});
      memory.push_back(region->data);
      checks.add(std::move(region));
    }
  } else {
    // operator new aligns to 16 bytes, enough for float4.
    for (size_t bytes : launch.threadgroup_memory_bytes) {
      unchecked_memory.emplace_back(new unsigned char[bytes]);
      memory.push_back(unchecked_memory.back().get());
    }
  }

  std::unique_ptr<GuardFaultHandler> fault_handler;
  if (options.check_memory)
    fault_handler = std::make_unique<GuardFaultHandler>(launch.kernel_name);
  ThreadgroupState group;
  group.launch = &checked_launch;
  Progress progress;
  group.progress = &progress;
  Watchdog watchdog(launch.kernel_name, progress, options.watchdog_seconds);
  group.threadgroup_memory = memory;
  const std::string schedule_note =
      schedule.schedule == Schedule::kForward
          ? std::string()
          : " [schedule " + describe_schedule(schedule) + "]";

  uint3 grid = launch.threadgroups_per_grid;
  for (uint z = 0; z < grid.z; ++z)
    for (uint y = 0; y < grid.y; ++y)
      for (uint x = 0; x < grid.x; ++x) {
        group.position = uint3{x, y, z};
        progress.group_x = x, progress.group_y = y, progress.group_z = z;
        group.threads.assign(thread_count, ThreadState{});
        for (uint i = 0; i < thread_count; ++i) {
          ThreadState &t = group.threads[i];
          t.index = i;
          t.position =
              uint3{i % size.x, i / size.x % size.y, i / (size.x * size.y)};
          t.simdgroup = i / kSimdWidth;
          t.lane = i % kSimdWidth;
        }
        group.waiting_in_simdgroup.assign(group.simdgroup_count(), 0);
        group.waiting_at_barrier = 0;
        group.failure.clear();
        // Threadgroup memory starts as garbage in Metal: all-ones bytes read
        // as NaN (float, half) or -1 (integers), so missing writes show.
        for (size_t i = 0; i < memory.size(); ++i)
          std::memset(memory[i], 0xff, launch.threadgroup_memory_bytes[i]);
        // A new epoch: nothing written by an earlier threadgroup races.
        ++checks.epoch;
        checks.simd_epoch.assign(group.simdgroup_count(), 0);
        checks.last_barrier = Site{"", 0};

        t_group = &group;
        t_checks = options.check_memory ? &checks : nullptr;
        bool ok = ThreadgroupRunner(group, stacks, schedule).run();
        t_group = nullptr;
        t_checks = nullptr;
        if (!ok)
          return failed(group.failure + schedule_note);
      }
  return {};
}

} // namespace detail

// Runs `kernel` over threadgroups_per_grid threadgroups (one after another)
// of threads_per_threadgroup threads each. threadgroup_memory_bytes[i] is
// the length of the [[threadgroup(i)]] parameter's memory.
[[nodiscard]] inline LaunchResult
launch(const Kernel &kernel, uint3 threadgroups_per_grid,
       uint3 threads_per_threadgroup, std::vector<Buffer> buffers,
       std::vector<size_t> threadgroup_memory_bytes = {},
       const LaunchOptions &options = {}) {
  detail::LaunchState state;
  state.kernel_name = kernel.name;
  state.kernel_body = kernel.body;
  state.threadgroups_per_grid = threadgroups_per_grid;
  state.threads_per_threadgroup = threads_per_threadgroup;
  for (const Buffer &b : buffers)
    state.buffers.push_back({b.index, b.data, b.bytes, b.element,
                             b.element_bytes});
  state.threadgroup_memory_bytes = std::move(threadgroup_memory_bytes);
  return detail::launch_impl(state, options);
}

} // namespace attn_msl

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

#endif // ATTN_RUNTIME_MSL_METAL_EMULATOR_H
