#include "report/format.h"

#include <cstdio>

namespace kvbench {

std::string FormatDouble(double v, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", precision, v);
  return buf;
}

std::string FormatBytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return FormatDouble(v, u == 0 ? 0 : 1) + " " + units[u];
}

std::string FormatCount(double v) {
  const char* suffix = "";
  for (const char* s : {"K", "M", "G"}) {
    if (v < 999.5) break;
    v /= 1000;
    suffix = s;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3g%s", v, suffix);
  return buf;
}

std::string FormatNs(double ns) {
  if (ns < 1e3) return FormatDouble(ns, 0) + "ns";
  if (ns < 1e6) return FormatDouble(ns / 1e3, 2) + "us";
  if (ns < 1e9) return FormatDouble(ns / 1e6, 2) + "ms";
  return FormatDouble(ns / 1e9, 2) + "s";
}

}  // namespace kvbench
