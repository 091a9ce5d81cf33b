// A harness metric: one measured number of a role, with its unit and which direction is better.
// Both reporters loop over a role's list (console lines, the role's JSON objects, the JSON
// "metrics" catalog), so a new metric is one line in role_metrics.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvbench {

enum class Better { kHigher, kLower };

// Where the console shows a metric: on its group's line, only with --histogram, or never (the
// db_bench line shows it already, or it is for the JSON only).
enum class Show { kAlways, kHistogram, kNever };

// The groups of a role: each is one JSON object inside the role ("" = the role object itself)
// and one console line.
constexpr std::string_view kRoleGroup = "";
constexpr std::string_view kLatencyGroup = "latency_ns";
constexpr std::string_view kCostGroup = "cost";
constexpr std::string_view kIntervalsGroup = "intervals";
constexpr std::string_view kPacingGroup = "pacing";
constexpr std::string_view kCountersGroup = "counters";

struct Metric {
  std::string_view group;  // the JSON object holding it, one of the groups above
  std::string_view name;   // its key in that object: "p99"
  std::string_view unit;   // "ns", "ops/s", "us/op", ...
  Better better;
  double value;
  bool integer = false;       // a count, written as a JSON integer
  Show show = Show::kAlways;  // on the console
  std::string_view label;     // on the console; "" = unlabelled

  Metric& Integer() {
    integer = true;
    return *this;
  }
  Metric& Shown(Show where) {
    show = where;
    return *this;
  }
  Metric& Label(std::string_view text) {
    label = text;
    return *this;
  }

  // "latency_ns.p99": where the metric sits inside a role object of the JSON document.
  std::string Path() const {
    return group.empty() ? std::string(name) : std::string(group) + "." + std::string(name);
  }
};

// A role's metrics in report order. Add returns the new metric for the optional settings, each
// valid until the next Add:
//   m.Add(kLatencyGroup, "p75", "ns", Better::kLower, v).Label("p75").Shown(Show::kHistogram);
class MetricList {
 public:
  Metric& Add(std::string_view group, std::string_view name, std::string_view unit, Better better,
              double value) {
    items_.push_back(Metric{group, name, unit, better, value, false, Show::kAlways, ""});
    return items_.back();
  }
  const std::vector<Metric>& items() const { return items_; }
  // The groups other than the role's own, in the order their first metric comes.
  std::vector<std::string_view> Groups() const {
    std::vector<std::string_view> groups;
    for (const auto& m : items_) {
      bool seen = m.group == kRoleGroup;
      for (const auto& g : groups) seen = seen || g == m.group;
      if (!seen) groups.push_back(m.group);
    }
    return groups;
  }
  // nullptr if the list has no such metric.
  const Metric* Find(std::string_view group, std::string_view name) const {
    for (const auto& m : items_) {
      if (m.group == group && m.name == name) return &m;
    }
    return nullptr;
  }

 private:
  std::vector<Metric> items_;
};

}  // namespace kvbench
