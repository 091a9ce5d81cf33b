// How AArch64 code does its atomic read-modify-writes, read from its ELF file: with the ARMv8.1
// LSE instructions (CAS, LDADD, SWP, ...), with load/store-exclusive loops (LDAXR/STLXR, the
// ARMv8.0 way), or through "outline atomics", small helpers (__aarch64_cas4_acq, ...) that test
// __aarch64_have_lse_atomics at run time and run either. docs/presets.md explains what each
// means for speed under contention and what -mcpu=native vs -march=armv8-a+crc do to it.
//
// The scan decodes the executable sections' 32-bit instruction words with masks (A64 encodings
// are fixed width, so nothing else is needed) and reads the symbol tables; no objdump at run
// time. It works on any host: an x86 build can audit aarch64 files.
//
// Thread-safety: the functions are pure or read only the named file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kvbench {

// What one A64 instruction word is, as far as atomics are concerned.
enum class A64Atomic {
  kOther,
  kLse,            // CAS, CASP, LDADD/LDCLR/LDEOR/LDSET/LD{S,U}{MAX,MIN} (and their ST* aliases),
                   // SWP, in every size and ordering
  kLoadExclusive,  // LDXR, LDAXR, LDXP, LDAXP (and byte/half forms): the start of an LL/SC loop
  kStoreExclusive  // STXR, STLXR, STXP, STLXP (and byte/half forms)
};

A64Atomic ClassifyA64(uint32_t word);

struct AtomicsAudit {
  bool readable = false;       // an ELF file we could read
  bool aarch64 = false;        // e_machine is EM_AARCH64; nothing below is counted otherwise
  size_t lse = 0;              // LSE instructions outside outline helpers
  size_t ll_sc = 0;            // load-exclusives (one per LL/SC loop) outside outline helpers
  size_t outline_helpers = 0;  // outline-atomics helper bodies found in the code
  bool has_lse_flag = false;   // a __aarch64_have_lse_atomics symbol (defined or imported)

  // One phrase, e.g. "LSE (212 instructions)", "outline atomics (38 helpers: LSE or LL/SC chosen
  // at run time)", "LL/SC (14 exclusive loops)", "none (no atomic read-modify-write)", or
  // "not AArch64".
  std::string Summary() const;
};

// Scans the ELF file at `path` (64-bit, little-endian). Unreadable files give readable=false.
AtomicsAudit AuditAtomics(const std::string& path);

// Adds the instructions of `bytes` bytes of A64 code (one executable section) to *audit.
void CountAtomics(const char* text, size_t bytes, AtomicsAudit* audit);

// This process's executable and every shared object it has loaded, by file name (e.g.
// "kvbench", "librocksdb.so.7.8"), each with its audit, executable first.
std::vector<std::pair<std::string, AtomicsAudit>> AuditLoadedAtomics();

}  // namespace kvbench
