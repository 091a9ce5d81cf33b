// A profile frame's short name: what kvbench's console line and kvb's tables and flame graphs
// show for a frame of a folded stack. One rule in two languages, this file and
// scripts/kvbtools/core/profiles.py short_name: tests/frame_names.txt holds the cases both must
// give (profile_test and profile_tools_test read it), so they cannot drift apart.
#pragma once

#include <string>

namespace kvbench {

// The frame without its parameter list and template arguments:
// "kvbench::(anonymous namespace)::MemorySession::Get(kvbench::Slice const&, std::string*)" ->
// "kvbench::(anonymous namespace)::MemorySession::Get"; "a::B<int, c<d>>::operator()(int) const"
// -> "a::B<>::operator()". Outside template arguments, "(anonymous namespace)" and the operators
// spelled with '(', '<' or '>' ("operator()", "operator<<", "operator->", ...) stay whole; each
// outermost template argument list becomes "<>"; the first other '(' ends the name (what
// follows, " const" or " [clone .isra.0]", goes with the parameters). Spaces at either end are
// dropped. A frame that would come out empty, or has none of these ("libc.so.6+0x1a2b",
// "do_syscall_64_[k]"), is returned as it is.
std::string ShortFrameName(const std::string& frame);

}  // namespace kvbench
