// The environment audit's arithmetic on synthetic /proc readings: the noisy flag, steal and
// foreign CPU time, and finding the mount of the database directory.
#include "env/host_audit.h"

#include <gtest/gtest.h>

#include "common/cpu_affinity.h"
#include "env/cpu_speed.h"
#include "env/noise.h"

namespace kvbench {
namespace {

// A snapshot at `wall` seconds whose /proc/stat says `busy` and `steal` ticks (100 per second)
// and whose process has used `own` CPU seconds.
NoiseSnapshot Snap(double wall, uint64_t busy, uint64_t steal, double own, double load) {
  NoiseSnapshot s;
  s.ok = true;
  s.wall_seconds = wall;
  s.ticks.busy = busy;
  s.ticks.steal = steal;
  s.own_cpu_seconds = own;
  s.load1 = load;
  return s;
}

TEST(ProcStat, ParsesTheAggregateLine) {
  CpuTicks t;
  // user nice system idle iowait irq softirq steal guest guest_nice
  ASSERT_TRUE(ParseProcStat("cpu  100 5 30 800 7 1 2 9 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n", &t));
  EXPECT_EQ(t.busy, 100u + 5 + 30 + 1 + 2);
  EXPECT_EQ(t.steal, 9u);
  EXPECT_EQ(t.total, 100u + 5 + 30 + 800 + 7 + 1 + 2 + 9);
  EXPECT_FALSE(ParseProcStat("cpu0 1 2 3\nintr 5\n", &t));
  EXPECT_FALSE(ParseProcStat("cpu  1 2 3\n", &t));  // fewer than 8 fields
}

TEST(Noise, QuietRunIsNotNoisy) {
  // 10 s on 2 CPUs = 20 CPU-seconds; busy 10.5 s of which 10 s are ours: 2.5% foreign.
  const NoiseReport r = AssessNoise(Snap(0, 0, 0, 0, 0.1), Snap(10, 1050, 10, 10, 1.0), 2, 100);
  ASSERT_TRUE(r.measured);
  EXPECT_DOUBLE_EQ(r.capacity_cpu_seconds, 20);
  EXPECT_NEAR(r.foreign_cpu_seconds, 0.5, 1e-9);
  EXPECT_NEAR(r.foreign_share, 0.025, 1e-9);
  EXPECT_NEAR(r.steal_share, 0.005, 1e-9);
  EXPECT_FALSE(r.noisy);
  EXPECT_EQ(r.reason, "");
  EXPECT_DOUBLE_EQ(r.load_end, 1.0);
}

TEST(Noise, OtherProcessesMakeItNoisy) {
  // Busy 15 s, ours 10 s: 5 s of 20 = 25% used by other processes.
  const NoiseReport r = AssessNoise(Snap(0, 0, 0, 0, 0), Snap(10, 1500, 0, 10, 3), 2, 100);
  EXPECT_TRUE(r.noisy);
  EXPECT_NEAR(r.foreign_share, 0.25, 1e-9);
  EXPECT_NE(r.reason.find("other processes used 25.0% of the 2 CPUs"), std::string::npos)
      << r.reason;
  EXPECT_EQ(r.reason.find("stole"), std::string::npos);
}

TEST(Noise, StealMakesItNoisy) {
  // 1 s stolen of 20: 5% > 2%.
  const NoiseReport r = AssessNoise(Snap(0, 0, 0, 0, 0), Snap(10, 1000, 100, 10, 0), 2, 100);
  EXPECT_TRUE(r.noisy);
  EXPECT_NEAR(r.steal_share, 0.05, 1e-9);
  EXPECT_NE(r.reason.find("stole 5.0%"), std::string::npos) << r.reason;
}

TEST(Noise, ThresholdsAreStrict) {
  // Exactly 10% foreign and 2% steal: not noisy.
  const NoiseReport r = AssessNoise(Snap(0, 0, 0, 0, 0), Snap(10, 1200, 40, 10, 0), 2, 100);
  EXPECT_NEAR(r.foreign_share, kNoisyForeignShare, 1e-9);
  EXPECT_NEAR(r.steal_share, kNoisyStealShare, 1e-9);
  EXPECT_FALSE(r.noisy);
}

TEST(Noise, OwnTimeAboveBusyTicksIsNoForeignTime) {
  // Ticks are 10 ms: a short run can show less machine busy time than its own getrusage.
  const NoiseReport r = AssessNoise(Snap(0, 0, 0, 0, 0), Snap(1, 99, 0, 1.0, 0), 2, 100);
  EXPECT_EQ(r.foreign_cpu_seconds, 0);
  EXPECT_FALSE(r.noisy);
}

TEST(Noise, UnreadableSnapshotIsUnknownNotQuiet) {
  NoiseSnapshot bad;
  bad.error = "no aggregate cpu line in /proc/stat";
  const NoiseReport r = AssessNoise(bad, Snap(1, 0, 0, 0, 0), 2, 100);
  EXPECT_FALSE(r.measured);
  EXPECT_FALSE(r.noisy);
  EXPECT_EQ(r.unknown, bad.error);
  EXPECT_NE(DescribeNoise(r).find("not measured"), std::string::npos);
}

constexpr char kMountinfo[] =
    "21 26 0:20 / /proc rw,relatime - proc proc rw\n"
    "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
    "30 26 0:25 / /tmp rw,nosuid,nodev shared:5 - tmpfs tmpfs rw,size=100k\n"
    "31 26 0:26 / /tmpfoo rw - xfs /dev/vdb rw\n";

TEST(Mount, LongestMatchingMountPointWins) {
  MountFacts m;
  ASSERT_TRUE(FindMount(kMountinfo, "/tmp/kvbench/db", &m));
  EXPECT_EQ(m.mount_point, "/tmp");
  EXPECT_EQ(m.filesystem, "tmpfs");  // after the optional fields and the "-"
  EXPECT_EQ(m.device, "tmpfs (0:25)");
  EXPECT_EQ(m.options, "rw,nosuid,nodev");
  ASSERT_TRUE(FindMount(kMountinfo, "/tmpx", &m));  // a prefix of the name is not a parent
  EXPECT_EQ(m.mount_point, "/");
  EXPECT_EQ(m.filesystem, "ext4");
  ASSERT_TRUE(FindMount(kMountinfo, "/tmpfoo", &m));
  EXPECT_EQ(m.filesystem, "xfs");
  EXPECT_FALSE(FindMount("", "/x", &m));
}

TEST(Audit, EveryFactIsKnownOrSaysWhyNot) {
  const HostAudit a = AuditHost("/tmp");
  ASSERT_FALSE(a.facts.empty());
  for (const auto& f : a.facts) {
    EXPECT_FALSE(f.value.empty()) << f.name;
    EXPECT_EQ(f.value == "unknown", !f.unknown.empty()) << f.name;
  }
  EXPECT_NE(a.Value("db_filesystem"), "unknown");
  EXPECT_EQ(AuditHost("").Value("db_filesystem"), "unknown");  // micro: no database
}

// ---- CPU speed (env/cpu_speed.h): the arithmetic on given figures; no timing is asserted ----

CpuSpeed Speed(int cpu, double best, double median = -1) {
  CpuSpeed c;
  c.cpu = cpu;
  c.ns_per_loop = best;
  c.median_ns_per_loop = median < 0 ? best * 1.01 : median;
  c.windows = kAuditWindows;
  return c;
}

// A measurement with its wall time: the loop ran `share` of it.
CpuSpeed Shared(int cpu, double best, double share) {
  CpuSpeed c = Speed(cpu, best);
  c.cpu_share = share;
  c.wall_ns_per_loop = best * 1.01 / share;
  return c;
}

TEST(CpuSpeed, AgreeingCpusSayNothing) {
  EXPECT_EQ(AssessCpuSpeeds({Speed(0, 1.90), Speed(1, 1.95)}, {Speed(0, 1.92), Speed(1, 1.93)}),
            "");
}

// Issue 36: one vCPU 1.5-2x slower than the other, invisible to steal and load.
TEST(CpuSpeed, ASlowCpuIsNamedAndMakesTheRunNoisy) {
  const std::string f = AssessCpuSpeeds({Speed(0, 1.90), Speed(1, 3.10)}, {});
  EXPECT_EQ(f, "CPU 1 ran the reference loop 1.63x slower than CPU 0 at the start");
  NoiseSnapshot a = Snap(0, 0, 0, 0, 0), b = Snap(10, 1000, 0, 10, 0);
  a.cpu_speeds = {Speed(0, 1.90), Speed(1, 1.91)};
  b.cpu_speeds = {Speed(0, 3.00), Speed(1, 1.91)};
  const NoiseReport r = AssessNoise(a, b, 2, 100);
  EXPECT_TRUE(r.noisy);
  EXPECT_NE(r.reason.find("CPU 0 ran the reference loop 1.57x slower than CPU 1 at the end"),
            std::string::npos)
      << r.reason;
  EXPECT_NE(r.reason.find("CPU 0 1.58x slower at the end than at the start"), std::string::npos)
      << r.reason;
  EXPECT_EQ(r.cpu_speed_end.size(), 2u);
}

// Issue 36: a busy loop pinned to CPU 1 leaves its best window as it was and takes half its time.
TEST(CpuSpeed, ACpuAnotherThreadSharesIsNamedByItsShareAndWallClock) {
  EXPECT_EQ(AssessCpuSpeeds({Shared(0, 1.60, 0.99), Shared(1, 1.59, 0.99)},
                            {Shared(0, 1.60, 0.98), Shared(1, 1.60, 1.00)}),
            "");
  EXPECT_EQ(AssessCpuSpeeds({Shared(0, 1.60, 0.99), Shared(1, 1.59, 0.49)}, {}),
            "CPU 1 gave the reference loop 49% of its time (below 80%: another thread shared it) "
            "and ran it 2.01x slower than CPU 0 by the wall clock at the start");
  // Below the share's threshold but beyond the wall clock's: named by the wall clock alone.
  EXPECT_EQ(AssessCpuSpeeds({Shared(0, 1.60, 0.99)}, {Shared(0, 1.60, 0.99), Shared(1, 1.6, 0.85)}),
            "CPU 1 ran the reference loop 1.16x slower than CPU 0 by the wall clock at the end");
  // One CPU alone: its share still names it.
  EXPECT_EQ(AssessCpuSpeeds({Shared(3, 1.60, 0.50)}, {}),
            "CPU 3 gave the reference loop 50% of its time (below 80%: another thread shared it) "
            "at the start");
  // Both shared alike (a loaded machine): both named, neither slower by the wall clock.
  EXPECT_EQ(AssessCpuSpeeds({Shared(0, 1.60, 0.30), Shared(1, 1.60, 0.31)}, {}),
            "CPU 0 gave the reference loop 30% of its time (below 80%: another thread shared it) "
            "at the start; CPU 1 gave the reference loop 31% of its time (below 80%: another "
            "thread shared it) at the start");
  NoiseSnapshot a = Snap(0, 0, 0, 0, 0), b = Snap(10, 1000, 0, 10, 0);
  a.cpu_speeds = {Shared(0, 1.60, 0.99), Shared(1, 1.60, 0.99)};
  b.cpu_speeds = {Shared(0, 1.60, 0.99), Shared(1, 1.60, 0.50)};
  const NoiseReport r = AssessNoise(a, b, 2, 100);
  EXPECT_TRUE(r.noisy);
  EXPECT_NE(r.reason.find("CPU 1 gave the reference loop 50% of its time"), std::string::npos)
      << r.reason;
  // The thresholds said are the ones that apply (not the speed's 10% after a share's finding).
  EXPECT_NE(r.reason.find("(thresholds: CPUs 10.0% apart in speed, a share below 80.0%)"),
            std::string::npos)
      << r.reason;
  // A share just under the threshold never reads as the threshold ("80% (below 80%)").
  EXPECT_EQ(AssessCpuSpeeds({Shared(3, 1.60, 0.796)}, {}),
            "CPU 3 gave the reference loop 79% of its time (below 80%: another thread shared it) "
            "at the start");
}

// A slower core is slower by the wall clock too: named once, by its best.
TEST(CpuSpeed, ASlowCoreIsNotNamedTwice) {
  EXPECT_EQ(AssessCpuSpeeds({Shared(0, 1.60, 0.99), Shared(1, 2.64, 0.99)}, {}),
            "CPU 1 ran the reference loop 1.65x slower than CPU 0 at the start");
  EXPECT_EQ(AssessCpuSpeeds({Shared(0, 1.60, 0.99), Shared(1, 2.64, 0.40)}, {}),
            "CPU 1 ran the reference loop 1.65x slower than CPU 0 at the start; CPU 1 gave the "
            "reference loop 40% of its time (below 80%: another thread shared it) at the start");
  EXPECT_NE(DescribeCpuSpeeds({Shared(0, 1.60, 0.5)})
                .find("CPU 0 1.600 ns/loop (wall 3.232, "
                      "share 0.50)"),
            std::string::npos)
      << DescribeCpuSpeeds({Shared(0, 1.60, 0.5)});
  EXPECT_DOUBLE_EQ(SlowestOverFastest({Shared(0, 1.60, 0.5), Shared(1, 2.0, 1.0)}, false), 1.25);
  EXPECT_NEAR(SlowestOverFastest({Shared(0, 1.60, 0.5), Shared(1, 2.0, 1.0)}, true), 1.6, 1e-9);
  EXPECT_EQ(SlowestOverFastest({Shared(0, 1.60, 0.5)}, true), 0);
}

// A difference inside the slow CPU's own noise (its windows' median over its best) is not one.
TEST(CpuSpeed, ADifferenceWithinTheNoiseIsNotNamed) {
  EXPECT_EQ(AssessCpuSpeeds({Speed(0, 1.90), Speed(1, 2.20, 2.60)}, {}), "");
  EXPECT_EQ(AssessCpuSpeeds({Speed(0, 1.90), Speed(1, 2.05)}, {}), "") << "7.9% < 10%";
}

TEST(CpuSpeed, UnmeasuredCpusAreLeftOut) {
  CpuSpeed refused = Speed(1, 0);
  refused.error = "sched_setaffinity: Invalid argument";
  EXPECT_EQ(AssessCpuSpeeds({Speed(0, 1.9), refused}, {}), "");
  EXPECT_NE(DescribeCpuSpeeds({Speed(0, 1.9), refused}).find("CPU 1 not measured (sched_"),
            std::string::npos);
}

// The measurement itself: every allowed CPU measured, with positive figures (their size is a
// benchmark's business, not a test's).
TEST(CpuSpeed, MeasuresEveryAllowedCpu) {
  const std::vector<int> cpus = AllowedCpus();
  const std::vector<CpuSpeed> speeds = MeasureCpuSpeeds(cpus);
  ASSERT_EQ(speeds.size(), cpus.size());
  for (size_t i = 0; i < cpus.size(); ++i) {
    EXPECT_EQ(speeds[i].cpu, cpus[i]);
    EXPECT_EQ(speeds[i].error, "");
    EXPECT_GT(speeds[i].ns_per_loop, 0);
    EXPECT_GE(speeds[i].median_ns_per_loop, speeds[i].ns_per_loop);
    EXPECT_EQ(speeds[i].windows, kAuditWindows);
    EXPECT_GE(speeds[i].wall_ns_per_loop, speeds[i].ns_per_loop) << "all windows, the best's too";
    EXPECT_GT(speeds[i].cpu_share, 0);
    EXPECT_LE(speeds[i].cpu_share, 1);
  }
  EXPECT_EQ(ReferenceLoop(1000, 7), ReferenceLoop(1000, 7)) << "the same work every time";
}

}  // namespace
}  // namespace kvbench
