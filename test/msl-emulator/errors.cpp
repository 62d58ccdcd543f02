// Negative tests: each broken kernel or launch must fail with a message that
// names the kernel, the threadgroup, the threads and the construct.
#include "test_util.h"
#include ATTN_MSL_KERNEL_SOURCE

namespace {

std::vector<float> g_out(4096, 0.0f);
attn_msl::Buffer out_at(uint index) {
  return attn_msl::bind_buffer(index, g_out.data(), g_out.size());
}

attn_msl::LaunchResult run(const attn_msl::Kernel &k, unsigned groups,
                           unsigned threads,
                           std::vector<attn_msl::Buffer> buffers,
                           std::vector<size_t> threadgroup_memory = {}) {
  return attn_msl::launch(k, {groups, 1, 1}, {threads, 1, 1},
                          std::move(buffers), std::move(threadgroup_memory),
                          test::quiet());
}

void test_synchronization_errors() {
  test::expect_error(run(ATTN_MSL_KERNEL(partial_barrier), 2, 128, {out_at(0)}),
                     "barrier reached by half the threads",
                     {"kernel 'partial_barrier'", "threadgroup (1,0,0)",
                      "threadgroup_barrier", "errors.metal:11",
                      "threads 0-63 waiting at threadgroup_barrier",
                      "threads 64-127 exited"});
  test::expect_error(
      run(ATTN_MSL_KERNEL(divergent_collectives), 1, 64, {out_at(0)}),
      "different collectives",
      {"kernel 'divergent_collectives'", "threadgroup (0,0,0)",
       "simdgroup 0 diverged",
       "threads 0-15 (lanes 0-15) waiting at simd_sum (",
       "threads 16-31 (lanes 16-31) waiting at simd_max ("});
  test::expect_error(run(ATTN_MSL_KERNEL(divergent_sites), 1, 32, {out_at(0)}),
                     "one collective at two call sites",
                     {"simdgroup 0 diverged", "simd_sum (", "errors.metal:30",
                      "errors.metal:32", "lanes 0, 2, 4"});
  test::expect_error(
      run(ATTN_MSL_KERNEL(collective_after_exit), 1, 32, {out_at(0)}),
      "collective after some lanes exited",
      {"simdgroup 0 cannot complete a SIMD collective",
       "threads 0-7 (lanes 0-7) waiting at simd_sum",
       "threads 8-31 (lanes 8-31) exited"});
  test::expect_error(
      run(ATTN_MSL_KERNEL(collective_against_barrier), 1, 64, {out_at(0)}),
      "collective against a barrier",
      {"simdgroup 0 cannot complete", "(lanes 0-15) waiting at simd_sum",
       "(lanes 16-31) waiting at threadgroup_barrier"});
  test::expect_error(run(ATTN_MSL_KERNEL(different_barriers), 1, 64, {}),
                     "two different barriers",
                     {"threads reach different barriers",
                      "threads 0-31 waiting at threadgroup_barrier (",
                      "threads 32-63 waiting at threadgroup_barrier ("});
  test::expect_error(
      run(ATTN_MSL_KERNEL(partial_simdgroup_barrier), 1, 32, {}),
      "simdgroup_barrier missing a lane",
      {"waiting at simdgroup_barrier", "thread 31 (lane 31) exited"});
}

void test_collective_argument_errors() {
  test::expect_error(
      run(ATTN_MSL_KERNEL(shuffle_missing_lane), 1, 48, {out_at(0)}),
      "shuffle from a lane a partial simdgroup lacks",
      {"simdgroup 1", "simd_shuffle: lane 0 reads lane 20",
       "simdgroup of 16 threads"});
  test::expect_error(
      run(ATTN_MSL_KERNEL(broadcast_non_uniform), 1, 32, {out_at(0)}),
      "non-uniform broadcast lane",
      {"simd_broadcast needs one lane argument", "lane 16 passes 1"});
  test::expect_error(
      run(ATTN_MSL_KERNEL(matrix_in_partial_simdgroup), 1, 16, {out_at(0)}),
      "simdgroup_matrix with 16 threads",
      {"simdgroup_load needs all 32 lanes", "has 16 threads"});
  test::expect_error(
      run(ATTN_MSL_KERNEL(matrix_non_uniform_pointer), 1, 32, {out_at(0)}),
      "simdgroup_load with per-lane pointers",
      {"simdgroup_load needs the same pointer", "lane 1 differs"});
}

void test_binding_errors() {
  std::vector<float> floats(64, 1.0f);
  test::expect_error(
      run(ATTN_MSL_KERNEL(reads_buffer_one), 1, 32,
          {attn_msl::bind_buffer(0, floats.data(), floats.size())}),
      "unbound buffer",
      {"kernel 'reads_buffer_one'", "thread 0 (simdgroup 0, lane 0",
       "[[buffer(1)]] has no buffer bound at index 1"});
  test::expect_error(
      run(ATTN_MSL_KERNEL(reads_half), 1, 32,
          {attn_msl::bind_buffer(0, floats.data(), floats.size()), out_at(1)}),
      "float data for a half parameter",
      {"[[buffer(0)]] points to half but the buffer bound there holds float"});
  test::expect_error(
      run(ATTN_MSL_KERNEL(reads_struct), 1, 32,
          {attn_msl::bind_bytes(0, floats.data(), 4), out_at(1)}),
      "buffer smaller than the parameter",
      {"[[buffer(0)]] needs 8 bytes but the buffer bound there has 4"});
  test::expect_error(
      run(ATTN_MSL_KERNEL(uses_threadgroup_memory), 1, 32, {out_at(0)}),
      "threadgroup memory without a length",
      {"[[threadgroup(0)]] has no threadgroup memory length"});
}

void test_launch_errors() {
  auto k = ATTN_MSL_KERNEL(uses_threadgroup_memory);
  test::expect_error(
      run(k, 1, 2048, {out_at(0)}, {16}), "2048 threads",
      {"kernel 'uses_threadgroup_memory'", "more than Metal's 1024"});
  test::expect_error(run(k, 1, 32, {out_at(0)}, {100}),
                     "unaligned threadgroup memory",
                     {"threadgroup memory 0 is 100 bytes", "multiple of 16"});
  test::expect_error(run(k, 1, 32, {out_at(0)}, {32768, 16}),
                     "too much threadgroup memory",
                     {"more than Metal's 32768"});
  test::expect_error(run(k, 0, 32, {out_at(0)}, {128}), "empty grid",
                     {"has no threadgroups"});
  test::expect_error(run(k, 1, 32, {out_at(0), out_at(0)}, {128}),
                     "buffer bound twice", {"buffer index 0 is bound twice"});
}

// After all those failures a correct launch still works.
void test_recovery() {
  std::vector<float> out = test::poisoned_floats(32);
  test::expect_ok(run(ATTN_MSL_KERNEL(uses_threadgroup_memory), 1, 32,
                      {attn_msl::bind_buffer(0, out.data(), out.size())},
                      {128}),
                  "launch after failures");
  for (float v : out)
    CHECK(v == 1.0f, "launch after failures wrote %g", v);
}

} // namespace

int main() {
  test_synchronization_errors();
  test_collective_argument_errors();
  test_binding_errors();
  test_launch_errors();
  test_recovery();
  return test::finish("errors");
}
