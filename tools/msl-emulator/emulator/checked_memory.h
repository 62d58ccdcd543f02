//===- emulator/checked_memory.h - checked memory ---------------*- C++ -*-===//
//
// A part of metal_emulator.h, which includes the parts in order: each
// builds on those before it and is not included on its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_MSL_EMULATOR_EMULATOR_CHECKED_MEMORY_H
#define ATTN_TOOLS_MSL_EMULATOR_EMULATOR_CHECKED_MEMORY_H

#pragma clang system_header

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

#endif // ATTN_TOOLS_MSL_EMULATOR_EMULATOR_CHECKED_MEMORY_H
