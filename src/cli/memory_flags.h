// --memory_budget, --io_bound and --drop_caches: their rules against each other, the engine and
// the size of the data, and the machine set-up --io_bound needs (cli/memory_flags.cc).
#pragma once

#include "cli/kvbench_flags.h"
#include "common/status.h"
#include "result/config.h"

namespace kvbench {

// Checks the three flags (`cache_size_given`: the user named --cache_size) and records them in
// `config`, which BuildConfig has filled. For --io_bound on an engine without O_DIRECT this
// moves the process into a memory cgroup; call it before any thread starts. InvalidArgument
// with a one-line message when a rule fails or nothing can bound the engine's memory (exit 2).
Status ApplyMemoryFlags(const KvbenchFlags& flags, bool cache_size_given, RunConfig* config);

}  // namespace kvbench
