// kvbench_micro: Google Benchmark microbenchmarks of the hot code of a storage engine (crc32c,
// xxHash, lz4, zstd), built with the preset's compiler and flags. docs/micro.md describes the
// benchmarks, the flags and how to compare two builds.
//
// main() parses kvbench's own flags (they decide what is registered), registers every benchmark,
// records how this binary was built in the JSON context, then hands over to Google Benchmark.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/build_info.h"
#include "micro.h"

namespace kvbench {
namespace micro {
namespace {

constexpr char kUsage[] =
    "kvbench_micro: crc32c, xxHash, lz4 and zstd microbenchmarks (docs/micro.md).\n"
    "Benchmarks are named <algorithm>/<variant>/<block bytes>[/cold].\n"
    "\n"
    "kvbench flags:\n"
    "  --compression_ratio=F   input compresses to about F of its size, 0 < F <= 1 (0.5);\n"
    "                          the same value generator as kvbench --compression_ratio\n"
    "  --seed=N                seed of the input bytes, as kvbench --seed (0)\n"
    "  --block_sizes=A,B,...   block sizes in bytes (256,1024,4096,8192,16384,65536)\n"
    "  --cache_cold[=true]     rotate through a buffer larger than the last-level cache instead\n"
    "                          of reusing one cache-hot block; names get a /cold suffix\n"
    "  --cold_buffer_mb=N      size of that buffer (default: max(4 x largest cache, 64 MiB))\n"
    "\n"
    "Common Google Benchmark flags: --benchmark_filter=REGEX --benchmark_min_time=SECONDS\n"
    "  --benchmark_repetitions=N --benchmark_out=FILE --benchmark_out_format=json\n"
    "  (all of them below).\n";

void PrintHelp() {
  std::fputs(kUsage, stdout);
  std::fputs("\n", stdout);
  benchmark::PrintDefaultHelp();
}

[[noreturn]] void Fail(const std::string& msg) {
  std::fprintf(stderr, "kvbench_micro: %s (see --help)\n", msg.c_str());
  std::exit(1);
}

bool ParseU64(const std::string& s, uint64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || s[0] == '-') return false;
  *out = v;
  return true;
}

// Consumes kvbench's flags from argv, leaving the rest for Google Benchmark.
Options ParseFlags(int* argc, char** argv) {
  Options o;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const bool has_value = eq != std::string::npos;
    const std::string value = has_value ? arg.substr(eq + 1) : "";
    uint64_t u = 0;
    if (name == "--help" || name == "-h") {
      PrintHelp();
      std::exit(0);
    } else if (name == "--compression_ratio") {
      char* end = nullptr;
      o.compression_ratio = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(o.compression_ratio > 0 && o.compression_ratio <= 1)) {
        Fail("--compression_ratio must be a number in (0, 1], got '" + value + "'");
      }
    } else if (name == "--seed") {
      if (!ParseU64(value, &o.seed)) Fail("--seed must be an unsigned integer");
    } else if (name == "--cache_cold") {
      if (!has_value || value == "true" || value == "1") {
        o.cache_cold = true;
      } else if (value == "false" || value == "0") {
        o.cache_cold = false;
      } else {
        Fail("--cache_cold takes true or false");
      }
    } else if (name == "--cold_buffer_mb") {
      if (!ParseU64(value, &u) || u == 0 || u > (1u << 20)) {
        Fail("--cold_buffer_mb must be a positive number of MiB");
      }
      o.cold_buffer_bytes = static_cast<size_t>(u) << 20;
    } else if (name == "--block_sizes") {
      o.block_sizes.clear();
      size_t start = 0;
      while (start <= value.size()) {
        const size_t comma = std::min(value.find(',', start), value.size());
        if (!ParseU64(value.substr(start, comma - start), &u) || u == 0 || u > (64u << 20)) {
          Fail("--block_sizes takes sizes in bytes, 1 to 64 MiB, separated by commas");
        }
        o.block_sizes.push_back(static_cast<size_t>(u));
        start = comma + 1;
      }
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  argv[kept] = nullptr;
  return o;
}

void AddContext(const Options& o) {
  const BuildInfo& b = GetBuildInfo();
  benchmark::AddCustomContext("kvbench_version", b.kvbench_version);
  benchmark::AddCustomContext("kvbench_git_revision", b.git_revision);
  benchmark::AddCustomContext("kvbench_preset", b.preset);
  benchmark::AddCustomContext("kvbench_build_type", b.build_type);
  benchmark::AddCustomContext("kvbench_compiler",
                              std::string(b.compiler_id) + " " + b.compiler_version);
  benchmark::AddCustomContext("kvbench_cxx_flags", b.cxx_flags);
  benchmark::AddCustomContext("kvbench_arch_flags", *b.arch_flags ? b.arch_flags : "(default)");
  benchmark::AddCustomContext("kvbench_target_arch", b.target_arch);
  benchmark::AddCustomContext("kvbench_assertions", b.assertions ? "on" : "off");
  benchmark::AddCustomContext("kvbench_micro_code_alignment",
                              "benchmark functions and crc32c kernels start on 64-byte boundaries");
  // Where each library came from (docs/presets.md): "<name>_origin" = "system <Debian package>",
  // "prefix <dir>" or "source <dir> (<compiler>: <flags>)".
  for (const auto& l : LibraryOrigins()) {
    std::string v = l.origin;
    if (*l.package) v += std::string(" ") + l.package;
    if (v == "prefix") v += std::string(" ") + l.prefix;
    if (*l.source_dir) {
      v += std::string(" ") + l.source_dir + " " + l.version + " (" + l.compiler + ": " + l.flags +
           ")";
    }
    benchmark::AddCustomContext(std::string(l.name) + "_origin", v);
  }
  AddCrc32cContext();
  AddXxhashContext();
  AddLz4Context();
  AddZstdContext();
  char ratio[32];
  std::snprintf(ratio, sizeof(ratio), "%g", o.compression_ratio);
  benchmark::AddCustomContext("input", std::string("kvbench value generator, seed ") +
                                           std::to_string(o.seed) + ", compression_ratio " + ratio);
  benchmark::AddCustomContext(
      "cache_mode", o.cache_cold ? "cold: rotates through a " +
                                       std::to_string(ColdBufferBytes() >> 20) + " MiB buffer"
                                 : std::string("hot: one block, reused"));
}

}  // namespace
}  // namespace micro
}  // namespace kvbench

int main(int argc, char** argv) {
  using namespace kvbench::micro;
  const Options options = ParseFlags(&argc, argv);
  SetOptions(options);
  if (kvbench::GetBuildInfo().assertions) {
    std::fputs(
        "kvbench_micro: WARNING: built with assertions on; numbers are not "
        "representative\n",
        stderr);
  }
  RegisterCrc32c();
  RegisterXxhash();
  RegisterLz4();
  RegisterZstd();
  AddContext(options);
  benchmark::Initialize(&argc, argv, PrintHelp);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
