// Flags as data: each flag's name, type, default, range, unit and help are one row of a table
// (kvbench: cli/kvbench_flags.cc; kvbench_micro: bench/main.cc). One loop parses the command
// line with db_bench's syntax (--flag=value, --flag value, --flag / --noflag for booleans), checks
// every value against its range, and --help prints the table with the ranges.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"

namespace kvbench {

class Flag {
 public:
  // Where a parsed value goes; its type is the flag's type.
  using Target = std::variant<bool*, int32_t*, int64_t*, uint64_t*, double*, std::string*>;

  // `default_value` is written as on the command line and parsed like it.
  Flag(const char* name, Target target, const char* default_value, const char* help)
      : name_(name), target_(target), default_(default_value), help_(help) {}

  // Numbers: the accepted closed range lo..hi (hi = infinity: no upper bound).
  Flag& Range(double lo, double hi = std::numeric_limits<double>::infinity()) {
    lo_ = lo;
    hi_ = hi;
    has_range_ = true;
    return *this;
  }
  // Numbers: (lo, hi] instead of lo..hi.
  Flag& LowOpen() {
    lo_open_ = true;
    return *this;
  }
  // Numbers: one more value accepted outside the range, and what it means ("= --num").
  Flag& Or(double value, const char* meaning) {
    special_ = value;
    special_meaning_ = meaning;
    has_special_ = true;
    return *this;
  }
  // Strings: the only values accepted, comma-separated ("none,snappy,lz4,zstd").
  Flag& Choices(const char* choices) {
    choices_ = choices;
    return *this;
  }
  // The unit of a number ("bytes", "seconds"), for --help and docs/cli.md.
  Flag& Unit(const char* unit) {
    unit_ = unit;
    return *this;
  }

  const char* name() const { return name_; }
  const char* help() const { return help_; }
  const char* unit() const { return unit_; }
  const std::string& default_value() const { return default_; }
  bool is_bool() const { return std::holds_alternative<bool*>(target_); }
  bool has_choices() const { return *choices_ != '\0'; }
  // "int64", "double", ... as --help and the error messages say.
  const char* type_name() const;
  // "1..1000", "(0, 1]", "-1 (= --num) or 0..1000000000000000", ">= 1", "none, snappy, ...";
  // "" when any value of the type is accepted.
  std::string RangeText() const;
  // Whether the user gave it (rather than its default applying).
  bool is_set() const { return set_; }

  // Parses `text` into the target and checks it; InvalidArgument naming the flag otherwise.
  Status Set(const std::string& text, bool by_user);

 private:
  Status CheckRange(double v, const std::string& text) const;

  const char* name_;
  Target target_;
  std::string default_;
  const char* help_;
  const char* unit_ = "";
  const char* choices_ = "";
  double lo_ = 0, hi_ = 0, special_ = 0;
  const char* special_meaning_ = "";
  bool has_range_ = false, lo_open_ = false, has_special_ = false, set_ = false;
};

// What ParseFlags does with a flag that is not in the table.
enum class UnknownFlags { kError, kKeep };

// Sets every flag to its default, then applies argv[1..]. Stops at the first `stop_at` flag
// (--help, --version: no value, no "no" form) and returns its name in *action, else "". With
// UnknownFlags::kKeep, arguments that are not in the table are left in *rest in order, for
// another parser (Google Benchmark's); with kError they are usage errors, as are positional
// arguments. InvalidArgument with a one-line message on a usage error.
Status ParseFlags(std::vector<Flag>& flags, const std::vector<std::string>& stop_at, int argc,
                  char** argv, UnknownFlags unknown, std::string* action,
                  std::vector<char*>* rest = nullptr);

// "  --name (type, default D, range R, in UNIT)\n      help\n" for each flag, sorted by name
// ("one of A, B" instead of "range R" for a string with choices).
void PrintFlags(std::FILE* out, const std::vector<Flag>& flags);

// The comma-separated items of `s`, empty ones included, in order.
std::vector<std::string> SplitList(const std::string& s);

}  // namespace kvbench
