#include "env/elf_audit.h"

#include <elf.h>

#include <cstring>
#include <string_view>

#include "env/mapped_elf.h"

namespace kvbench {

ElfFacts InspectElf(const std::string& path) {
  ElfFacts f;
  const MappedElf file(path);
  const std::string_view bytes = file.bytes();
  if (bytes.empty()) return f;
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof(eh));
  auto section = [&](int i, Elf64_Shdr* sh) {
    const size_t off = eh.e_shoff + static_cast<size_t>(i) * eh.e_shentsize;
    if (off + sizeof(Elf64_Shdr) > bytes.size()) return false;
    std::memcpy(sh, bytes.data() + off, sizeof(*sh));
    return sh->sh_type == SHT_NOBITS || sh->sh_offset + sh->sh_size <= bytes.size();
  };
  Elf64_Shdr names;
  if (eh.e_shstrndx == SHN_UNDEF || !section(eh.e_shstrndx, &names)) return f;
  f.readable = true;
  Elf64_Shdr dynsym{}, dynstr{};
  bool have_dynsym = false;
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    if (!section(i, &sh) || sh.sh_name >= names.sh_size) continue;
    const std::string name(
        bytes.data() + names.sh_offset + sh.sh_name,
        strnlen(bytes.data() + names.sh_offset + sh.sh_name, names.sh_size - sh.sh_name));
    if (name == ".comment") {
      const char* p = bytes.data() + sh.sh_offset;
      for (size_t k = 0; k < sh.sh_size;) {
        const std::string s(p + k, strnlen(p + k, sh.sh_size - k));
        if (!s.empty()) f.compiler += (f.compiler.empty() ? "" : "; ") + s;
        k += s.size() + 1;
      }
    } else if (name == ".debug_info") {
      f.has_debug_info = true;
    } else if (sh.sh_type == SHT_DYNSYM) {
      dynsym = sh;
      have_dynsym = section(static_cast<int>(sh.sh_link), &dynstr);
    }
  }
  if (have_dynsym && dynsym.sh_entsize == sizeof(Elf64_Sym)) {
    for (size_t k = 0; k < dynsym.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, bytes.data() + dynsym.sh_offset + k * sizeof(Elf64_Sym), sizeof(sym));
      if (sym.st_shndx != SHN_UNDEF || sym.st_name >= dynstr.sh_size) continue;
      if (std::strcmp(bytes.data() + dynstr.sh_offset + sym.st_name, "__assert_fail") == 0) {
        f.imports_assert_fail = true;
        break;
      }
    }
  }
  return f;
}

}  // namespace kvbench
