// The harness metrics of a role, derived from its raw counters: the one list both reporters and
// the JSON "metrics" catalog read.
#pragma once

#include "result/result.h"

namespace kvbench {

// Fills role->metrics from the role's counters, histogram, cost and interval series.
// REQUIRES: the role is complete (merged over its threads, its cost computed).
void AddRoleMetrics(RoleResult* role);

}  // namespace kvbench
