//===- emulator/launcher.h - the launcher -----------------------*- C++ -*-===//
//
// A part of metal_emulator.h, which includes the parts in order: each
// builds on those before it and is not included on its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_MSL_EMULATOR_EMULATOR_LAUNCHER_H
#define ATTN_TOOLS_MSL_EMULATOR_EMULATOR_LAUNCHER_H

#pragma clang system_header

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

#endif // ATTN_TOOLS_MSL_EMULATOR_EMULATOR_LAUNCHER_H
