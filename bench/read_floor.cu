// The fastest this GPU reads N bytes in one kernel, timed as compare.py
// times attn and its peers (peers.median_ms: a 256 MiB memset before each
// run evicts L2 and keeps the GPU busy while the launch is queued, here
// cudaMemsetAsync, there torch's zero_; CUDA events; median of 30 after 5
// warm-ups). For each of issue 18's decode rows it sweeps two plain read
// kernels (grid-stride, and a contiguous chunk a block) over grid size,
// block size and loads in flight, and prints the best (the lowest median
// of the sweep), with an empty kernel's time.
// A decode call reads its K/V at best this fast, and pays an empty
// launch more for its combine where it has one. Build and run where nvcc
// is (the device machine):
//
//   nvcc -O3 -arch=sm_90 bench/read_floor.cu -o read_floor && ./read_floor
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t e = (call);                                                    \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,        \
                   cudaGetErrorString(e));                                     \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// Every thread reads UNROLL 16-byte vectors a trip (all in flight before
// the first is used), grid-stride; the xor of what it read is stored only
// where it matches a key no random input holds, so no load is dead.
template <int UNROLL>
__global__ void readKernel(const uint4 *__restrict__ src, size_t n,
                           unsigned key, unsigned *out) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      v[u] = __ldg(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) {
    uint4 v = __ldg(src + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == key)
    out[blockIdx.x] = acc;
}

// The same, but each block reads one contiguous chunk, UNROLL vectors a
// thread in flight.
template <int UNROLL>
__global__ void readChunkKernel(const uint4 *__restrict__ src, size_t n,
                                unsigned key, unsigned *out) {
  size_t chunk = (n + gridDim.x - 1) / gridDim.x;
  size_t lo = size_t(blockIdx.x) * chunk;
  size_t hi = lo + chunk < n ? lo + chunk : n;
  unsigned acc = 0;
  size_t i = lo + threadIdx.x;
  for (; i + (UNROLL - 1) * blockDim.x < hi; i += UNROLL * blockDim.x) {
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      v[u] = __ldg(src + i + u * blockDim.x);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < hi; i += blockDim.x) {
    uint4 v = __ldg(src + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == key)
    out[blockIdx.x] = acc;
}

__global__ void emptyKernel() {}

template <typename Launch>
static float medianUs(Launch launch, void *flush, size_t flushBytes) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < 5; ++i)
    launch();
  std::vector<float> times;
  for (int i = 0; i < 30; ++i) {
    CHECK(cudaMemsetAsync(flush, 0, flushBytes));
    CHECK(cudaEventRecord(start));
    launch();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms * 1e3f);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int main() {
  struct Row {
    const char *label;
    size_t bytes;   // K and V
    double target;  // issue 18's TB/s for the row (0: none)
  };
  // K/V bytes: 2 (K, V) * B * Hkv * Sk * D * 2 bytes.
  const Row rows[] = {
      {"MQA Hq64 B1 Sk16k", 2ull * 1 * 1 * 16384 * 128 * 2, 2.5},
      {"GQA-4 B1 Sk4k", 2ull * 1 * 8 * 4096 * 128 * 2, 0},
      {"spec Sq4 GQA-8 B1 Sk16k", 2ull * 1 * 4 * 16384 * 128 * 2, 2.5},
      {"GQA-4 B1 Sk16k", 2ull * 1 * 8 * 16384 * 128 * 2, 0},
      {"MQA Hq64 B8 Sk16k", 2ull * 8 * 1 * 16384 * 128 * 2, 2.5},
      {"GQA-4 B1 Sk128k", 2ull * 1 * 8 * 131072 * 128 * 2, 2.85},
      // Issue 41's rows (GQA-4 D128): f16 K/V, and one-byte K/V with an
      // f32 scale per token and head (128 + 4 bytes a row).
      {"GQA-4 B8 Sk16k", 2ull * 8 * 8 * 16384 * 128 * 2, 0},
      {"GQA-4 B64 Sk4k", 2ull * 64 * 8 * 4096 * 128 * 2, 0},
      {"GQA-4 B64 Sk32k", 2ull * 64 * 8 * 32768 * 128 * 2, 0},
      {"8-bit GQA-4 B1 Sk128k", 2ull * 1 * 8 * 131072 * 132, 0},
      {"8-bit GQA-4 B8 Sk16k", 2ull * 8 * 8 * 16384 * 132, 0},
      {"8-bit GQA-4 B64 Sk4k", 2ull * 64 * 8 * 4096 * 132, 0},
      {"8-bit GQA-4 B64 Sk32k", 2ull * 64 * 8 * 32768 * 132, 0},
  };
  int device, sms;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, device));
  const size_t flushBytes = 256ull << 20;
  void *flush;
  CHECK(cudaMalloc(&flush, flushBytes));
  size_t most = 0;
  for (const Row &r : rows)
    most = std::max(most, r.bytes);
  uint4 *src;
  unsigned *out;
  CHECK(cudaMalloc(&src, most));
  CHECK(cudaMalloc(&out, 65536 * sizeof(unsigned)));
  // Fill with an LCG's words (never zeros).
  {
    std::vector<unsigned> host(most / 4);
    unsigned x = 12345;
    for (unsigned &w : host)
      w = x = x * 1664525u + 1013904223u;
    CHECK(cudaMemcpy(src, host.data(), most, cudaMemcpyHostToDevice));
  }
  const unsigned key = 0x9e3779b9u;

  float empty = medianUs([] { emptyKernel<<<1, 32>>>(); }, flush, flushBytes);
  float emptyPair = medianUs(
      [] {
        emptyKernel<<<1, 32>>>();
        emptyKernel<<<1, 32>>>();
      },
      flush, flushBytes);
  std::printf("%s, %d SMs\n", prop.name, sms);
  std::printf("empty kernel: %.2f us; two in a row: %.2f us\n\n", empty,
              emptyPair);
  std::printf("| K/V bytes of | MB | best read | TB/s | config "
              "(blocks/SM x threads x loads) | issue 18 asks | time that "
              "asks |\n|---|---|---|---|---|---|---|\n");
  for (const Row &r : rows) {
    size_t n = r.bytes / sizeof(uint4);
    float best = 1e30f;
    int bestBlocks = 0, bestThreads = 0, bestUnroll = 0, bestChunked = 0;
    for (int chunked : {0, 1})
    for (int perSM : {1, 2, 4, 8})
      for (int threads : {256, 512, 1024})
        for (int unroll : {1, 4, 8}) {
          if (perSM * threads > 2048)
            continue;
          int blocks = perSM * sms;
          auto launch = [&] {
            if (chunked) {
              if (unroll == 1)
                readChunkKernel<1><<<blocks, threads>>>(src, n, key, out);
              else if (unroll == 4)
                readChunkKernel<4><<<blocks, threads>>>(src, n, key, out);
              else
                readChunkKernel<8><<<blocks, threads>>>(src, n, key, out);
            } else if (unroll == 1)
              readKernel<1><<<blocks, threads>>>(src, n, key, out);
            else if (unroll == 4)
              readKernel<4><<<blocks, threads>>>(src, n, key, out);
            else
              readKernel<8><<<blocks, threads>>>(src, n, key, out);
          };
          float t = medianUs(launch, flush, flushBytes);
          if (t < best) {
            best = t;
            bestBlocks = perSM;
            bestThreads = threads;
            bestUnroll = unroll;
            bestChunked = chunked;
          }
        }
    double mb = r.bytes / 1e6;
    std::printf("| %s | %.1f | %.1f us | %.2f | %d x %d x %d%s |", r.label,
                mb, best, mb / best, bestBlocks, bestThreads, bestUnroll,
                bestChunked ? ", a chunk a block" : ", grid-stride");
    if (r.target > 0)
      std::printf(" %.2f TB/s | %.1f us |\n", r.target, mb / r.target);
    else
      std::printf(" | |\n");
  }
  return 0;
}
