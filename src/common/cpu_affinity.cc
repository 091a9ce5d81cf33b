#include "common/cpu_affinity.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kvbench {

namespace {

// A CPU number: plain digits below CPU_SETSIZE; -1 otherwise.
int ParseCpu(const std::string& digits) {
  if (digits.empty() || digits.size() > 5) return -1;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
  }
  const int cpu = std::atoi(digits.c_str());
  return cpu < CPU_SETSIZE ? cpu : -1;
}

// One item of the list, "3" or "0-3", appended to `cpus`; false if malformed.
bool ParseItem(const std::string& item, std::vector<int>* cpus) {
  const size_t dash = item.find('-');
  const int lo = ParseCpu(item.substr(0, dash));
  const int hi = dash == std::string::npos ? lo : ParseCpu(item.substr(dash + 1));
  if (lo < 0 || hi < lo) return false;
  for (int c = lo; c <= hi; ++c) {
    if (std::find(cpus->begin(), cpus->end(), c) == cpus->end()) cpus->push_back(c);
  }
  return true;
}

}  // namespace

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

std::string FormatCpuList(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  std::string text;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += std::to_string(cpus[i]);
    if (j > i) text += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return text;
}

Status ParseCpuAffinity(const std::string& flag, const std::string& text, std::vector<int>* cpus) {
  cpus->clear();
  if (text.empty()) return Status::OK();
  const std::string given = "--" + flag + "=" + text;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (!ParseItem(text.substr(start, end - start), cpus)) {
      return Status::InvalidArgument(given + ": expected CPU numbers and ranges, e.g. 0,1 or 0-3");
    }
    start = end + 1;
  }
  const std::vector<int> allowed = AllowedCpus();
  for (int c : *cpus) {
    if (std::find(allowed.begin(), allowed.end(), c) == allowed.end()) {
      return Status::InvalidArgument(
          given + ": CPU " + std::to_string(c) +
          " is not one this process may run on (allowed: " + FormatCpuList(allowed) + ")");
    }
  }
  return Status::OK();
}

Status PinThisThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  // pid 0: the calling thread.
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    return Status::IOError("cannot pin a thread to CPU " + std::to_string(cpu) + ": " +
                           std::strerror(errno));
  }
  return Status::OK();
}

}  // namespace kvbench
