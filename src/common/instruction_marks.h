// Marks what kvbench's instruction counts cover, for callgrind (kvb matrix, versions and bisect
// --instructions with KV workloads; docs/compare.md). kvb runs kvbench under
//   valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes
// and reads the dumps these marks write:
// - the runner opens a window around each benchmark run's threads (from before they start to after
//   they are joined): instrumentation is on only inside it, every thread's count starts at zero,
//   and the runner's own thread counts nothing (its progress sampling waits on the clock);
// - each workload thread drops what it executed before its loop (thread start, the start barrier)
//   and, when the loop ends, stops counting and dumps its own count described
//   "kvbench loop role=R thread=I ops=N";
// - a paced writer counts nothing while it waits for its next write (RateLimiter::Acquire);
// - the window's end dumps every thread, described "kvbench window benchmark=B run=K warmup=W":
//   what the workload threads and the runner left there is zero, so whatever it holds is the
//   engine's background threads' (flush, compaction, eviction, checkpoint), over the window.
// valgrind's collection state is per thread, which is what makes the attribution exact.
// Without valgrind's headers at build time (Debian's valgrind package ships them) the marks
// compile to nothing and the JSON's build.callgrind_marks says so; outside valgrind they cost one
// client request per loop and per window, a few instructions, nothing per op.
#pragma once

#include <cstdint>
#include <cstdio>

#if defined(KVBENCH_HAVE_CALLGRIND_H)
#include <valgrind/callgrind.h>
#endif

namespace kvbench {

#if defined(KVBENCH_HAVE_CALLGRIND_H)
constexpr bool kInstructionMarks = true;

inline bool UnderValgrind() { return RUNNING_ON_VALGRIND != 0; }

// The runner, right before a benchmark run's threads start. START_INSTRUMENTATION turns every
// thread's collection on, so the runner turns its own off after it.
inline void BeginInstructionWindow() {
  if (!UnderValgrind()) return;
  CALLGRIND_START_INSTRUMENTATION;
  CALLGRIND_TOGGLE_COLLECT;
  VALGRIND_MONITOR_COMMAND("zero");  // every thread's count, not only this one's
}

// The runner, once the run's threads are joined. `run`: the run's seed stream (unique per run);
// `warmup`: a warm-up run, which the JSON leaves out.
inline void EndInstructionWindow(const char* benchmark, int run, bool warmup) {
  if (!UnderValgrind()) return;
  char command[160];
  std::snprintf(command, sizeof(command), "dump kvbench window benchmark=%s run=%d warmup=%d",
                benchmark, run, warmup ? 1 : 0);
  VALGRIND_MONITOR_COMMAND(command);  // every thread's count, in one file per thread
  CALLGRIND_TOGGLE_COLLECT;
  CALLGRIND_STOP_INSTRUMENTATION;
}

// A workload thread, right before its loop.
inline void BeginMeasuredLoop() {
  if (UnderValgrind()) CALLGRIND_ZERO_STATS;  // this thread's only
}

// A workload thread, right after its loop: collection off first, so that nothing of the thread
// is left for the window's dump.
inline void EndMeasuredLoop(const char* role, uint64_t thread, uint64_t ops) {
  if (!UnderValgrind()) return;
  CALLGRIND_TOGGLE_COLLECT;
  char desc[128];
  std::snprintf(desc, sizeof(desc), "kvbench loop role=%s thread=%llu ops=%llu", role,
                static_cast<unsigned long long>(thread), static_cast<unsigned long long>(ops));
  CALLGRIND_DUMP_STATS_AT(desc);
}

// Within a measured loop: this thread counts nothing while it lives (the pacer's waits, whose
// length depends on the clock). A toggle pair, so it restores whatever state it found.
class UncountedScope {
 public:
  UncountedScope() { CALLGRIND_TOGGLE_COLLECT; }
  ~UncountedScope() { CALLGRIND_TOGGLE_COLLECT; }
  UncountedScope(const UncountedScope&) = delete;
  UncountedScope& operator=(const UncountedScope&) = delete;
};
#else
constexpr bool kInstructionMarks = false;
inline void BeginInstructionWindow() {}
inline void EndInstructionWindow(const char*, int, bool) {}
inline void BeginMeasuredLoop() {}
inline void EndMeasuredLoop(const char*, uint64_t, uint64_t) {}
class UncountedScope {
 public:
  UncountedScope() = default;
};
#endif

// What build.callgrind_marks says in the JSON.
inline const char* InstructionMarksText() {
  return kInstructionMarks ? "yes"
                           : "no: valgrind/callgrind.h was not found when this kvbench was "
                             "configured (install valgrind and reconfigure)";
}

}  // namespace kvbench
