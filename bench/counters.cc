#include "counters.h"

namespace kvbench {
namespace micro {

namespace {
PerfPlan g_plan;  // off until main() sets it
}  // namespace

const PerfPlan& GetPerfPlan() { return g_plan; }
void SetPerfPlan(const PerfPlan& plan) { g_plan = plan; }

}  // namespace micro
}  // namespace kvbench
