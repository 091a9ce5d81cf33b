// --profile's sampler and symbolizer (src/profile/): a thread's CPU time shows up under its role,
// the engine-like thread kvbench did not start under "background", and frames carry the names a
// user searches for (demangled, kvbench's own static functions included).
#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>

#include "profile/frame_name.h"
#include "profile/profiler.h"
#include "profile/symbolizer.h"

namespace kvbench {
namespace {

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Burns `seconds` of this thread's CPU time in a frame of its own.
__attribute__((noinline)) uint64_t SpinInProfileTest(double seconds) {
  volatile uint64_t x = 0;
  const double end = ThreadCpuSeconds() + seconds;
  while (ThreadCpuSeconds() < end) {
    for (int i = 0; i < 10000; ++i) x = x + static_cast<uint64_t>(i);
  }
  return x;
}

volatile uint64_t g_sink = 0;  // used after each call: no call here becomes a jump (tail call)

__attribute__((noinline)) uint64_t BackgroundSpin(double seconds) {
  const uint64_t v = SpinInProfileTest(seconds);
  g_sink = g_sink + v;
  return v;
}

ProfilePlan Plan() {
  ProfilePlan plan;
  plan.requested = true;
  plan.hz = 1000;  // a round period for the counts below
  ProbeProfiler(&plan);
  return plan;
}

bool AnyStackHas(const RoleProfile& r, const std::string& name) {
  for (const auto& s : r.stacks) {
    if (s.frames.find(name) != std::string::npos) return true;
  }
  return false;
}

TEST(Symbolizer, DemanglesCxxNamesAndLeavesCNames) {
  EXPECT_EQ(Demangle("_ZN7kvbench3FooEv"), "kvbench::Foo()");
  EXPECT_EQ(Demangle("memcmp"), "memcmp");
}

TEST(Symbolizer, NamesAStaticFunctionOfThisBinary) {
  Symbolizer symbols;
  const auto address = reinterpret_cast<uint64_t>(&SpinInProfileTest);
  const std::string& name = symbols.Name(address + 4, /*return_address=*/false);
  EXPECT_NE(name.find("SpinInProfileTest(double)"), std::string::npos) << name;
  EXPECT_EQ(name.find(';'), std::string::npos);
}

TEST(Symbolizer, NamesUnmappedAddressesUnknown) {
  Symbolizer symbols;
  EXPECT_EQ(symbols.Name(16, false), "[unknown]");
  EXPECT_GE(symbols.unresolved(), 1u);
}

// The shared cases of the short-name rule (tests/frame_names.txt), which kvb's Python reads too
// (profile_tools_test): the console's names and the pages' are the same.
TEST(ShortFrameName, GivesEveryNameOfTheSharedTable) {
  std::ifstream in(KVBENCH_FRAME_NAMES_FILE);
  ASSERT_TRUE(in) << "cannot read " << KVBENCH_FRAME_NAMES_FILE;
  int cases = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << "no tab in: " << line;
    EXPECT_EQ(ShortFrameName(line.substr(0, tab)), line.substr(tab + 1)) << line.substr(0, tab);
    ++cases;
  }
  EXPECT_GE(cases, 20);
}

TEST(Profiler, SamplesEachRoleAndTheBackgroundThreads) {
  const ProfilePlan plan = Plan();
  if (!plan.enabled) GTEST_SKIP() << "perf_event_open refused here: " << plan.unavailable;
  Profiler profiler(plan, /*workers=*/1);
  std::atomic<bool> go{false};
  // Started before the profiler: found in /proc/self/task, like an engine's compaction thread.
  std::thread background([&go] {
    while (!go.load()) std::this_thread::yield();
    g_sink = g_sink + BackgroundSpin(0.2);
  });
  std::thread reader([&] {
    ThreadSampler* sampler = profiler.Attach("reader");
    ASSERT_NE(sampler, nullptr);
    while (!go.load()) std::this_thread::yield();
    sampler->Enable();
    g_sink = g_sink + SpinInProfileTest(0.3);
    sampler->Disable();
    g_sink = g_sink + SpinInProfileTest(0.1);  // after the loop: not sampled
  });
  profiler.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // the collector finds `background`
  go.store(true);
  reader.join();
  background.join();
  profiler.Stop();
  const ProfileResult p = profiler.Result();
  ASSERT_GE(p.roles.size(), 2u);
  EXPECT_EQ(p.roles[0].role, "reader");
  EXPECT_EQ(p.roles.back().role, "background");
  EXPECT_EQ(p.period_ns, 1000000u);
  // 0.3 s of CPU at 1 kHz: ~300 samples; the 0.1 s after Disable adds none.
  EXPECT_GT(p.roles[0].samples, 200u);
  EXPECT_LT(p.roles[0].samples, 360u);
  EXPECT_TRUE(AnyStackHas(p.roles[0], "SpinInProfileTest(double)"));
  EXPECT_FALSE(AnyStackHas(p.roles[0], "BackgroundSpin"));
  EXPECT_GT(p.roles.back().samples, 100u);
  EXPECT_TRUE(AnyStackHas(p.roles.back(), "BackgroundSpin(double)"))
      << p.roles.back().stacks[0].frames;
  uint64_t counted = 0;
  for (const auto& s : p.roles[0].stacks) counted += s.count;
  EXPECT_EQ(counted, p.roles[0].samples);
  EXPECT_GE(p.collector_cpu_seconds, 0.0);
}

TEST(Profiler, ADescriptionSaysWhyWhenUnavailable) {
  ProfilePlan plan;
  plan.requested = true;
  plan.unavailable = "perf_event_paranoid=3 refuses it (EACCES)";
  EXPECT_EQ(plan.Describe(),
            "unavailable: perf_event_paranoid=3 refuses it (EACCES); running unprofiled");
  ProfilePlan off;
  EXPECT_EQ(off.Describe(), "off (--profile)");
}

}  // namespace
}  // namespace kvbench
