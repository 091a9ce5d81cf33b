// Shared pieces of kvbench_micro: its options, the input blocks, and benchmark naming.
//
// Every benchmark is named <algorithm>/<variant>/<block bytes>, plus "/cold" in cache-cold mode
// (docs/micro.md lists them). Names never depend on the compiler, flags or CPU, so JSON files
// from two presets or two machines line up by name; what differs goes into the context block.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "callgrind_marks.h"
#include "counters.h"

namespace kvbench {
namespace micro {

struct Options {
  double compression_ratio = 0.5;  // as kvbench --compression_ratio
  uint64_t seed = 0;               // as kvbench --seed: the same seed gives the same bytes
  bool cache_cold = false;         // rotate through a buffer larger than the last-level cache
  size_t cold_buffer_bytes = 0;    // 0 = max(4 x largest CPU cache, 64 MiB)
  std::vector<size_t> block_sizes = {256, 1024, 4096, 8192, 16384, 65536};
};

// Set once by main() before any benchmark is registered; read-only afterwards.
const Options& GetOptions();
void SetOptions(const Options& options);

// The input of one benchmark: `count` consecutive blocks of `size` bytes. Hot mode has
// one block (the first `size` bytes of kvbench's value generator for --seed and
// --compression_ratio); cold mode has every block of a buffer larger than the last-level cache,
// generated the same way, so the hot block is also the first cold block.
struct Blocks {
  const char* base;
  size_t size;
  size_t count;

  const char* block(size_t i) const { return base + i * size; }
};

// REQUIRES: SetOptions() was called. The bytes live until the process exits.
Blocks InputBlocks(size_t block_size);

// Bytes in the cold-mode buffer actually used.
size_t ColdBufferBytes();

// "<algorithm>/<variant>/<block bytes>[/cold]".
std::string BenchmarkName(const std::string& algorithm, const std::string& variant,
                          size_t block_size);

// Clears the upper halves of the vector registers (vzeroupper) on x86 CPUs with AVX. AVX code
// can leave them dirty (ours in a -march=native build, or a library's own, such as libxxhash's
// runtime-dispatched XXH3, in any build), and every SSE instruction of the next benchmark then pays
// for it: measured here, libxxhash's SSE2 XXH3 ran at 3.6-3.9 GB/s right after AVX2 code and at
// 15.7 GB/s alone. Each benchmark starts clean, as it would in a process of its own. Decided at run
// time, so a portable build clears too.
inline void ClearUpperVectorState() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx = __builtin_cpu_supports("avx");
  if (avx) asm volatile("vzeroupper" ::: "memory");
#endif
}

// Runs `fn(i)` once per iteration for i = 0, 1, ..., count-1, 0, 1, ... (only 0 in hot mode) and
// records blocks.size bytes processed per iteration. `fn` returns something that depends on the
// work (a hash, a size), which is kept alive so the work cannot be optimised away. Starts from a
// clean vector state (ClearUpperVectorState). The loop is marked for callgrind (callgrind_marks.h)
// and counts with --perf_counters (IterationCounters).
template <typename Fn>
void RunOverBlocks(benchmark::State& state, const Blocks& blocks, Fn&& fn) {
  ClearUpperVectorState();
  size_t i = 0;
  IterationCounters counters;  // opened and started here: outside the loop, two syscalls
  BeginMeasuredLoop();         // callgrind_marks.h: for kvb --instructions
  for (auto _ : state) {
    auto result = fn(i);
    benchmark::DoNotOptimize(result);
    if (++i == blocks.count) i = 0;
  }
  EndMeasuredLoop(state);
  counters.Finish(state);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(blocks.size));
}

// One registration function and one context function per algorithm file.
void RegisterMemory();  // the ceiling rows, memory/read and memory/copy
void RegisterCrc32c();
void RegisterXxhash();
void RegisterLz4();
void RegisterZstd();
void AddCrc32cContext();
void AddXxhashContext();
void AddLz4Context();
void AddZstdContext();

}  // namespace micro
}  // namespace kvbench
