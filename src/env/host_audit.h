// The environment audit (docs/json.md "environment"): the facts about the host that change what a
// benchmark measures (CPU model and microcode, frequency governor and boost, SMT, transparent huge
// pages, kernel, virtualisation, memory available, the database's filesystem), read from /proc and
// /sys before a run. A fact the host does not expose (no cpufreq in a VM) is recorded as unknown
// with the reason, never guessed. Used by kvbench (env/environment.h) and kvbench_micro.
#pragma once

#include <string>
#include <vector>

namespace kvbench {

// One fact: its value, or "unknown" with the reason.
struct AuditFact {
  std::string name;     // "cpu_model", "governor", ... (docs/json.md lists them)
  std::string value;    // "unknown" when the host does not say
  std::string unknown;  // why it is unknown; "" when known
};

struct HostAudit {
  std::vector<AuditFact> facts;       // in the order docs/json.md lists them
  std::vector<std::string> warnings;  // what makes this host's numbers less trustworthy

  // The value of fact `name`, or "unknown" if it is not recorded.
  std::string Value(const std::string& name) const;
  // One line for the console: "EPYC 9B45, microcode unknown, governor unknown, SMT off, ...".
  std::string Summary() const;
};

// The audit of this host, and of the filesystem holding `db_path` ("" for none: kvbench_micro).
// `db_path` need not exist yet: its nearest existing ancestor decides the mount.
HostAudit AuditHost(const std::string& db_path);

// /proc/cpuinfo's model name (x86), or "ARM implementer X part Y", or "unknown".
std::string HostCpuModel();

// The mount of `path` in /proc/self/mountinfo text: the longest mount point that is a prefix of
// `path` (an absolute, resolved path). False when none matches. Exposed for tests.
struct MountFacts {
  std::string mount_point, filesystem, device, options;
};
bool FindMount(const std::string& mountinfo, const std::string& path, MountFacts* out);

}  // namespace kvbench
