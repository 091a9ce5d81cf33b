// Marks each benchmark run's measured loop for callgrind (kvb matrix/versions/bisect
// --instructions, docs/compare.md): run under `valgrind --tool=callgrind --collect-atstart=no`,
// callgrind counts only the loop's instructions and writes one dump per run of the loop, described
// "kvbench_micro iterations=N". Google Benchmark runs each benchmark with growing iteration
// counts; kvb takes the difference of the last two dumps, which cancels the loop's fixed start and
// stop cost. Without valgrind's headers at build time (Debian's valgrind package ships them) the
// marks compile to nothing and the context says so; outside valgrind they cost a few instructions
// per run of the loop, not per iteration.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>

#if defined(KVBENCH_HAVE_CALLGRIND_H)
#include <valgrind/callgrind.h>
#endif

namespace kvbench {
namespace micro {

#if defined(KVBENCH_HAVE_CALLGRIND_H)
constexpr bool kCallgrindMarks = true;

inline void BeginMeasuredLoop() { CALLGRIND_TOGGLE_COLLECT; }

inline void EndMeasuredLoop(const benchmark::State& state) {
  CALLGRIND_TOGGLE_COLLECT;
  if (RUNNING_ON_VALGRIND) {
    char desc[64];
    std::snprintf(desc, sizeof(desc), "kvbench_micro iterations=%lld",
                  static_cast<long long>(state.iterations()));
    CALLGRIND_DUMP_STATS_AT(desc);
  }
}
#else
constexpr bool kCallgrindMarks = false;
inline void BeginMeasuredLoop() {}
inline void EndMeasuredLoop(const benchmark::State&) {}
#endif

}  // namespace micro
}  // namespace kvbench
