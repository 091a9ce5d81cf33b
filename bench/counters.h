// perf_event_open counters around one benchmark's timed loop, as Google Benchmark user counters
// per iteration (an iteration is one block: kvbench's "op"), with the keys kvbench's JSON uses
// (task_clock_ns_per_op, instructions_per_op, ipc, ...). What is not counted is absent, and the
// reason is in the context ("perf_counters"), written once by main(); so is an event that
// counted 0 (e.g. no major fault), for the reason in Finish().
#pragma once

#include <benchmark/benchmark.h>

#include <memory>
#include <string_view>

#include "stats/perf_counters.h"

namespace kvbench {
namespace micro {

// Set once by main() (--perf_counters, probed) before any benchmark runs.
const PerfPlan& GetPerfPlan();
void SetPerfPlan(const PerfPlan& plan);

// Counts from construction to Finish(), on the calling thread.
class IterationCounters {
 public:
  IterationCounters() {
    if (GetPerfPlan().enabled()) {
      group_ = std::make_unique<PerfGroup>(GetPerfPlan());
      group_->Start();
    }
  }

  // REQUIRES: the timed loop is over (state.iterations() is final).
  void Finish(benchmark::State& state) {
    if (!group_) return;
    PerfTotals t;
    t.Begin(GetPerfPlan());
    t.Add(group_->Stop());
    for (int e = 0; e < kPerfEventCount; ++e) {
      const double total = t.PerOp(e, 1);
      // A count of 0 is left out too: with --benchmark_repetitions Google Benchmark's _cv row
      // divides by the mean, and 0/0 would put NaN in the JSON (which JSON cannot hold).
      if (total <= 0) continue;
      state.counters[PerfEvents()[e].metric] =
          benchmark::Counter(total, benchmark::Counter::kAvgIterations);
      if (std::string_view(PerfEvents()[e].name) == "cycles") {
        const double instructions = t.PerOp(FindPerfEvent("instructions"), 1);
        if (instructions >= 0 && total > 0) state.counters["ipc"] = instructions / total;
      }
    }
    if (t.multiplexed) state.counters["counted_fraction"] = t.counted_fraction;
  }

 private:
  std::unique_ptr<PerfGroup> group_;
};

}  // namespace micro
}  // namespace kvbench
