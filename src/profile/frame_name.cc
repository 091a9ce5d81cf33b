#include "profile/frame_name.h"

#include <string_view>

namespace kvbench {

namespace {

// Kept whole outside template arguments. Longest first: "operator<<=" before "operator<<" and
// "operator<".
constexpr std::string_view kWhole[] = {
    "(anonymous namespace)",
    "operator<<=",
    "operator>>=",
    "operator<=>",
    "operator->*",
    "operator()",
    "operator<<",
    "operator>>",
    "operator<=",
    "operator>=",
    "operator->",
    "operator<",
    "operator>",
};

}  // namespace

std::string ShortFrameName(const std::string& frame) {
  const std::string_view f(frame);
  std::string out;
  int depth = 0;
  size_t i = 0;
  while (i < f.size()) {
    std::string_view whole;
    for (std::string_view w : kWhole) {
      if (depth == 0 && f.substr(i, w.size()) == w) {
        whole = w;
        break;
      }
    }
    if (!whole.empty()) {
      out += whole;
      i += whole.size();
      continue;
    }
    const char c = f[i];
    if (c == '<') {
      if (depth++ == 0) out += "<>";
    } else if (c == '>' && depth > 0) {
      --depth;
    } else if (c == '(' && depth == 0 && i > 0) {
      break;  // the parameter list, and " const", " [clone .isra.0]" after it
    } else if (depth == 0) {
      out += c;
    }
    ++i;
  }
  const size_t first = out.find_first_not_of(' ');
  if (first == std::string::npos) return frame;
  return out.substr(first, out.find_last_not_of(' ') - first + 1);
}

}  // namespace kvbench
