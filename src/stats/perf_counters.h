// Counters of the kernel's perf_event_open(2), per thread: hardware (instructions, cycles, branch
// and cache misses) where the machine has a PMU, software (task-clock, context switches, CPU
// migrations, page faults) everywhere. A thread opens its own groups (PerfGroup), counts one
// stretch of its work, and the readings of a role's threads are scaled and summed (PerfTotals).
// What cannot be counted is recorded with the reason (a VM without a PMU: ENOENT), never guessed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace kvbench {

enum class PerfKind { kHardware, kSoftware };

// One countable event; PerfEvents() is the table, in report order.
struct PerfEvent {
  const char* name;    // as --perf_counters and perf-stat(1) spell it: "instructions"
  const char* metric;  // the per-op key in the JSON: "instructions_per_op"
  const char* label;   // on the console: "instr"
  const char* unit;    // "instructions/op"
  PerfKind kind;
  uint32_t type;  // perf_event_attr.type and .config
  uint64_t config;
};
constexpr int kPerfEventCount = 10;
const PerfEvent* PerfEvents();  // kPerfEventCount entries
// The index of `name` in PerfEvents(), or -1.
int FindPerfEvent(const std::string& name);

// --perf_counters, parsed and probed: which events each thread opens, and per kind why none of
// that kind can be (empty = they can).
struct PerfPlan {
  std::string spec = "off";  // as given: auto, off or a list
  std::vector<int> events;   // indexes into PerfEvents(), table order; empty = off
  std::string hardware_unavailable, software_unavailable;

  bool enabled() const { return !events.empty(); }
  bool Uses(PerfKind kind) const;
  const std::string& Unavailable(PerfKind kind) const {
    return kind == PerfKind::kHardware ? hardware_unavailable : software_unavailable;
  }
  // "hardware unavailable: no hardware PMU (ENOENT); software task-clock, ...".
  std::string Describe() const;
};

// "auto" (every event), "off" (none) or a comma-separated list of PerfEvents() names.
// InvalidArgument naming the valid events otherwise.
Status ParsePerfCounters(const std::string& text, PerfPlan* plan);
// Opens each kind's events once on the calling thread and records why a kind cannot be counted.
void ProbePerfCounters(PerfPlan* plan);
// Why perf_event_open failed with `err` for the first event of a kind, as the JSON says it:
// "no hardware PMU (ENOENT)", "perf_event_paranoid=3 refuses it (EACCES)".
std::string PerfOpenFailure(int err, PerfKind kind, const std::string& event, bool first_of_kind);

// One group's read(2): the time it was enabled and running, and each member's raw count.
struct PerfGroupReading {
  uint64_t time_enabled = 0, time_running = 0;
  std::vector<std::pair<int, uint64_t>> values;  // (event index, raw count)
};
struct PerfReading {
  std::vector<PerfGroupReading> groups;
  // This thread's own failures to open, beyond the plan's (a kind the probe could open).
  std::string hardware_unavailable, software_unavailable;
};

// The counters of the thread that constructs it, one group per kind (a software group never
// multiplexes, so its figures stay exact when the PMU is oversubscribed). Opened disabled.
// Not thread-safe: used by the thread that opened it.
class PerfGroup {
 public:
  explicit PerfGroup(const PerfPlan& plan);
  ~PerfGroup();
  PerfGroup(const PerfGroup&) = delete;
  PerfGroup& operator=(const PerfGroup&) = delete;

  void Start();        // resets and enables every group; REQUIRES: called once
  PerfReading Stop();  // disables and reads them

 private:
  struct Group {
    int leader = -1;
    std::vector<int> fds, events;
  };
  std::vector<Group> groups_;
  std::string hardware_unavailable_, software_unavailable_;
};

// A multiplexed count estimated over the whole enabled time: raw * enabled / running. -1 when
// the group never ran (nothing to scale).
double ScalePerfCount(uint64_t raw, uint64_t time_enabled, uint64_t time_running);

// The readings of a role's threads, each scaled, then summed.
struct PerfTotals {
  bool requested = false;
  double value[kPerfEventCount] = {};  // scaled, summed over the threads
  bool seen[kPerfEventCount] = {};     // some thread counted it
  bool missed[kPerfEventCount] = {};   // some thread's group never ran: the sum is partial
  bool multiplexed = false;            // some group ran for only part of its enabled time
  double counted_fraction = 1;         // the smallest running/enabled of any group
  std::string unavailable;             // hardware: why not counted ("" = counted)
  std::string software_unavailable;    // software: likewise

  // Before the first Add: what was asked for, and the kinds' reasons.
  void Begin(const PerfPlan& plan);
  // One thread's reading.
  void Add(const PerfReading& r);
  // Per op: value / ops, or -1 if not counted.
  double PerOp(int event, uint64_t ops) const;
};

}  // namespace kvbench
