// From parsed flags to a RunConfig: the rules that involve more than one flag (each flag's own
// range is its row in cli/kvbench_flags.cc).
#pragma once

#include "cli/kvbench_flags.h"
#include "common/status.h"
#include "result/config.h"

namespace kvbench {

// Fills `config` from `flags` (parsed; `db_given`: the user named --db) and the command line.
// InvalidArgument with a one-line message when the flags do not go together (exit 2).
Status BuildConfig(const KvbenchFlags& flags, bool db_given, int argc, char** argv,
                   RunConfig* config);

}  // namespace kvbench
