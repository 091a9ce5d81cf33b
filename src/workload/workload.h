// What one benchmark does per thread, and the per-thread state the workload loops use.
//
// Op counts are TOTALS across all worker threads (db_bench counts per thread): --num keys are
// split between fill threads, --reads/--writes ops are split between the threads doing them.
// Every loop stops early at the --duration deadline; with a duration set, the read and overwrite
// loops ignore their counts and run until the deadline.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/random.h"
#include "common/status.h"
#include "kv/engine.h"
#include "stats/histogram.h"
#include "stats/thread_stats.h"
#include "workload/ack_log.h"
#include "workload/keys.h"
#include "workload/rate_limiter.h"
#include "workload/values.h"

namespace kvbench {

struct StepState;

struct WorkloadOptions {
  uint64_t num = 1000000;  // key space: keys 0..num-1
  int64_t reads = -1;      // total read ops; -1 = num
  int64_t writes = -1;     // total overwrite ops; -1 = num
  int key_size = 16;
  int value_size = 100;
  double compression_ratio = 0.5;
  uint64_t seed = 0;
  double duration_seconds = 0;  // 0 = no deadline
  int threads = 1;
  int seek_nexts = 10;
  double write_rate_limit = 0;  // bytes/s for the *whilewriting writer; 0 = unpaced
  bool verify = false;          // check every value read against what the seed writes
  int latency_sample = 1;       // time one op in this many (random gaps); 1 = every op

  uint64_t TotalReads() const { return reads < 0 ? num : static_cast<uint64_t>(reads); }
  uint64_t TotalWrites() const { return writes < 0 ? num : static_cast<uint64_t>(writes); }
};

// Everything a workload loop needs on one thread.
class Worker {
 public:
  Worker(int index, int count, uint64_t seed, Session* session, const WorkloadOptions& options,
         const KeyFormat& keys, const ValueSource& values, const std::atomic<bool>* stop,
         uint64_t deadline_ticks, RateLimiter* limiter)
      : index(index),
        count(count),
        session(session),
        options(options),
        keys(keys),
        values(values),
        rnd(seed),
        limiter(limiter),
        stop_(stop),
        deadline_ticks_(deadline_ticks),
        gaps_(Mix64(seed ^ 0x6c6174656e6379ull)),  // "latency": its own stream, keys unchanged
        chained_(options.latency_sample <= 1 && limiter == nullptr) {
    until_timed_ = NextGap();
  }

  // This thread's share [begin, end) of `total` items.
  uint64_t ShareBegin(uint64_t total) const { return Split(total, index); }
  uint64_t ShareEnd(uint64_t total) const { return Split(total, index + 1); }
  bool has_deadline() const { return deadline_ticks_ != 0; }

  // Called right before each engine call: the op's start time if this op is timed, else 0.
  // Every op is timed unless --latency_sample=N > 1; then one in N is, at random gaps (uniform
  // in [1, 2N-1]) so that the timed ops cannot fall in step with a period of the workload.
  // When every op is timed and nothing paces the loop, an op starts where the previous one
  // finished, as db_bench's --histogram measures: one clock read per op instead of two (a TSC
  // read is ~12 ns on AMD Zen), and the latency includes the loop's own per-op work (key draw,
  // counters: a few ns, docs/metrics.md). The first op of a loop, a paced writer's ops and
  // sampled ops read the clock here.
  uint64_t Start() {
    if (--until_timed_ != 0) return 0;
    until_timed_ = NextGap();
    return last_end_ != 0 ? last_end_ : Clock::Now();
  }
  // Records one op that Start() returned `t0` for and that moved `bytes` of keys and values.
  // Returns false when the loop must stop: the deadline passed (checked at timed ops) or the
  // runner asked to stop.
  bool Finish(uint64_t t0, uint64_t bytes) {
    stats.CountOp(bytes);
    if (t0 != 0) {
      const uint64_t t1 = Clock::Now();
      stats.latency.Add(Clock::ToNanos(t1 - t0));
      if (chained_) last_end_ = t1;
      if (deadline_ticks_ != 0 && t1 >= deadline_ticks_) return false;
    }
    return !stop_->load(std::memory_order_relaxed);
  }
  // Records `n` ops done together (one batch or one chunk of a scan) since `t0`, each with an
  // equal share of the time; returns as Finish does.
  bool FinishMany(uint64_t t0, uint64_t n, uint64_t bytes) {
    if (n == 0) return !stop_->load(std::memory_order_relaxed);
    const uint64_t t1 = Clock::Now();
    const uint64_t each = Clock::ToNanos(t1 - t0) / n;
    if (chained_) last_end_ = t1;
    for (uint64_t i = 0; i < n; ++i) stats.latency.Add(each);
    stats.CountOps(n, bytes);
    if (deadline_ticks_ != 0 && t1 >= deadline_ticks_) return false;
    return !stop_->load(std::memory_order_relaxed);
  }
  // REQUIRES: called before the thread starts its loop.
  void SetDeadline(uint64_t ticks) { deadline_ticks_ = ticks; }
  bool Stopped() const { return stop_->load(std::memory_order_relaxed); }

  const int index, count;
  Session* const session;
  const WorkloadOptions& options;
  const KeyFormat& keys;
  const ValueSource& values;
  Random64 rnd;
  RateLimiter* const limiter;  // the paced writer's; nullptr otherwise
  ThreadStats stats;
  Status error;  // first failure; the loop returns right after setting it
  // --ack_file: the fills publish their acknowledged writes in it, verifyacked reads it back.
  // nullptr without --ack_file. REQUIRES: set before the thread starts its loop.
  AckLog* ack_log = nullptr;
  // insertbench: the state the threads of a step share (insertbench.h); nullptr for the others.
  // REQUIRES: set before the thread starts its loop.
  StepState* step = nullptr;

 private:
  uint64_t Split(uint64_t total, int i) const {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(total) * i) / count);
  }
  uint64_t NextGap() {
    const uint64_t n = static_cast<uint64_t>(options.latency_sample);
    return n <= 1 ? 1 : 1 + gaps_.Uniform(2 * n - 1);
  }
  const std::atomic<bool>* stop_;
  uint64_t deadline_ticks_;
  Random64 gaps_;  // the gaps between timed ops under --latency_sample
  uint64_t until_timed_;
  // Start() of the next op returns the end of the previous one (see Start()); 0: read the clock.
  const bool chained_;
  uint64_t last_end_ = 0;
};

using WorkFn = void (*)(Worker& w);

// The loops (workloads.cc).
void FillSeq(Worker& w);
void FillRandom(Worker& w);
void Overwrite(Worker& w);
void ReadRandom(Worker& w);
void ReadSeq(Worker& w);
void FwdRange(Worker& w);
void PacedWriter(Worker& w);
// Reads back every write thread `index` of the fill acknowledged in w.ack_log, checking each
// value; counts found / not found (lost) and keeps the first lost key.
void VerifyAcked(Worker& w);

}  // namespace kvbench
