#include "stats/perf_counters.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace kvbench {

namespace {

constexpr PerfKind kHw = PerfKind::kHardware;
constexpr PerfKind kSw = PerfKind::kSoftware;
constexpr uint64_t kL1dReadMiss = PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
                                  (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);

// Hardware first, as the console line reads. "cache-misses" is the kernel's generic event, which
// it maps to last-level cache misses (perf list says so): hence the llc_ key.
const PerfEvent kEvents[kPerfEventCount] = {
    {"instructions", "instructions_per_op", "instr", "instructions/op", kHw, PERF_TYPE_HARDWARE,
     PERF_COUNT_HW_INSTRUCTIONS},
    {"cycles", "cycles_per_op", "cycles", "cycles/op", kHw, PERF_TYPE_HARDWARE,
     PERF_COUNT_HW_CPU_CYCLES},
    {"branch-misses", "branch_misses_per_op", "branch-miss", "misses/op", kHw, PERF_TYPE_HARDWARE,
     PERF_COUNT_HW_BRANCH_MISSES},
    {"L1-dcache-load-misses", "l1d_misses_per_op", "L1d-miss", "misses/op", kHw, PERF_TYPE_HW_CACHE,
     kL1dReadMiss},
    {"cache-misses", "llc_misses_per_op", "LLC-miss", "misses/op", kHw, PERF_TYPE_HARDWARE,
     PERF_COUNT_HW_CACHE_MISSES},
    {"task-clock", "task_clock_ns_per_op", "task-clock", "ns/op", kSw, PERF_TYPE_SOFTWARE,
     PERF_COUNT_SW_TASK_CLOCK},
    {"context-switches", "context_switches_per_op", "cs", "switches/op", kSw, PERF_TYPE_SOFTWARE,
     PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", "cpu_migrations_per_op", "migrations", "migrations/op", kSw,
     PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"minor-faults", "minor_faults_per_op", "minor-faults", "faults/op", kSw, PERF_TYPE_SOFTWARE,
     PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", "major_faults_per_op", "major-faults", "faults/op", kSw, PERF_TYPE_SOFTWARE,
     PERF_COUNT_SW_PAGE_FAULTS_MAJ},
};

// The errno names a reason shows, so a user can search for them.
const char* ErrnoName(int err) {
  struct Name {
    int err;
    const char* name;
  };
  static const Name kNames[] = {{ENOENT, "ENOENT"},         {EACCES, "EACCES"}, {EPERM, "EPERM"},
                                {EOPNOTSUPP, "EOPNOTSUPP"}, {ENODEV, "ENODEV"}, {EINVAL, "EINVAL"},
                                {EMFILE, "EMFILE"},         {ENOSYS, "ENOSYS"}, {EBUSY, "EBUSY"}};
  for (const auto& n : kNames) {
    if (n.err == err) return n.name;
  }
  return nullptr;
}

std::string Paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  std::string level;
  return in >> level ? level : "?";
}

void AppendReason(std::string* reasons, const std::string& reason) {
  if (reasons->find(reason) != std::string::npos) return;  // every thread says the same
  if (!reasons->empty()) *reasons += "; ";
  *reasons += reason;
}

int OpenEvent(const PerfEvent& e, int group_fd) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = e.type;
  attr.config = e.config;
  attr.disabled = group_fd < 0 ? 1 : 0;  // the leader starts and stops the whole group
  attr.read_format =
      PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  // pid 0, cpu -1: the calling thread, on whatever CPU it runs.
  return static_cast<int>(
      syscall(SYS_perf_event_open, &attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

const PerfEvent* PerfEvents() { return kEvents; }

int FindPerfEvent(const std::string& name) {
  for (int i = 0; i < kPerfEventCount; ++i) {
    if (name == kEvents[i].name) return i;
  }
  return -1;
}

bool PerfPlan::Uses(PerfKind kind) const {
  for (int e : events) {
    if (kEvents[e].kind == kind) return true;
  }
  return false;
}

std::string PerfPlan::Describe() const {
  if (spec == "off") return "off (--perf_counters=off)";
  std::string text;
  for (PerfKind kind : {kHw, kSw}) {
    std::string names;
    for (int e : events) {
      if (kEvents[e].kind == kind)
        names += (names.empty() ? "" : ", ") + std::string(kEvents[e].name);
    }
    const char* title = kind == kHw ? "hardware" : "software";
    if (!text.empty() && (!names.empty() || !Unavailable(kind).empty())) text += "; ";
    if (!names.empty()) text += std::string(title) + " " + names;
    if (!Unavailable(kind).empty()) {
      text +=
          (names.empty() ? "" : ", ") + std::string(title) + " unavailable: " + Unavailable(kind);
    }
  }
  return text;
}

Status ParsePerfCounters(const std::string& text, PerfPlan* plan) {
  plan->spec = text;
  plan->events.clear();
  if (text == "off") return Status::OK();
  bool wanted[kPerfEventCount] = {};
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    const int e = item == "auto" && text == "auto" ? -2 : FindPerfEvent(item);
    if (e == -1) {
      std::string valid = "auto, off or a comma-separated list of:";
      for (const auto& ev : kEvents) valid += std::string(" ") + ev.name;
      std::string message = "--perf_counters: unknown event '";
      message += item;
      message += "' (";
      message += valid;
      message += ")";
      return Status::InvalidArgument(message);
    }
    for (int i = 0; i < kPerfEventCount; ++i) wanted[i] = wanted[i] || e == -2 || e == i;
  }
  for (int i = 0; i < kPerfEventCount; ++i) {
    if (wanted[i]) plan->events.push_back(i);
  }
  return Status::OK();
}

std::string PerfOpenFailure(int err, PerfKind kind, const std::string& event, bool first_of_kind) {
  const char* name = ErrnoName(err);
  const std::string code = name != nullptr ? name : "errno " + std::to_string(err);
  if (err == EACCES || err == EPERM) {
    return "perf_event_paranoid=" + Paranoid() + " refuses it (" + code +
           "): run as root or lower kernel.perf_event_paranoid";
  }
  if (err == ENOENT && kind == PerfKind::kHardware && first_of_kind) {
    return "no hardware PMU (" + code + ")";
  }
  if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == EINVAL) {
    return event + " not supported here (" + code + ")";
  }
  if (err == ENOSYS) return "perf_event_open not in this kernel (ENOSYS)";
  return event + ": " + std::strerror(err) + " (" + code + ")";
}

void ProbePerfCounters(PerfPlan* plan) {
  PerfGroup probe(*plan);
  PerfReading r = probe.Stop();
  plan->hardware_unavailable = r.hardware_unavailable;
  plan->software_unavailable = r.software_unavailable;
  // Keep only the events that opened: the threads then open exactly those.
  std::vector<int> opened;
  for (const auto& g : r.groups) {
    for (const auto& [e, raw] : g.values) opened.push_back(e);
  }
  std::vector<int> kept;
  for (int e : plan->events) {
    for (int o : opened) {
      if (o == e) kept.push_back(e);
    }
  }
  plan->events = kept;
}

PerfGroup::PerfGroup(const PerfPlan& plan) {
  for (PerfKind kind : {kHw, kSw}) {
    std::string* reasons = kind == kHw ? &hardware_unavailable_ : &software_unavailable_;
    Group g;
    for (int e : plan.events) {
      if (kEvents[e].kind != kind) continue;
      const int fd = OpenEvent(kEvents[e], g.leader);
      if (fd < 0) {
        AppendReason(reasons, PerfOpenFailure(errno, kind, kEvents[e].name, g.leader < 0));
        continue;
      }
      if (g.leader < 0) g.leader = fd;
      g.fds.push_back(fd);
      g.events.push_back(e);
    }
    if (g.leader >= 0) groups_.push_back(std::move(g));
  }
}

PerfGroup::~PerfGroup() {
  for (const auto& g : groups_) {
    for (int fd : g.fds) close(fd);
  }
}

void PerfGroup::Start() {
  for (const auto& g : groups_) {
    ioctl(g.leader, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
    ioctl(g.leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
  }
}

PerfReading PerfGroup::Stop() {
  PerfReading r;
  r.hardware_unavailable = hardware_unavailable_;
  r.software_unavailable = software_unavailable_;
  for (const auto& g : groups_) {
    ioctl(g.leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
    // nr, time_enabled, time_running, then one value per member in the order they were opened.
    uint64_t buf[3 + kPerfEventCount] = {};
    const ssize_t n = read(g.leader, buf, sizeof(buf));
    std::string* reasons =
        kEvents[g.events[0]].kind == kHw ? &r.hardware_unavailable : &r.software_unavailable;
    if (n < static_cast<ssize_t>(3 * sizeof(uint64_t)) || buf[0] != g.events.size()) {
      AppendReason(reasons, std::string("reading the counters failed (") +
                                (n < 0 ? std::strerror(errno) : "short read") + ")");
      continue;
    }
    PerfGroupReading gr;
    gr.time_enabled = buf[1];
    gr.time_running = buf[2];
    for (size_t i = 0; i < g.events.size(); ++i) gr.values.emplace_back(g.events[i], buf[3 + i]);
    r.groups.push_back(std::move(gr));
  }
  return r;
}

double ScalePerfCount(uint64_t raw, uint64_t time_enabled, uint64_t time_running) {
  if (time_running >= time_enabled) return static_cast<double>(raw);
  if (time_running == 0) return -1;
  return static_cast<double>(raw) * static_cast<double>(time_enabled) /
         static_cast<double>(time_running);
}

void PerfTotals::Begin(const PerfPlan& plan) {
  requested = plan.spec != "off";
  unavailable = plan.hardware_unavailable;
  software_unavailable = plan.software_unavailable;
}

void PerfTotals::Add(const PerfReading& r) {
  if (!r.hardware_unavailable.empty()) AppendReason(&unavailable, r.hardware_unavailable);
  if (!r.software_unavailable.empty()) {
    AppendReason(&software_unavailable, r.software_unavailable);
  }
  for (const auto& g : r.groups) {
    if (g.time_running < g.time_enabled) {
      multiplexed = true;
      const double fraction = static_cast<double>(g.time_running) / g.time_enabled;
      if (fraction < counted_fraction) counted_fraction = fraction;
    }
    for (const auto& [e, raw] : g.values) {
      const double v = ScalePerfCount(raw, g.time_enabled, g.time_running);
      if (v < 0) {
        missed[e] = true;  // part of the role was never counted: no honest total
      } else {
        value[e] += v;
        seen[e] = true;
      }
    }
  }
}

double PerfTotals::PerOp(int event, uint64_t ops) const {
  if (!seen[event] || missed[event] || ops == 0) return -1;
  return value[event] / static_cast<double>(ops);
}

}  // namespace kvbench
