// Why a paced writer missed its target, by the evidence a run has: the time the writer lost, its
// own thread's wait for a CPU (the scheduler's run_delay), and the engine's part, its writes'
// time beyond their pace (the latency histogram) and its own write-stall counter (RocksDB's
// write_stall_us). The pacer's own sleep, about one voluntary context switch per write, is the
// same for a writer that keeps its target and is no evidence of anything.
#pragma once

#include <string>

#include "result/result.h"

namespace kvbench {

// A cause must account for at least this share of the writing time lost to be named.
constexpr double kPacingCauseShare = 0.5;

// For every paced background role of `r` that did not sustain its target: its held_back_by
// ("cpu", "engine" or "" when neither accounts for the loss) and pacing_note, the sentence the
// console puts after "NOT sustained". `engine` names the engine in it.
void ExplainPacing(const std::string& engine, BenchmarkResult* r);

// Seconds the role's writes took beyond `gap_seconds` each (the time between due writes), from
// its latency histogram, scaled to all its ops when only some were timed. Exposed for tests.
double WriteOverrunSeconds(const RoleResult& role, double gap_seconds);

}  // namespace kvbench
