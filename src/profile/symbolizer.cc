#include "profile/symbolizer.h"

#include <cxxabi.h>
#include <elf.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include "env/mapped_elf.h"

namespace kvbench {

namespace {

// How far below an address Find looks for a symbol that covers it (.symtab and .dynsym list
// many symbols twice, sized and unsized).
constexpr uint64_t kCoverReach = 64ull * 1024;

// Above this, an address is the kernel's (x86-64 and AArch64 alike).
constexpr uint64_t kKernelStart = 0xffff000000000000ull;

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// ';' separates frames in a folded stack; no C++ name needs it.
std::string Clean(std::string name) {
  std::replace(name.begin(), name.end(), ';', ':');
  return name;
}

}  // namespace

std::string Demangle(const char* mangled) {
  int status = 0;
  char* out = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return mangled;
  std::string name(out);
  std::free(out);
  return name;
}

// One file's function symbols (.symtab and .dynsym), by address, and its loadable segments,
// which turn a file offset into the address the symbols use.
struct Symbolizer::ElfSymbols {
  struct Symbol {
    uint64_t value, size;
    std::string_view name;  // in `file`
  };
  struct Segment {
    uint64_t offset, size, vaddr;
  };
  explicit ElfSymbols(const std::string& path) : file(path) {
    std::string build_id;
    Load(file.bytes(), &build_id, /*load_segments=*/true);
    // Debian's -dbg/-dbgsym packages: the .symtab a stripped library lost (libc6-dbg's
    // __memcmp_avx2_movbe), in /usr/lib/debug/.build-id/ab/cdef....debug.
    if (build_id.size() > 2) {
      debug = std::make_unique<MappedElf>("/usr/lib/debug/.build-id/" + build_id.substr(0, 2) +
                                          "/" + build_id.substr(2) + ".debug");
      std::string unused;
      Load(debug->bytes(), &unused, /*load_segments=*/false);
    }
    std::sort(symbols.begin(), symbols.end(),
              [](const Symbol& a, const Symbol& b) { return a.value < b.value; });
  }

  void Load(std::string_view b, std::string* build_id, bool load_segments);
  void LoadTable(std::string_view b, const Elf64_Shdr& table, const Elf64_Shdr& strings);
  // The file's own address for file offset `offset`; false when no segment holds it.
  bool Vaddr(uint64_t offset, uint64_t* vaddr) const;
  const Symbol* Find(uint64_t vaddr) const;

  MappedElf file;
  std::unique_ptr<MappedElf> debug;  // its separate debug file, if installed
  std::vector<Symbol> symbols;
  std::vector<Segment> segments;
};

namespace {

// The hex GNU build id in the note at `at` (a PT_NOTE segment's bytes), or "".
std::string BuildId(std::string_view b, size_t at, size_t size) {
  for (size_t end = std::min(b.size(), at + size); at + sizeof(Elf64_Nhdr) <= end;) {
    Elf64_Nhdr nh;
    std::memcpy(&nh, b.data() + at, sizeof(nh));
    const size_t name = at + sizeof(nh), desc = name + ((nh.n_namesz + 3) & ~3u);
    if (desc + nh.n_descsz > end) break;
    if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && b.substr(name, 3) == "GNU") {
      std::string hex;
      char buf[3];
      for (size_t k = 0; k < nh.n_descsz; ++k) {
        std::snprintf(buf, sizeof(buf), "%02x", static_cast<unsigned char>(b[desc + k]));
        hex += buf;
      }
      return hex;
    }
    at = desc + ((nh.n_descsz + 3) & ~3u);
  }
  return "";
}

}  // namespace

void Symbolizer::ElfSymbols::Load(std::string_view b, std::string* build_id, bool load_segments) {
  if (b.empty()) return;
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof(eh));
  for (int i = 0; i < eh.e_phnum && load_segments; ++i) {
    Elf64_Phdr ph;
    const size_t off = eh.e_phoff + static_cast<size_t>(i) * eh.e_phentsize;
    if (off + sizeof(ph) > b.size()) break;
    std::memcpy(&ph, b.data() + off, sizeof(ph));
    if (ph.p_type == PT_LOAD) segments.push_back({ph.p_offset, ph.p_filesz, ph.p_vaddr});
    if (ph.p_type == PT_NOTE && build_id->empty()) *build_id = BuildId(b, ph.p_offset, ph.p_filesz);
  }
  std::vector<Elf64_Shdr> sections;
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    const size_t off = eh.e_shoff + static_cast<size_t>(i) * eh.e_shentsize;
    if (off + sizeof(sh) > b.size()) break;
    std::memcpy(&sh, b.data() + off, sizeof(sh));
    sections.push_back(sh);
  }
  for (const auto& sh : sections) {
    if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) && sh.sh_link < sections.size()) {
      LoadTable(b, sh, sections[sh.sh_link]);
    }
  }
}

void Symbolizer::ElfSymbols::LoadTable(std::string_view b, const Elf64_Shdr& table,
                                       const Elf64_Shdr& strings) {
  if (table.sh_entsize != sizeof(Elf64_Sym) || table.sh_offset + table.sh_size > b.size() ||
      strings.sh_offset + strings.sh_size > b.size()) {
    return;
  }
  for (size_t k = 0; k < table.sh_size / sizeof(Elf64_Sym); ++k) {
    Elf64_Sym sym;
    std::memcpy(&sym, b.data() + table.sh_offset + k * sizeof(Elf64_Sym), sizeof(sym));
    const int type = ELF64_ST_TYPE(sym.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
        sym.st_value == 0 || sym.st_name >= strings.sh_size) {
      continue;
    }
    const char* name = b.data() + strings.sh_offset + sym.st_name;
    symbols.push_back({sym.st_value, sym.st_size,
                       std::string_view(name, strnlen(name, strings.sh_size - sym.st_name))});
  }
}

bool Symbolizer::ElfSymbols::Vaddr(uint64_t offset, uint64_t* vaddr) const {
  for (const auto& s : segments) {
    if (offset >= s.offset && offset < s.offset + s.size) {
      *vaddr = offset - s.offset + s.vaddr;
      return true;
    }
  }
  return false;
}

const Symbolizer::ElfSymbols::Symbol* Symbolizer::ElfSymbols::Find(uint64_t vaddr) const {
  auto it = std::upper_bound(symbols.begin(), symbols.end(), vaddr,
                             [](uint64_t v, const Symbol& s) { return v < s.value; });
  // The nearest symbol at or below; .symtab and .dynsym both list many: any sized one covering
  // the address wins over an unsized one just below it.
  while (it != symbols.begin()) {
    --it;
    if (it->size > 0 && vaddr < it->value + it->size) return &*it;
    if (it->size == 0) return &*it;
    if (it->value + kCoverReach < vaddr) break;  // far below: not a cover
  }
  return nullptr;
}

Symbolizer::Symbolizer() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode;
    std::getline(in >> std::ws, path);
    if (perms.size() < 3 || perms[2] != 'x') continue;
    const size_t dash = range.find('-');
    if (dash == std::string::npos) continue;
    mappings_.push_back({std::strtoull(range.c_str(), nullptr, 16),
                         std::strtoull(range.c_str() + dash + 1, nullptr, 16),
                         std::strtoull(offset.c_str(), nullptr, 16), path});
  }
  std::sort(mappings_.begin(), mappings_.end(),
            [](const Mapping& a, const Mapping& b) { return a.start < b.start; });
}

Symbolizer::~Symbolizer() = default;

const Symbolizer::ElfSymbols& Symbolizer::SymbolsOf(const std::string& path) {
  auto& slot = files_[path];
  if (!slot) slot = std::make_unique<ElfSymbols>(path);
  return *slot;
}

const std::string& Symbolizer::Name(uint64_t address, bool return_address) {
  const uint64_t a = return_address && address > 0 ? address - 1 : address;
  auto it = names_.find(a);
  if (it != names_.end()) return it->second;
  return names_.emplace(a, Clean(a >= kKernelStart ? ResolveKernel(a) : Resolve(a))).first->second;
}

std::string Symbolizer::Resolve(uint64_t a) {
  auto m = std::upper_bound(mappings_.begin(), mappings_.end(), a,
                            [](uint64_t v, const Mapping& x) { return v < x.start; });
  if (m == mappings_.begin() || a >= (m - 1)->end) {
    ++unresolved_;
    return "[unknown]";
  }
  const Mapping& map = *(m - 1);
  const uint64_t offset = a - map.start + map.offset;
  if (map.path.empty() || map.path[0] != '/') {  // [vdso], anonymous (JIT) code
    ++unresolved_;
    return (map.path.empty() ? std::string("[anon]") : map.path) + "+" + Hex(a - map.start);
  }
  const ElfSymbols& elf = SymbolsOf(map.path);
  uint64_t vaddr = offset;
  const bool in_segment = elf.Vaddr(offset, &vaddr);
  const ElfSymbols::Symbol* s = in_segment ? elf.Find(vaddr) : nullptr;
  if (s == nullptr) {
    ++unresolved_;
    return BaseName(map.path) + "+" + Hex(vaddr);
  }
  return Demangle(std::string(s->name).c_str());
}

std::string Symbolizer::ResolveKernel(uint64_t a) {
  if (!kernel_loaded_) {
    kernel_loaded_ = true;
    std::ifstream in("/proc/kallsyms");
    std::string addr, type, name;
    std::string rest;
    while (in >> addr >> type >> name) {
      std::getline(in, rest);  // "[module]", if any
      if (type != "t" && type != "T") continue;
      const uint64_t v = std::strtoull(addr.c_str(), nullptr, 16);
      if (v != 0) kernel_.emplace_back(v, name);
    }
    std::sort(kernel_.begin(), kernel_.end());
  }
  auto it = std::upper_bound(kernel_.begin(), kernel_.end(), a,
                             [](uint64_t v, const auto& k) { return v < k.first; });
  if (it == kernel_.begin()) {
    ++unresolved_;
    return "[kernel]_[k]";  // kallsyms hides its addresses (kptr_restrict) from this user
  }
  return (it - 1)->second + "_[k]";
}

}  // namespace kvbench
