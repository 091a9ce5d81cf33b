// Names for the addresses of this process's call chains: the mapping that holds an address
// (/proc/self/maps), then the function symbol covering it in that file's ELF .symtab or .dynsym
// (so kvbench's own static functions resolve, and the engines' exported ones from a stripped
// Debian library), demangled (abi::__cxa_demangle); kernel addresses from /proc/kallsyms. What no
// symbol covers is named "file+0xADDR", the address as the file's own (addr2line's), so it can
// still be looked up. Built after the measured loop: it reads files and allocates freely.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace kvbench {

class Symbolizer {
 public:
  // Reads /proc/self/maps now: call it after the libraries the samples ran in are loaded.
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // The frame's name as a folded stack spells it: the function ("kvbench::(anonymous
  // namespace)::MemorySession::Get(...)"), "name_[k]" for the kernel, "libfoo.so+0x1a2b" when
  // unresolved. `return_address`: the address is where a call returns to (every frame but the
  // innermost), so the call instruction before it is looked up. Never contains ';'.
  const std::string& Name(uint64_t address, bool return_address);

  // Frames named "file+0x..." or "[unknown]" so far (for the record).
  uint64_t unresolved() const { return unresolved_; }

 private:
  struct Mapping {
    uint64_t start, end, offset;
    std::string path;
  };
  struct ElfSymbols;

  std::string Resolve(uint64_t address);
  std::string ResolveKernel(uint64_t address);
  const ElfSymbols& SymbolsOf(const std::string& path);

  std::vector<Mapping> mappings_;  // executable ones, by start
  std::unordered_map<std::string, std::unique_ptr<ElfSymbols>> files_;
  std::vector<std::pair<uint64_t, std::string>> kernel_;  // /proc/kallsyms text, by address
  bool kernel_loaded_ = false;
  std::unordered_map<uint64_t, std::string> names_;
  uint64_t unresolved_ = 0;
};

// `mangled` demangled ("_ZN7kvbench3FooEv" -> "kvbench::Foo()"), or as it is when it is not a
// C++ name.
std::string Demangle(const char* mangled);

}  // namespace kvbench
