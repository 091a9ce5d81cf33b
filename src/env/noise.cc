#include "env/noise.h"

#include <sys/resource.h>
#include <time.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace kvbench {

namespace {

std::string Percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", 100.0 * share);
  return buf;
}

std::string Fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

}  // namespace

bool ParseProcStat(const std::string& text, CpuTicks* out) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 4, "cpu ") != 0) continue;
    std::istringstream f(line.substr(4));
    // user nice system idle iowait irq softirq steal [guest guest_nice]
    uint64_t v[8];
    for (auto& x : v) {
      if (!(f >> x)) return false;
    }
    out->busy = v[0] + v[1] + v[2] + v[5] + v[6];
    out->steal = v[7];
    out->total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    return true;
  }
  return false;
}

NoiseSnapshot TakeNoiseSnapshot() {
  NoiseSnapshot s;
  std::ostringstream stat;
  stat << std::ifstream("/proc/stat").rdbuf();
  if (!ParseProcStat(stat.str(), &s.ticks)) {
    s.error = "no aggregate cpu line in /proc/stat";
    return s;
  }
  std::ifstream("/proc/loadavg") >> s.load1;
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  s.own_cpu_seconds = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                      1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  s.wall_seconds = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  s.ok = true;
  return s;
}

NoiseReport AssessNoise(const NoiseSnapshot& start, const NoiseSnapshot& end, int cpus,
                        double ticks_per_second) {
  NoiseReport r;
  if (!start.ok || !end.ok) {
    r.unknown = start.ok ? end.error : start.error;
    return r;
  }
  r.wall_seconds = end.wall_seconds - start.wall_seconds;
  if (r.wall_seconds <= 0 || cpus <= 0 || ticks_per_second <= 0) {
    r.unknown = "no time elapsed between the snapshots";
    return r;
  }
  r.measured = true;
  r.capacity_cpu_seconds = r.wall_seconds * cpus;
  r.own_cpu_seconds = end.own_cpu_seconds - start.own_cpu_seconds;
  r.steal_cpu_seconds = static_cast<double>(end.ticks.steal - start.ticks.steal) / ticks_per_second;
  const double busy = static_cast<double>(end.ticks.busy - start.ticks.busy) / ticks_per_second;
  // Ticks are coarse (10 ms): a short quiet run can show slightly less busy time than its own.
  r.foreign_cpu_seconds = busy > r.own_cpu_seconds ? busy - r.own_cpu_seconds : 0;
  r.steal_share = r.steal_cpu_seconds / r.capacity_cpu_seconds;
  r.foreign_share = r.foreign_cpu_seconds / r.capacity_cpu_seconds;
  r.load_start = start.load1;
  r.load_end = end.load1;
  if (r.steal_share > kNoisyStealShare) {
    r.reason = "the hypervisor stole " + Percent(r.steal_share) + " of the CPU time (threshold " +
               Percent(kNoisyStealShare) + ")";
  }
  if (r.foreign_share > kNoisyForeignShare) {
    if (!r.reason.empty()) r.reason += "; ";
    r.reason += "other processes used " + Percent(r.foreign_share) + " of the " +
                std::to_string(cpus) + " CPUs (threshold " + Percent(kNoisyForeignShare) + ")";
  }
  r.cpu_speed_start = start.cpu_speeds;
  r.cpu_speed_end = end.cpu_speeds;
  r.cpu_speed_finding = AssessCpuSpeeds(start.cpu_speeds, end.cpu_speeds);
  if (!r.cpu_speed_finding.empty()) {
    if (!r.reason.empty()) r.reason += "; ";
    r.reason += r.cpu_speed_finding + " (thresholds: CPUs " + Percent(kCpuSpeedShare) +
                " apart in speed, a share below " + Percent(kCpuShareLow) + ")";
  }
  r.noisy = !r.reason.empty();
  return r;
}

std::string DescribeNoise(const NoiseReport& r) {
  if (!r.measured) return "not measured: " + r.unknown;
  std::string s = "steal " + Percent(r.steal_share) + ", other processes " +
                  Percent(r.foreign_share) + " of the CPUs over " + Fixed(r.wall_seconds, 1) +
                  " s, load " + Fixed(r.load_start, 2) + " -> " + Fixed(r.load_end, 2);
  if (r.noisy) s += "; NOISY: " + r.reason;
  return s;
}

}  // namespace kvbench
