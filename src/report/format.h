// Number formatting shared by the reporters.
#pragma once

#include <cstdint>
#include <string>

namespace kvbench {

// printf("%.*f"): FormatDouble(2.5, 1) == "2.5".
std::string FormatDouble(double v, int precision = 3);
// "4.0 KiB", "74.4 MiB" (powers of 1024).
std::string FormatBytes(uint64_t bytes);
// Three significant digits, with K, M or G past a thousand: "0.002", "1.26", "12.3K".
std::string FormatCount(double v);
// "290ns", "4.14us", "20.74ms", "1.20s".
std::string FormatNs(double ns);

}  // namespace kvbench
