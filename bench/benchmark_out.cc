#include "benchmark_out.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/file_output.h"

namespace kvbench {
namespace micro {

namespace {
constexpr char kFlag[] = "--benchmark_out=";  // the only form Google Benchmark parses
}  // namespace

BenchmarkOut::BenchmarkOut(int argc, char** argv) {
  const size_t n = std::strlen(kFlag);
  int at = -1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], kFlag, n) == 0) at = i;  // the last one counts, as for Google's
  }
  if (at < 0 || argv[at][n] == '\0') return;
  path_ = argv[at] + n;
  OutputTarget target;
  // A path that cannot be resolved (a directory) is left to Google Benchmark, which refuses it.
  if (!ResolveOutput(path_, &target).ok() || target.in_place || target.fd >= 0) return;
  target_ = target.path;
  tmp_ = target_ + ".tmp";
  arg_ = kFlag + tmp_;
  argv[at] = arg_.data();
}

bool BenchmarkOut::Finish(bool ran) {
  if (tmp_.empty()) return true;
  struct stat st;
  const bool written = stat(tmp_.c_str(), &st) == 0 && st.st_size > 0;
  if (!ran || !written) {
    unlink(tmp_.c_str());
    return true;
  }
  if (rename(tmp_.c_str(), target_.c_str()) != 0) {
    std::fprintf(stderr, "kvbench_micro: error: cannot rename %s to %s: %s\n", tmp_.c_str(),
                 target_.c_str(), std::strerror(errno));
    unlink(tmp_.c_str());
    return false;
  }
  return true;
}

}  // namespace micro
}  // namespace kvbench
