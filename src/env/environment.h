// The context of a run: host, build, libraries, and warnings about anything that makes the
// numbers less trustworthy. Printed before the results and recorded in the JSON. Every such
// warning is decided here (env/), from facts; the reporters only print them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/build_info.h"
#include "crc32c/crc32c.h"
#include "env/host_audit.h"
#include "env/noise.h"

namespace kvbench {

struct LibraryInfo {
  std::string name;     // "lz4", "zstd", "rocksdb", ...
  std::string version;  // as the loaded library reports it, or "" when it cannot say
  std::string path;     // the shared object actually loaded, or "" if linked statically
  // From the loaded file's ELF (elf_audit.h): how it was built, as far as the file tells.
  std::string compiler;     // its .comment section, e.g. "GCC: (Debian 12.2.0-14) 12.2.0"
  bool assertions = false;  // imports __assert_fail: assert() compiled in
  bool debug_info = false;  // has .debug_info
  // Where it came from, as configured (build_info.h, LibraryOrigin): "system", "prefix" or
  // "source", and the details that apply ("" otherwise).
  std::string origin;
  std::string linked_file;     // the file on the link line (a static .a for source builds)
  std::string package;         // system: Debian package and version
  std::string prefix;          // prefix, source: the installed tree
  std::string source_dir;      // source: the tree it was built from
  std::string build_compiler;  // source: compiler id and version
  std::string build_flags;     // source: its compile flags
  std::string notes;           // what the library itself says about its build (rocksdb: crc32c)
  // AArch64 only (arm_atomics.h): how its atomic read-modify-writes compile, e.g. "outline
  // atomics (38 helpers: ...)"; "" on other targets. A static library is part of kvbench's own
  // executable: see Environment::atomics.
  std::string atomics;
};

// One line describing where `lib` came from and how it was built, for the console header and
// --version: "source /src/lz4 (GNU 12.2.0: -O2 ...; static)", "system liblz4-1:amd64 1.9.4-1 ...".
std::string DescribeLibrary(const LibraryInfo& lib);

// What a library says of itself, by name (an engine adapter's EngineLibrary); env/ cannot ask the
// engines itself, since it depends on common/ only.
using LibraryFactsFn = std::function<LibraryFacts(const std::string& name)>;

struct Environment {
  std::string date_utc;  // ISO 8601
  std::string hostname;
  std::string kernel;  // uname -srm
  std::string cpu_model;
  int cpu_cores = 0;       // online logical CPUs
  std::string cpu_caches;  // "L1d 32K, L2 1M, L3 32M"
  uint64_t memory_bytes = 0;
  std::string clock;  // Clock::Description()
  std::vector<LibraryInfo> libraries;
  std::string atomics;  // AArch64 only: kvbench's own executable (arm_atomics.h); "" elsewhere
  // crc32c::Extend's kernel per size class on this host and how it was chosen (measured rates,
  // or KVBENCH_CRC32C): kvbench checksums nothing itself, but kvbench_micro's crc32c/extend and
  // any comparison of hosts read it. `error` set: KVBENCH_CRC32C was refused (main() exits).
  crc32c::Choice crc32c;
  std::vector<std::string> warnings;  // about kvbench's own build (see RunWarnings)
  // The environment audit (host_audit.h), of the host and of the filesystem holding the database;
  // its warnings are among RunWarnings'.
  HostAudit audit;
  NoiseSnapshot noise_start;  // taken by Collect, compared with the end of the run (noise.h)

  // `db_path`: the database directory ("" for none), whose filesystem the audit records.
  static Environment Collect(const LibraryFactsFn& facts, const std::string& db_path);
};

// Every library this build links (the manifest's order), with its runtime version, the file it
// was loaded from and its configured origin (libraries.cc). The ELF audit is Collect's.
std::vector<LibraryInfo> LinkedLibraries(const LibraryFactsFn& facts);

// The warnings of a run on `engine`: kvbench's own build (env.warnings), the engine's library
// built with assertions, and what the engine says of its own build (Engine::BuildWarnings).
std::vector<std::string> RunWarnings(const Environment& env, const std::string& engine,
                                     const std::vector<std::string>& engine_build_warnings);

}  // namespace kvbench
