#include "env/host_audit.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace kvbench {

namespace {

constexpr char kCpuDir[] = "/sys/devices/system/cpu/";

bool ReadFirstLine(const std::string& path, std::string* line) {
  std::ifstream in(path);
  return static_cast<bool>(std::getline(in, *line));
}

// The value of the first "key : value" line of /proc/cpuinfo with this key, or "".
std::string CpuInfo(const std::string& wanted) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto key_end = line.find_last_not_of(" \t", colon - 1);
    if (key_end == std::string::npos || line.compare(0, key_end + 1, wanted) != 0 ||
        key_end + 1 != wanted.size()) {
      continue;
    }
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

AuditFact Known(const char* name, std::string value) { return {name, std::move(value), ""}; }
AuditFact Unknown(const char* name, std::string why) { return {name, "unknown", std::move(why)}; }

// The first line of the file `name` under kCpuDir, or nullopt when there is none.
std::optional<std::string> CpuFile(const char* name) {
  std::string line;
  if (!ReadFirstLine(std::string(kCpuDir) + name, &line)) return std::nullopt;
  return line;
}

AuditFact Microcode() {
  const std::string v = CpuInfo("microcode");
  if (!v.empty()) return Known("microcode", v);
  if (const auto sys = CpuFile("cpu0/microcode/version")) return Known("microcode", *sys);
  return Unknown("microcode",
                 "no 'microcode' line in /proc/cpuinfo and no cpu0/microcode/version in sysfs "
                 "(usual in a VM, and on ARM)");
}

AuditFact Governor() {
  if (const auto v = CpuFile("cpu0/cpufreq/scaling_governor")) return Known("governor", *v);
  return Unknown("governor",
                 "no cpu0/cpufreq/scaling_governor: no cpufreq driver (usual in a VM, where the "
                 "host decides the clock)");
}

AuditFact Boost() {
  if (const auto v = CpuFile("cpufreq/boost")) return Known("boost", *v == "1" ? "on" : "off");
  if (const auto v = CpuFile("intel_pstate/no_turbo")) {
    return Known("boost", *v == "1" ? "off" : "on");  // "no turbo": 1 is off
  }
  return Unknown("boost", "neither cpufreq/boost nor intel_pstate/no_turbo in sysfs");
}

AuditFact Smt() {
  const auto active = CpuFile("smt/active");
  if (!active) {
    return Unknown("smt", "no /sys/devices/system/cpu/smt/active (kernel without SMT control)");
  }
  if (*active == "1") return Known("smt", "on");
  const bool notsupported = CpuFile("smt/control").value_or("") == "notsupported";
  return Known("smt", notsupported ? "off (not supported)" : "off");
}

AuditFact Thp() {
  std::string v;
  if (!ReadFirstLine("/sys/kernel/mm/transparent_hugepage/enabled", &v)) {
    return Unknown("thp", "no /sys/kernel/mm/transparent_hugepage/enabled");
  }
  const auto open = v.find('['), close = v.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return Known("thp", v);
  }
  return Known("thp", v.substr(open + 1, close - open - 1));
}

AuditFact Kernel() {
  utsname u;
  if (uname(&u) != 0) return Unknown("kernel", "uname failed");
  return Known("kernel", std::string(u.sysname) + " " + u.release + " " + u.machine);
}

// "none", or "yes" with the hypervisor's CPUID signature when it gives one ("KVMKVMKVM").
AuditFact Virtualization() {
  std::string type;
  if (ReadFirstLine("/sys/hypervisor/type", &type))
    return Known("virtualization", "yes (" + type + ")");
#if defined(__x86_64__) || defined(__i386__)
  const std::string flags = " " + CpuInfo("flags") + " ";
  if (flags.size() <= 2) return Unknown("virtualization", "no 'flags' line in /proc/cpuinfo");
  if (flags.find(" hypervisor ") == std::string::npos) return Known("virtualization", "none");
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid(0x40000000, a, b, c, d);
  // The signature is 12 bytes of registers: printable ASCII from a real hypervisor, whatever
  // an emulator (valgrind) leaves there otherwise.
  std::string name;
  for (unsigned reg : {b, c, d}) {
    for (int i = 0; i < 4; ++i) {
      const char ch = static_cast<char>(reg >> (8 * i));
      if (ch >= ' ' && ch < 127) name += ch;
    }
  }
  name.erase(0, name.find_first_not_of(' '));
  name.erase(name.find_last_not_of(' ') + 1);
  if (name.empty()) return Known("virtualization", "yes (hypervisor flag)");
  return Known("virtualization", "yes (hypervisor flag, " + name + ")");
#else
  return Unknown("virtualization",
                 "no /sys/hypervisor/type, and no hypervisor flag on this "
                 "architecture");
#endif
}

AuditFact MemoryAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  unsigned long long kb = 0;
  while (in >> key >> kb) {
    if (key == "MemAvailable:") return Known("memory_available_bytes", std::to_string(kb * 1024));
    in.ignore(1 << 10, '\n');
  }
  return Unknown("memory_available_bytes", "no MemAvailable in /proc/meminfo");
}

AuditFact LoadAverage() {
  std::string v;
  if (!ReadFirstLine("/proc/loadavg", &v)) return Unknown("load_average_start", "no /proc/loadavg");
  std::istringstream in(v);
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return Known("load_average_start", one + " " + five + " " + fifteen);
}

// The nearest existing ancestor of `path`, resolved.
std::string ExistingRealPath(std::string path) {
  char buf[PATH_MAX];
  while (!path.empty()) {
    if (realpath(path.c_str(), buf) != nullptr) return buf;
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos)
      path = ".";
    else if (slash == 0)
      path = "/";
    else
      path = path.substr(0, slash);
  }
  return "";
}

void AddDatabaseFacts(const std::string& db_path, std::vector<AuditFact>* facts) {
  const char* names[] = {"db_filesystem", "db_mount_options", "db_device", "db_mount_point"};
  std::ostringstream text;
  text << std::ifstream("/proc/self/mountinfo").rdbuf();
  const std::string resolved = ExistingRealPath(db_path);
  MountFacts m;
  if (resolved.empty() || !FindMount(text.str(), resolved, &m)) {
    for (const char* n : names)
      facts->push_back(Unknown(n, "no mount of " + db_path + " found in /proc/self/mountinfo"));
    return;
  }
  facts->push_back(Known(names[0], m.filesystem));
  facts->push_back(Known(names[1], m.options));
  facts->push_back(Known(names[2], m.device));
  facts->push_back(Known(names[3], m.mount_point));
}

bool IsUnder(const std::string& path, const std::string& mount_point) {
  if (mount_point == "/") return true;
  return path.compare(0, mount_point.size(), mount_point) == 0 &&
         (path.size() == mount_point.size() || path[mount_point.size()] == '/');
}

std::vector<std::string> Warnings(const HostAudit& a) {
  std::vector<std::string> w;
  const std::string governor = a.Value("governor");
  if (governor != "unknown" && governor != "performance") {
    w.push_back("the CPU frequency governor is '" + governor +
                "', not 'performance': the clock speed follows the load");
  }
  if (a.Value("boost") == "on") {
    w.push_back(
        "CPU boost/turbo is on: the clock speed depends on temperature and on the other "
        "cores' load");
  }
  const double load = std::atof(a.Value("load_average_start").c_str());
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus > 0 && load > 0.5 * static_cast<double>(cpus)) {
    std::ostringstream s;
    s << "load average " << load << " on " << cpus
      << " CPUs at the start: other processes compete for the CPUs";
    w.push_back(s.str());
  }
  return w;
}

}  // namespace

bool FindMount(const std::string& mountinfo, const std::string& path, MountFacts* out) {
  std::istringstream in(mountinfo);
  std::string line;
  bool found = false;
  while (std::getline(in, line)) {
    // id parent major:minor root mount_point options [optional...] - fstype source super_options
    std::istringstream f(line);
    std::string id, parent, dev, root, mount_point, options, field;
    if (!(f >> id >> parent >> dev >> root >> mount_point >> options)) continue;
    while (f >> field && field != "-") {
    }
    std::string fstype, source;
    if (!(f >> fstype >> source)) continue;
    if (!IsUnder(path, mount_point)) continue;
    if (found && mount_point.size() < out->mount_point.size()) continue;
    std::string device = source;
    device += " (";
    device += dev;
    device += ")";
    *out = {mount_point, fstype, device, options};
    found = true;
  }
  return found;
}

std::string HostAudit::Value(const std::string& name) const {
  for (const auto& f : facts) {
    if (f.name == name) return f.value;
  }
  return "unknown";
}

std::string HostAudit::Summary() const {
  std::string s = Value("cpu_model") + ", microcode " + Value("microcode") + ", governor " +
                  Value("governor") + ", boost " + Value("boost") + ", SMT " + Value("smt") +
                  ", THP " + Value("thp") + ", virtualization " + Value("virtualization") +
                  ", load " + Value("load_average_start");
  const std::string fs = Value("db_filesystem");
  if (fs != "unknown") s += ", db on " + fs + " " + Value("db_device");
  return s;
}

std::string HostCpuModel() {
  std::string model = CpuInfo("model name");
  if (!model.empty()) return model;
  const std::string part = CpuInfo("CPU part");
  if (!part.empty()) return "ARM implementer " + CpuInfo("CPU implementer") + " part " + part;
  return "unknown";
}

HostAudit AuditHost(const std::string& db_path) {
  HostAudit a;
  const std::string model = HostCpuModel();
  a.facts.push_back(model == "unknown" ? Unknown("cpu_model", "no model name in /proc/cpuinfo")
                                       : Known("cpu_model", model));
  a.facts.push_back(Microcode());
  a.facts.push_back(Governor());
  a.facts.push_back(Boost());
  a.facts.push_back(Smt());
  a.facts.push_back(Thp());
  a.facts.push_back(Kernel());
  a.facts.push_back(Virtualization());
  a.facts.push_back(MemoryAvailable());
  a.facts.push_back(LoadAverage());
  if (!db_path.empty()) AddDatabaseFacts(db_path, &a.facts);
  // Google Benchmark writes context strings unescaped: no control character may reach them.
  for (auto& f : a.facts) {
    for (auto& ch : f.value) {
      if (static_cast<unsigned char>(ch) < 0x20) ch = '?';
    }
  }
  a.warnings = Warnings(a);
  return a;
}

}  // namespace kvbench
