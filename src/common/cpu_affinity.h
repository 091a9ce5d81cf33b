// CPU lists as Linux writes them ("0-3,6") and pinning a thread to one CPU: kvbench's
// --cpu_affinity for its workers and kvbench_micro's for its benchmark thread.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace kvbench {

// Parses "0,1", "0-3", "0-3,6" into the CPUs in the order written, each once, and checks that
// every one is in the calling process's allowed set (sched_getaffinity): InvalidArgument naming
// `flag`, the offending CPU and the allowed set otherwise. "" gives an empty list.
Status ParseCpuAffinity(const std::string& flag, const std::string& text, std::vector<int>* cpus);

// The CPUs this process may run on, ascending.
std::vector<int> AllowedCpus();

// "0-3,6": `cpus` sorted and compressed into ranges.
std::string FormatCpuList(std::vector<int> cpus);

// Pins the calling thread to `cpu`. IOError with the reason if the kernel refuses.
Status PinThisThread(int cpu);

}  // namespace kvbench
