// perf_event_open counters: the scaling of multiplexed groups and the per-op arithmetic on
// synthetic readings, the --perf_counters and --cpu_affinity parsers, the reasons recorded when
// counting is refused, and one real group on this thread (correct with or without a PMU).
#include "stats/perf_counters.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "common/cpu_affinity.h"
#include "result/role_metrics.h"

namespace kvbench {
namespace {

const int kInstructions = FindPerfEvent("instructions");
const int kCycles = FindPerfEvent("cycles");
const int kTaskClock = FindPerfEvent("task-clock");
const int kMinorFaults = FindPerfEvent("minor-faults");

PerfGroupReading Group(uint64_t enabled, uint64_t running,
                       std::vector<std::pair<int, uint64_t>> values) {
  PerfGroupReading g;
  g.time_enabled = enabled;
  g.time_running = running;
  g.values = std::move(values);
  return g;
}

TEST(PerfScaleTest, ScalesByEnabledOverRunning) {
  EXPECT_DOUBLE_EQ(ScalePerfCount(100, 200, 200), 100);  // never multiplexed
  EXPECT_DOUBLE_EQ(ScalePerfCount(100, 200, 50), 400);   // counted a quarter of the time
  EXPECT_DOUBLE_EQ(ScalePerfCount(0, 0, 0), 0);          // enabled for no time at all
  EXPECT_LT(ScalePerfCount(100, 200, 0), 0);             // never ran: nothing to scale
}

TEST(PerfTotalsTest, SumsScaledThreadsAndSaysItWasMultiplexed) {
  PerfTotals t;
  PerfPlan plan;
  ASSERT_TRUE(ParsePerfCounters("auto", &plan).ok());
  t.Begin(plan);
  PerfReading a, b;
  a.groups.push_back(Group(1000, 1000, {{kInstructions, 3000}, {kCycles, 2000}}));
  b.groups.push_back(Group(1000, 250, {{kInstructions, 1000}, {kCycles, 500}}));
  t.Add(a);
  t.Add(b);
  EXPECT_TRUE(t.requested);
  EXPECT_TRUE(t.multiplexed);
  EXPECT_DOUBLE_EQ(t.counted_fraction, 0.25);
  EXPECT_DOUBLE_EQ(t.PerOp(kInstructions, 100), (3000 + 4000) / 100.0);
  EXPECT_DOUBLE_EQ(t.PerOp(kCycles, 100), (2000 + 2000) / 100.0);
  EXPECT_LT(t.PerOp(kTaskClock, 100), 0);   // no thread counted it
  EXPECT_LT(t.PerOp(kInstructions, 0), 0);  // no ops: no per-op figure
}

TEST(PerfTotalsTest, AGroupThatNeverRanLeavesItsEventsUncounted) {
  PerfTotals t;
  PerfReading a, b;
  a.groups.push_back(Group(1000, 1000, {{kInstructions, 3000}}));
  a.groups.push_back(Group(1000, 1000, {{kTaskClock, 900}}));
  b.groups.push_back(Group(1000, 0, {{kInstructions, 0}}));
  b.groups.push_back(Group(1000, 1000, {{kTaskClock, 100}}));
  t.Add(a);
  t.Add(b);
  EXPECT_TRUE(t.multiplexed);
  EXPECT_DOUBLE_EQ(t.counted_fraction, 0);
  EXPECT_LT(t.PerOp(kInstructions, 10), 0);  // half the role is missing: no honest total
  EXPECT_DOUBLE_EQ(t.PerOp(kTaskClock, 10), 100);
}

TEST(PerfTotalsTest, KeepsEachReasonOnce) {
  PerfPlan plan;
  plan.spec = "auto";
  plan.hardware_unavailable = "no hardware PMU (ENOENT)";
  PerfTotals t;
  t.Begin(plan);
  PerfReading r;
  r.hardware_unavailable = "no hardware PMU (ENOENT)";
  r.software_unavailable = "minor-faults not supported here (EINVAL)";
  t.Add(r);
  t.Add(r);
  EXPECT_EQ(t.unavailable, "no hardware PMU (ENOENT)");
  EXPECT_EQ(t.software_unavailable, "minor-faults not supported here (EINVAL)");
}

TEST(PerfMetricsTest, PerOpFiguresAndIpcReachTheRoleMetrics) {
  RoleResult role;
  role.ops = 1000;
  PerfReading r;
  r.groups.push_back(Group(10, 5, {{kInstructions, 600000}, {kCycles, 400000}}));
  r.groups.push_back(Group(10, 10, {{kTaskClock, 2000000}, {kMinorFaults, 50}}));
  role.counters.requested = true;
  role.counters.Add(r);
  AddRoleMetrics(&role);
  const MetricList& m = role.metrics;
  ASSERT_NE(m.Find(kCountersGroup, "instructions_per_op"), nullptr);
  EXPECT_DOUBLE_EQ(m.Find(kCountersGroup, "instructions_per_op")->value, 1200);  // scaled x2
  EXPECT_DOUBLE_EQ(m.Find(kCountersGroup, "cycles_per_op")->value, 800);
  EXPECT_DOUBLE_EQ(m.Find(kCountersGroup, "ipc")->value, 1.5);
  EXPECT_EQ(m.Find(kCountersGroup, "ipc")->better, Better::kHigher);
  EXPECT_DOUBLE_EQ(m.Find(kCountersGroup, "task_clock_ns_per_op")->value, 2000);
  EXPECT_DOUBLE_EQ(m.Find(kCountersGroup, "minor_faults_per_op")->value, 0.05);
  EXPECT_EQ(m.Find(kCountersGroup, "task_clock_ns_per_op")->unit, "ns/op");
  // Not counted: absent, never a zero.
  EXPECT_EQ(m.Find(kCountersGroup, "llc_misses_per_op"), nullptr);
  EXPECT_EQ(m.Find(kCountersGroup, "context_switches_per_op"), nullptr);
}

TEST(PerfMetricsTest, NoIpcWithoutCycles) {
  RoleResult role;
  role.ops = 10;
  PerfReading r;
  r.groups.push_back(Group(10, 10, {{kInstructions, 100}}));
  role.counters.Add(r);
  AddRoleMetrics(&role);
  EXPECT_NE(role.metrics.Find(kCountersGroup, "instructions_per_op"), nullptr);
  EXPECT_EQ(role.metrics.Find(kCountersGroup, "ipc"), nullptr);
}

TEST(PerfPlanTest, ParsesAutoOffAndLists) {
  PerfPlan plan;
  ASSERT_TRUE(ParsePerfCounters("auto", &plan).ok());
  EXPECT_EQ(plan.events.size(), static_cast<size_t>(kPerfEventCount));
  ASSERT_TRUE(ParsePerfCounters("off", &plan).ok());
  EXPECT_FALSE(plan.enabled());
  ASSERT_TRUE(ParsePerfCounters("task-clock,instructions", &plan).ok());
  EXPECT_EQ(plan.events, (std::vector<int>{kInstructions, kTaskClock}));  // table order
  EXPECT_TRUE(plan.Uses(PerfKind::kHardware));
  Status s = ParsePerfCounters("instructions,bogus", &plan);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("'bogus'"), std::string::npos);
  EXPECT_NE(s.message().find("task-clock"), std::string::npos);  // names the valid events
  EXPECT_TRUE(ParsePerfCounters("", &plan).IsInvalidArgument());
}

TEST(PerfPlanTest, ReasonsNameTheCause) {
  EXPECT_EQ(PerfOpenFailure(ENOENT, PerfKind::kHardware, "instructions", true),
            "no hardware PMU (ENOENT)");
  EXPECT_EQ(PerfOpenFailure(ENOENT, PerfKind::kHardware, "cache-misses", false),
            "cache-misses not supported here (ENOENT)");
  const std::string refused = PerfOpenFailure(EACCES, PerfKind::kSoftware, "task-clock", true);
  EXPECT_NE(refused.find("perf_event_paranoid="), std::string::npos) << refused;
  EXPECT_NE(refused.find("(EACCES)"), std::string::npos) << refused;
  EXPECT_NE(PerfOpenFailure(EPERM, PerfKind::kHardware, "cycles", true).find("(EPERM)"),
            std::string::npos);
}

// On this thread, for real: software counts; hardware either counts or says why not.
TEST(PerfGroupTest, CountsOrSaysWhyNot) {
  PerfPlan plan;
  ASSERT_TRUE(ParsePerfCounters("auto", &plan).ok());
  ProbePerfCounters(&plan);
  PerfGroup group(plan);
  group.Start();
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < 20000000; ++i) sink = sink + i;
  PerfTotals t;
  t.Begin(plan);
  t.Add(group.Stop());
  if (plan.software_unavailable.empty()) {
    EXPECT_GT(t.PerOp(kTaskClock, 1), 0);
  }
  if (plan.hardware_unavailable.empty()) {
    EXPECT_GT(t.PerOp(kInstructions, 1), 20000000);
  } else {
    EXPECT_LT(t.PerOp(kInstructions, 1), 0);  // never a faked number
    EXPECT_EQ(t.unavailable, plan.hardware_unavailable);
  }
}

TEST(CpuAffinityTest, ParsesListsAndRangesAndRefusesCpusNotAllowed) {
  const std::vector<int> allowed = AllowedCpus();
  ASSERT_FALSE(allowed.empty());
  std::vector<int> cpus;
  ASSERT_TRUE(ParseCpuAffinity("cpu_affinity", std::to_string(allowed[0]), &cpus).ok());
  EXPECT_EQ(cpus, std::vector<int>{allowed[0]});
  EXPECT_TRUE(ParseCpuAffinity("cpu_affinity", "", &cpus).ok());
  EXPECT_TRUE(cpus.empty());
  Status s = ParseCpuAffinity("cpu_affinity", "1023", &cpus);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("CPU 1023"), std::string::npos) << s.message();
  EXPECT_TRUE(ParseCpuAffinity("cpu_affinity", "1-0", &cpus).IsInvalidArgument());
  EXPECT_TRUE(ParseCpuAffinity("cpu_affinity", "0,,1", &cpus).IsInvalidArgument());
  EXPECT_TRUE(ParseCpuAffinity("cpu_affinity", "a", &cpus).IsInvalidArgument());
  EXPECT_EQ(FormatCpuList({5, 0, 1, 2}), "0-2,5");
  EXPECT_EQ(FormatCpuList({}), "");
}

TEST(CpuAffinityTest, PinsTheCallingThread) {
  const std::vector<int> allowed = AllowedCpus();
  std::thread t([&] {
    ASSERT_TRUE(PinThisThread(allowed.back()).ok());
    EXPECT_EQ(AllowedCpus(), std::vector<int>{allowed.back()});
  });
  t.join();
}

}  // namespace
}  // namespace kvbench
