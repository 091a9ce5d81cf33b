#include "report/hgrm_reporter.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "report/hgrm.h"
#include "report/json_reporter.h"

namespace kvbench {
namespace {

std::string DirectoryOf(const std::string& prefix) {
  const size_t slash = prefix.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : prefix.substr(0, slash);
}

}  // namespace

std::string HgrmReporter::FileName(const std::string& prefix, const BenchmarkResult& r,
                                   int occurrence, const std::string& role) {
  std::string name = prefix + "." + r.name;
  if (occurrence > 1) name += "-" + std::to_string(occurrence);
  if (r.repeats > 1) name += ".r" + std::to_string(r.repeat);
  return name + "." + role + ".hgrm";
}

bool HgrmReporter::Start(const RunContext& context) {
  const std::string dir = DirectoryOf(prefix_);
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    std::fprintf(err_, "kvbench: error: --hgrm_prefix=%s: cannot write in %s: %s\n",
                 prefix_.c_str(), dir.c_str(), std::strerror(errno));
    return false;
  }
  return true;
}

void HgrmReporter::Add(const BenchmarkResult& result) {
  if (result.warmup) return;
  // A new entry of --benchmarks starts at repeat 1 (warm-ups are not counted).
  int& n = occurrences_[result.name];
  if (result.repeat <= 1 || n == 0) ++n;
  for (const RoleResult& role : result.roles) {
    if (role.latency.count() == 0) continue;
    const std::string path = FileName(prefix_, result, n, role.role);
    const Status s = AtomicFile(path)(HgrmText(role.latency));
    if (!s.ok()) {
      std::fprintf(err_, "kvbench: error: %s\n", s.message().c_str());
      ok_ = false;
    }
  }
}

}  // namespace kvbench
