//===- emulator/state.h - execution state -----------------------*- C++ -*-===//
//
// A part of metal_emulator.h, which includes the parts in order: each
// builds on those before it and is not included on its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_MSL_EMULATOR_EMULATOR_STATE_H
#define ATTN_TOOLS_MSL_EMULATOR_EMULATOR_STATE_H

#pragma clang system_header

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

#endif // ATTN_TOOLS_MSL_EMULATOR_EMULATOR_STATE_H
