#include "common/layout.h"

#include <cstdio>

// Defined by GNU ld and lld in every executable: its first byte.
extern "C" char __executable_start;  // NOLINT(bugprone-reserved-identifier)

namespace kvbench {

namespace {
Layout& TheLayout() {
  static Layout layout = {-1, "not recorded"};
  return layout;
}
}  // namespace

const Layout& GetLayout() { return TheLayout(); }

bool RegisterLayout(long seed, const char* how) {
  TheLayout() = {seed, how};
  return true;
}

std::string CodeOffset(const void* fn) {
  const auto offset =
      reinterpret_cast<std::uintptr_t>(fn) - reinterpret_cast<std::uintptr_t>(&__executable_start);
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(offset));
  return buf;
}

std::string LayoutText() {
  const Layout& l = GetLayout();
  if (l.seed < 0) return l.how;
  return "seed " + std::to_string(l.seed) + " (" + l.how + ")";
}

}  // namespace kvbench
