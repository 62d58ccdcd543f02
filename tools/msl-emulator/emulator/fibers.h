//===- emulator/fibers.h - fibers -------------------------------*- C++ -*-===//
//
// A part of metal_emulator.h, which includes the parts in order: each
// builds on those before it and is not included on its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_MSL_EMULATOR_EMULATOR_FIBERS_H
#define ATTN_TOOLS_MSL_EMULATOR_EMULATOR_FIBERS_H

#pragma clang system_header

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

#endif // ATTN_TOOLS_MSL_EMULATOR_EMULATOR_FIBERS_H
