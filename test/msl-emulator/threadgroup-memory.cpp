// Threadgroup memory, barriers and built-in parameters against host
// references.
#include "test_util.h"
#include ATTN_MSL_KERNEL_SOURCE

namespace {

void test_threadgroup_sum() {
  const unsigned gx = 3, gy = 2, tx = 16, ty = 8, threads = tx * ty;
  const unsigned groups = gx * gy, n = groups * threads - 37; // ragged tail
  std::vector<float> in = test::random_floats(n);
  std::vector<float> out = test::poisoned_floats(groups + groups * threads);
  ReduceParams params{n, 0.5f};
  test::expect_ok(
      attn_msl::launch(ATTN_MSL_KERNEL(threadgroup_sum), {gx, gy, 1},
                       {tx, ty, 1},
                       {attn_msl::bind_buffer(0, in.data(), n),
                        attn_msl::bind_buffer(1, out.data(), out.size()),
                        attn_msl::bind_buffer(2, &params)},
                       {threads * sizeof(float)}),
      "threadgroup_sum");
  for (unsigned g = 0; g < groups; ++g) {
    double ref = 0;
    for (unsigned t = 0; t < threads; ++t)
      if (g * threads + t < n)
        ref += 0.5 * in[g * threads + t];
    CHECK(std::fabs(out[g] - ref) < 1e-4, "group %u sum %g vs %g", g, out[g],
          ref);
    for (unsigned t = 0; t < threads; ++t)
      CHECK(out[groups + g * threads + t] == out[g],
            "group %u thread %u read back", g, t);
  }
}

void test_threadgroup_reverse_and_poison() {
  const unsigned size = 96, groups = 2, n = size * groups;
  std::vector<int> in(n), out(n, -7);
  std::vector<uint> poison(n, 0);
  for (unsigned i = 0; i < n; ++i)
    in[i] = int(test::rng()() % 1000);
  test::expect_ok(attn_msl::launch(ATTN_MSL_KERNEL(threadgroup_reverse),
                                   {groups, 1, 1}, {size, 1, 1},
                                   {attn_msl::bind_buffer(0, in.data(), n),
                                    attn_msl::bind_buffer(1, out.data(), n),
                                    attn_msl::bind_buffer(2, poison.data(), n)},
                                   {size * sizeof(int), size * sizeof(uint)}),
                  "threadgroup_reverse");
  for (unsigned g = 0; g < groups; ++g)
    for (unsigned t = 0; t < size; ++t) {
      CHECK(out[g * size + t] == in[g * size + size - 1 - t], "reverse %u.%u",
            g, t);
      CHECK(poison[g * size + t] == 0xffffffffu, "poison %u.%u: %x", g, t,
            poison[g * size + t]);
    }
}

void test_builtins() {
  const unsigned gx = 2, gy = 3, gz = 2, tx = 8, ty = 4, tz = 3;
  const unsigned threads = tx * ty * tz, groups = gx * gy * gz;
  std::vector<uint> out(groups * threads * 20, 0xdeadbeef);
  test::expect_ok(
      attn_msl::launch(ATTN_MSL_KERNEL(builtins), {gx, gy, gz}, {tx, ty, tz},
                       {attn_msl::bind_buffer(0, out.data(), out.size())}),
      "builtins");
  for (unsigned z = 0; z < gz; ++z)
    for (unsigned y = 0; y < gy; ++y)
      for (unsigned x = 0; x < gx; ++x)
        for (unsigned t = 0; t < threads; ++t) {
          unsigned g = (z * gy + y) * gx + x;
          const uint *o = &out[(g * threads + t) * 20];
          unsigned px = t % tx, py = t / tx % ty, pz = t / (tx * ty);
          const uint expected[20] = {x,
                                     y,
                                     z,
                                     px,
                                     py,
                                     pz,
                                     x * tx + px,
                                     y * ty + py,
                                     z * tz + pz,
                                     tx,
                                     ty,
                                     tz,
                                     gx * 100 + gy * 10 + gz,
                                     gx * tx * 10000 + gy * ty * 100 + gz * tz,
                                     t,
                                     t / 32,
                                     t % 32,
                                     32,
                                     (threads + 31) / 32,
                                     7};
          for (int k = 0; k < 20; ++k)
            CHECK(o[k] == expected[k],
                  "group %u thread %u builtin %d: %u vs %u", g, t, k, o[k],
                  expected[k]);
        }
}

} // namespace

int main() {
  test_threadgroup_sum();
  test_threadgroup_reverse_and_poison();
  test_builtins();
  return test::finish("threadgroup-memory");
}
