// What a paced writer delivered over its own run, and whether that sustained its target.
//
// The verdict does not depend on --report_interval_seconds, nor on how late the writer's thread
// started: it is judged from the writer's first write (when its first bytes were due) to the end of
// the benchmark, in windows of one second (docs/workloads.md, "The paced writer"). The interval
// series (interval_series.h) stays what it is, a picture of the run at the interval asked for.
#pragma once

#include <cstdint>
#include <vector>

namespace kvbench {

// The bytes a writer completed, per second of its run. Written by the writer's thread only; read
// once it has stopped.
class DeliveryLog {
 public:
  // The writer's run starts: its first bytes are due at `start_ns`. Later calls do nothing.
  void Begin(uint64_t start_ns);
  // A write of `bytes` completed at `now_ns`. REQUIRES: Begin was called.
  void Add(uint64_t now_ns, uint64_t bytes);

  bool begun() const { return begun_; }
  uint64_t start_ns() const { return start_ns_; }
  // Bytes completed in [start + i s, start + i + 1 s), for each i.
  const std::vector<uint64_t>& per_second() const { return per_second_; }

 private:
  bool begun_ = false;
  uint64_t start_ns_ = 0;
  std::vector<uint64_t> per_second_;  // 8 bytes a second of run: an hour is 29 KB
};

// The judgement's constants (docs/workloads.md): windows of at least this long...
constexpr double kDeliveryWindowSeconds = 1.0;
// ...each of which delivered at least this share of its due bytes, or...
constexpr double kSustainedWindowShare = 0.95;
// ...the run as a whole at least this share.
constexpr double kSustainedRunShare = 0.99;

struct DeliveryVerdict {
  bool judged = false;             // false: the writer never wrote (the benchmark ended first)
  double start_delay_seconds = 0;  // from the benchmark's start to the first write's due time
  double run_seconds = 0;          // from then to the end of the benchmark
  double due_bytes = 0;            // target x run_seconds
  uint64_t delivered_bytes = 0;
  // (delivered + one write) / due: the one write is the one in flight when a window (or the run)
  // ends, which no writer can have completed.
  double delivered_share = 0;
  int windows = 0;                  // of kDeliveryWindowSeconds; the run's tail joins the last one
  double slowest_window_share = 0;  // the lowest window's share, as above
  double slowest_window_end_seconds = 0;  // where it ends, from the first write
  bool sustained = false;  // delivered_share >= kSustainedRunShare or every window's share >=
                           // kSustainedWindowShare
};

// The verdict on `log` for a run that ended at `end_ns`, paced at `target` bytes/s in writes of
// `write_bytes`, whose benchmark started at `benchmark_start_ns`. REQUIRES: target > 0.
DeliveryVerdict JudgeDelivery(const DeliveryLog& log, uint64_t benchmark_start_ns, uint64_t end_ns,
                              double target, uint64_t write_bytes);

}  // namespace kvbench
