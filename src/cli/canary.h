// kvbench --canary and kvbench_micro --canary [--cpu_affinity=N]: the audit's CPU speed reference
// loop (env/cpu_speed.h) run once on one CPU for about 50 ms, best of its windows, printed as one
// JSON object on one line of stdout; nothing else runs. The kvb tools call it once per round on
// the CPU a comparison is pinned to, and set apart a round whose canary moved (docs/cli.md); both
// binaries print the same object from this one function, so a micro comparison can take its
// canary from the binary it measures.
#pragma once

#include <string>

namespace kvbench {

// `program`: the binary's name, which begins every message on stderr ("kvbench",
// "kvbench_micro"). `cpu_affinity`: --cpu_affinity as given: one CPU, or "" for the CPU the
// process starts on. Returns the exit status: 0 with the object printed; 2 (message on stderr)
// for a list of several CPUs or one not allowed; 1 when the kernel refuses to pin the thread.
int RunCanary(const char* program, const std::string& cpu_affinity);

}  // namespace kvbench
