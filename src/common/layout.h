// The code placement a binary was linked with (cmake/KvbenchLayout.cmake, docs/placement.md).
//
// Moving a hot function changes its speed even when its instructions are identical, so a binary
// is one sample of placement. Each link of kvbench or kvbench_micro compiles in a tiny generated
// object that registers its seed here before main; the JSON of a run reports it, with the
// addresses of the hot functions that benchmark chose to name.
#ifndef KVBENCH_COMMON_LAYOUT_H_
#define KVBENCH_COMMON_LAYOUT_H_

#include <cstdint>
#include <string>

namespace kvbench {

struct Layout {
  long seed;        // lld --shuffle-sections seed; 0 = lld's input order; -1 = toolchain default
  const char* how;  // e.g. "lld --shuffle-sections=*=3"
};

// The binary's layout; {-1, "not recorded"} when no layout object was linked (the tests).
const Layout& GetLayout();

// Called once, by the generated object, during static initialisation. Returns true.
bool RegisterLayout(long seed, const char* how);

// Where `fn` lies in the binary, as an offset from its first byte (the address `nm` shows for a
// PIE), so two binaries' placements compare without the load address. "0x3f150".
std::string CodeOffset(const void* fn);

// "seed 3 (lld --shuffle-sections=*=3)", "toolchain default".
std::string LayoutText();

}  // namespace kvbench

#endif  // KVBENCH_COMMON_LAYOUT_H_
