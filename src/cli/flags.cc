#include "cli/flags.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace kvbench {

namespace {

Status Invalid(const std::string& text, const Flag& f) {
  if (std::strcmp(f.unit(), "bytes") == 0 && std::strcmp(f.type_name(), "int64") == 0) {
    return Status::InvalidArgument("invalid value '" + text + "' for --" + f.name() +
                                   " (expects a byte count: 268435456, 256MB, 1G; K = 1024)");
  }
  return Status::InvalidArgument("invalid value '" + text + "' for --" + f.name() + " (expects " +
                                 f.type_name() + ")");
}

// gflags' spellings of a boolean.
bool ParseBool(std::string text, bool* out) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (text == "true" || text == "t" || text == "yes" || text == "y" || text == "1") {
    *out = true;
  } else if (text == "false" || text == "f" || text == "no" || text == "n" || text == "0") {
    *out = false;
  } else {
    return false;
  }
  return true;
}

// Plain decimal integers: no spaces, no trailing text, within the type.
bool ParseInt(const std::string& text, int64_t lo, int64_t hi, int64_t* out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool ParseUint(const std::string& text, uint64_t* out) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

// A byte count with an optional binary suffix: 64K, 256MB, 1GiB, 2T (K = 1024; case-insensitive;
// the B and iB endings are optional). Plain digits otherwise, as ParseInt.
bool ParseSize(const std::string& text, int64_t lo, int64_t hi, int64_t* out) {
  size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) ||
                                  (digits == 0 && text[0] == '-'))) {
    ++digits;
  }
  std::string suffix = text.substr(digits);
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.empty()) return ParseInt(text, lo, hi, out);
  static const char kUnits[] = "KMGT";
  const char* unit = std::strchr(kUnits, suffix[0]);
  const std::string rest = suffix.substr(1);
  if (unit == nullptr || (rest != "" && rest != "B" && rest != "IB")) return false;
  int64_t n = 0;
  if (!ParseInt(text.substr(0, digits), 0, hi, &n)) return false;
  const int shift = 10 * static_cast<int>(unit - kUnits + 1);
  if (n > (hi >> shift)) return false;
  *out = n << shift;
  return *out >= lo;
}

bool ParseDouble(const std::string& text, double* out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return *end == '\0';
}

// Integers print in full (10^15 as 1000000000000000), fractions as %g.
std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), v == std::floor(v) && std::fabs(v) < 1e18 ? "%.0f" : "%g", v);
  return buf;
}

}  // namespace

const char* Flag::type_name() const {
  static const char* const kNames[] = {"bool", "int32", "int64", "uint64", "double", "string"};
  return kNames[target_.index()];
}

std::string Flag::RangeText() const {
  if (has_choices()) {
    std::string text;
    for (const auto& c : SplitList(choices_)) text += (text.empty() ? "" : ", ") + c;
    return text;
  }
  if (!has_range_) return "";
  std::string range;
  if (lo_open_) {
    range = "(" + Number(lo_) + ", " + Number(hi_) + "]";
  } else if (std::isinf(hi_)) {
    range = ">= " + Number(lo_);
  } else {
    range = Number(lo_) + ".." + Number(hi_);
  }
  if (!has_special_) return range;
  return Number(special_) + " (" + special_meaning_ + ") or " + range;
}

Status Flag::CheckRange(double v, const std::string& text) const {
  if (!has_range_ || (has_special_ && v == special_)) return Status::OK();
  const bool above_lo = lo_open_ ? v > lo_ : v >= lo_;
  if (above_lo && v <= hi_) return Status::OK();  // false for NaN
  return Status::InvalidArgument(std::string("--") + name_ + " must be " + RangeText() + ", got " +
                                 text);
}

Status Flag::Set(const std::string& text, bool by_user) {
  set_ = by_user;
  if (auto* b = std::get_if<bool*>(&target_)) {
    return ParseBool(text, *b) ? Status::OK() : Invalid(text, *this);
  }
  if (auto* s = std::get_if<std::string*>(&target_)) {
    if (has_choices()) {
      const auto choices = SplitList(choices_);
      if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
        return Status::InvalidArgument(std::string("unknown --") + name_ + " '" + text + "' (" +
                                       RangeText() + ")");
      }
    }
    **s = text;
    return Status::OK();
  }
  double checked = 0;
  if (auto* i = std::get_if<int32_t*>(&target_)) {
    int64_t v = 0;
    if (!ParseInt(text, INT32_MIN, INT32_MAX, &v)) return Invalid(text, *this);
    **i = static_cast<int32_t>(v);
    checked = static_cast<double>(v);
  } else if (auto* l = std::get_if<int64_t*>(&target_)) {
    const bool size = std::strcmp(unit_, "bytes") == 0;
    if (!(size ? ParseSize : ParseInt)(text, INT64_MIN, INT64_MAX, *l)) {
      return Invalid(text, *this);
    }
    checked = static_cast<double>(**l);
  } else if (auto* u = std::get_if<uint64_t*>(&target_)) {
    if (!ParseUint(text, *u)) return Invalid(text, *this);
    checked = static_cast<double>(**u);
  } else if (auto* d = std::get_if<double*>(&target_)) {
    if (!ParseDouble(text, *d)) return Invalid(text, *this);
    checked = **d;
  }
  return CheckRange(checked, text);
}

namespace {

Flag* Find(std::vector<Flag>& flags, const std::string& name) {
  for (auto& f : flags) {
    if (name == f.name()) return &f;
  }
  return nullptr;
}

// One argument: "--name=value", "--name value" (consuming argv[*i + 1]), "--bool", "--nobool".
Status ParseOne(std::vector<Flag>& flags, int argc, char** argv, int* i, Flag** flag) {
  std::string arg = argv[*i];
  arg = arg.substr(arg[1] == '-' ? 2 : 1);
  const size_t eq = arg.find('=');
  const std::string name = arg.substr(0, eq);
  *flag = Find(flags, name);
  if (*flag == nullptr && eq == std::string::npos && name.rfind("no", 0) == 0) {
    Flag* negated = Find(flags, name.substr(2));
    if (negated != nullptr && negated->is_bool()) {
      *flag = negated;
      return negated->Set("false", true);
    }
  }
  if (*flag == nullptr) return Status::OK();  // the caller decides about unknown flags
  if (eq != std::string::npos) return (*flag)->Set(arg.substr(eq + 1), true);
  if ((*flag)->is_bool()) return (*flag)->Set("true", true);
  if (*i + 1 >= argc) return Status::InvalidArgument("flag --" + name + " needs a value");
  return (*flag)->Set(argv[++*i], true);
}

}  // namespace

Status ParseFlags(std::vector<Flag>& flags, const std::vector<std::string>& stop_at, int argc,
                  char** argv, UnknownFlags unknown, std::string* action,
                  std::vector<char*>* rest) {
  action->clear();
  for (auto& f : flags) {
    Status s = f.Set(f.default_value(), false);
    if (!s.ok())
      return Status::InvalidArgument("default of --" + std::string(f.name()) + ": " + s.message());
  }
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool is_flag = arg.size() >= 2 && arg[0] == '-';
    const std::string name = is_flag ? arg.substr(arg[1] == '-' ? 2 : 1) : "";
    if (is_flag && std::find(stop_at.begin(), stop_at.end(), name) != stop_at.end()) {
      *action = name;
      return Status::OK();
    }
    Flag* flag = nullptr;
    if (is_flag) {
      Status s = ParseOne(flags, argc, argv, &i, &flag);
      if (!s.ok()) return s;
    }
    if (flag != nullptr) continue;
    if (unknown == UnknownFlags::kKeep && rest != nullptr) {
      rest->push_back(argv[i]);
    } else if (!is_flag) {
      return Status::InvalidArgument("unexpected argument '" + arg + "'");
    } else {
      return Status::InvalidArgument("unknown flag --" + name.substr(0, name.find('=')));
    }
  }
  return Status::OK();
}

void PrintFlags(std::FILE* out, const std::vector<Flag>& flags) {
  std::vector<const Flag*> sorted;
  sorted.reserve(flags.size());
  for (const auto& f : flags) sorted.push_back(&f);
  std::sort(sorted.begin(), sorted.end(),
            [](const Flag* a, const Flag* b) { return std::strcmp(a->name(), b->name()) < 0; });
  for (const Flag* f : sorted) {
    const bool quoted = std::string(f->type_name()) == "string";
    std::string line = std::string("  --") + f->name() + " (" + f->type_name() + ", default " +
                       (quoted ? "\"" + f->default_value() + "\"" : f->default_value());
    const std::string range = f->RangeText();
    if (!range.empty()) line += (f->has_choices() ? ", one of " : ", range ") + range;
    if (*f->unit() != '\0') line += std::string(", in ") + f->unit();
    std::fprintf(out, "%s)\n      %s\n", line.c_str(), f->help());
  }
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace kvbench
