#include "env/arm_atomics.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <string_view>

#include "env/mapped_elf.h"

namespace kvbench {

namespace {

constexpr uint32_t kRet = 0xd65f03c0;  // ret (x30)

bool IsLdrbW16(uint32_t w) { return (w & 0xffc0001fu) == 0x39400010u; }  // ldrb w16, [xN, #i]
bool IsCbzW16(uint32_t w) { return (w & 0xff00001fu) == 0x34000010u; }   // cbz w16, label

// The outline-atomics helpers of libgcc (lse.S) and compiler-rt begin
//   adrp x16, __aarch64_have_lse_atomics; ldrb w16, [x16, ...]; cbz w16, 8f; <LSE insn>; ret
//   8: <LL/SC loop>; ret
// so an LSE instruction after that ldrb and cbz and before a ret is a helper's fast path.
// Stripped libraries keep no symbol for the (hidden) helpers; this shape finds them anyway, and
// ordinary code (`cbz w8, ...; ldaddal ...; ret`) does not match it.
constexpr size_t kHelperLoopWords = 8;  // the LL/SC loop after the ret fits in this many words

}  // namespace

A64Atomic ClassifyA64(uint32_t w) {
  // Load/store exclusive and ordered: size 001000 o2 L o1 Rs o0 Rt2 Rn Rt.
  if ((w & 0x3f000000u) == 0x08000000u) {
    const bool o2 = w & (1u << 23), load = w & (1u << 22), o1 = w & (1u << 21);
    const bool rt2_is_zr = ((w >> 10) & 0x1f) == 0x1f;
    if (!o2 && !o1) return load ? A64Atomic::kLoadExclusive : A64Atomic::kStoreExclusive;
    if (!o2 && o1) {  // 64-bit sizes: LDXP/STXP; 32-bit: CASP (ARMv8.1)
      if (w & (1u << 31)) return load ? A64Atomic::kLoadExclusive : A64Atomic::kStoreExclusive;
      return rt2_is_zr ? A64Atomic::kLse : A64Atomic::kOther;
    }
    if (o2 && o1) return rt2_is_zr ? A64Atomic::kLse : A64Atomic::kOther;  // CAS
    return A64Atomic::kOther;  // LDAR, STLR, LDLAR, STLLR: ordered, not read-modify-write
  }
  // Atomic memory operations (ARMv8.1): size 111 0 00 A R 1 Rs o3 opc 00 Rn Rt.
  if ((w & 0x3f200c00u) == 0x38200000u) {
    const bool o3 = w & (1u << 15);
    const uint32_t opc = (w >> 12) & 7;
    if (!o3) return A64Atomic::kLse;       // LDADD ... LDUMIN (ST* when Rt is zr)
    if (opc == 0) return A64Atomic::kLse;  // SWP
    return A64Atomic::kOther;              // LDAPR (ARMv8.3) and unallocated
  }
  return A64Atomic::kOther;
}

void CountAtomics(const char* text, size_t bytes, AtomicsAudit* audit) {
  const size_t count = bytes / 4;
  const auto word = [text](size_t i) {
    uint32_t w;
    std::memcpy(&w, text + 4 * i, 4);
    return w;
  };
  size_t helper_loop_end = 0;  // load-exclusives before this index belong to a helper
  for (size_t i = 0; i < count; ++i) {
    switch (ClassifyA64(word(i))) {
      case A64Atomic::kLse:
        if (i >= 2 && i + 1 < count && IsLdrbW16(word(i - 2)) && IsCbzW16(word(i - 1)) &&
            word(i + 1) == kRet) {
          ++audit->outline_helpers;
          helper_loop_end = i + 2 + kHelperLoopWords;
        } else {
          ++audit->lse;
        }
        break;
      case A64Atomic::kLoadExclusive:
        if (i >= helper_loop_end) ++audit->ll_sc;
        break;
      default:
        break;
    }
  }
}

std::string AtomicsAudit::Summary() const {
  if (!readable) return "unreadable";
  if (!aarch64) return "not AArch64";
  std::string s;
  if (outline_helpers > 0 || has_lse_flag) {
    s = "outline atomics (" + std::to_string(outline_helpers) +
        " helpers: LSE or LL/SC chosen at run time)";
  }
  const auto add = [&s](const std::string& part) { s += (s.empty() ? "" : " + ") + part; };
  if (lse > 0) add("LSE (" + std::to_string(lse) + " instructions)");
  if (ll_sc > 0) add("LL/SC (" + std::to_string(ll_sc) + " exclusive loops)");
  return s.empty() ? "none (no atomic read-modify-write)" : s;
}

namespace {

bool Section(std::string_view bytes, const Elf64_Ehdr& eh, size_t i, Elf64_Shdr* sh) {
  const size_t off = eh.e_shoff + i * eh.e_shentsize;
  if (off + sizeof(Elf64_Shdr) > bytes.size()) return false;
  std::memcpy(sh, bytes.data() + off, sizeof(*sh));
  return sh->sh_type == SHT_NOBITS || sh->sh_offset + sh->sh_size <= bytes.size();
}

// Whether the symbol table `symtab` (with its string table) names __aarch64_have_lse_atomics.
bool NamesLseFlag(std::string_view bytes, const Elf64_Shdr& symtab, const Elf64_Shdr& strtab) {
  if (symtab.sh_entsize != sizeof(Elf64_Sym)) return false;
  static constexpr char kFlag[] = "__aarch64_have_lse_atomics";
  for (size_t k = 0; k < symtab.sh_size / sizeof(Elf64_Sym); ++k) {
    Elf64_Sym sym;
    std::memcpy(&sym, bytes.data() + symtab.sh_offset + k * sizeof(Elf64_Sym), sizeof(sym));
    if (sym.st_name + sizeof(kFlag) > strtab.sh_size) continue;
    if (std::memcmp(bytes.data() + strtab.sh_offset + sym.st_name, kFlag, sizeof(kFlag)) == 0) {
      return true;
    }
  }
  return false;
}

void ScanElf(std::string_view bytes, AtomicsAudit* audit) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof(eh));
  audit->readable = true;
  audit->aarch64 = eh.e_machine == EM_AARCH64 && bytes[EI_DATA] == ELFDATA2LSB;
  if (!audit->aarch64) return;
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    if (!Section(bytes, eh, i, &sh) || sh.sh_type == SHT_NOBITS) continue;
    if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR)) {
      CountAtomics(bytes.data() + sh.sh_offset, sh.sh_size, audit);
    } else if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
      Elf64_Shdr strtab;
      if (Section(bytes, eh, sh.sh_link, &strtab) && NamesLseFlag(bytes, sh, strtab)) {
        audit->has_lse_flag = true;
      }
    }
  }
}

}  // namespace

AtomicsAudit AuditAtomics(const std::string& path) {
  AtomicsAudit audit;
  const MappedElf file(path);
  if (!file.bytes().empty()) ScanElf(file.bytes(), &audit);
  return audit;
}

std::vector<std::pair<std::string, AtomicsAudit>> AuditLoadedAtomics() {
  std::vector<std::string> paths;
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) paths.emplace_back(self, static_cast<size_t>(n));
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        // The main program has an empty name (taken from /proc/self/exe above); the vDSO has no
        // file.
        if (info->dlpi_name != nullptr && info->dlpi_name[0] == '/') {
          static_cast<std::vector<std::string>*>(out)->push_back(info->dlpi_name);
        }
        return 0;
      },
      &paths);
  std::vector<std::pair<std::string, AtomicsAudit>> out;
  for (const std::string& path : paths) {
    const size_t slash = path.rfind('/');
    out.emplace_back(slash == std::string::npos ? path : path.substr(slash + 1),
                     AuditAtomics(path));
  }
  return out;
}

}  // namespace kvbench
