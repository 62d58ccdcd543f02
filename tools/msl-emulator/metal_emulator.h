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
// Compile emitted kernels through tools/msl-emulator/msl-emu-cc.sh, which applies
// the flags and the one source rewrite this header needs. README.md describes
// the subset, the kernel parameter convention and the execution model.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_MSL_EMULATOR_METAL_EMULATOR_H
#define ATTN_TOOLS_MSL_EMULATOR_METAL_EMULATOR_H

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

// The emulator's parts, in order; the MSL keyword macros come last.
#include "emulator/types.h"
#include "emulator/fibers.h"
#include "emulator/traits.h"
#include "emulator/state.h"
#include "emulator/checked_memory.h"
#include "emulator/params.h"
#include "emulator/metal_functions.h"
#include "emulator/barriers.h"
#include "emulator/simdgroup_matrix.h"
#include "emulator/launcher.h"
#include "emulator/checked_accesses.h"
#include "emulator/keywords.h"

#endif // ATTN_TOOLS_MSL_EMULATOR_METAL_EMULATOR_H
