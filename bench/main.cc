// kvbench_micro: Google Benchmark microbenchmarks of the hot code of a storage engine (crc32c,
// xxHash, lz4, zstd) and the memory bandwidth that bounds them, built with the preset's compiler
// and flags. docs/micro.md describes the
// benchmarks, the flags and how to compare two builds.
//
// main() parses kvbench's own flags (they decide what is registered), registers every benchmark,
// records how this binary was built in the JSON context, then hands over to Google Benchmark.
// --canary runs kvbench's CPU speed canary instead (cli/canary.h) and nothing else.
#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "benchmark_out.h"
#include "cli/canary.h"
#include "cli/flags.h"
#include "common/build_info.h"
#include "common/cpu_affinity.h"
#include "common/layout.h"
#include "crc32c/crc32c.h"
#include "env/arm_atomics.h"
#include "env/host_audit.h"
#include "micro.h"

namespace kvbench {
namespace micro {
namespace {

constexpr int kUsageError = 2;

constexpr char kUsage[] =
    "kvbench_micro: crc32c, xxHash, lz4 and zstd microbenchmarks, and memory/read and\n"
    "memory/copy, the ceilings they run against (docs/micro.md).\n"
    "Benchmarks are named <algorithm>/<variant>/<block bytes>[/cold].\n"
    "crc32c/extend runs the crc32c kernel measured fastest per size class at start, or the one\n"
    "KVBENCH_CRC32C=<kernel> names (the context records which and how).\n"
    "\n"
    "kvbench_micro --canary [--cpu_affinity=N]: time kvbench's CPU speed reference loop on one\n"
    "CPU (about 50 ms, best of its windows; default the CPU it starts on), print one JSON\n"
    "object on one line (as kvbench --canary: docs/cli.md) and run no benchmark.\n"
    "\n"
    "kvbench flags (--flag=value, --flag value, --flag / --noflag for booleans):\n";

constexpr char kGbenchUsage[] =
    "\nCommon Google Benchmark flags: --benchmark_filter=REGEX --benchmark_min_time=SECONDS\n"
    "  --benchmark_repetitions=N --benchmark_out=FILE --benchmark_out_format=json\n"
    "  (all of them below).\n\n";

// The flag table (cli/flags.h), bound to `o` and `block_sizes`.
std::vector<Flag> FlagTable(Options* o, std::string* block_sizes, uint64_t* cold_buffer_mb,
                            std::string* perf_counters, std::string* cpu_affinity) {
  return {
      Flag("compression_ratio", &o->compression_ratio, "0.5",
           "Input compresses to about this fraction of its size; the same value generator as "
           "kvbench --compression_ratio")
          .Range(0, 1)
          .LowOpen(),
      Flag("seed", &o->seed, "0", "Seed of the input bytes, as kvbench --seed"),
      Flag("block_sizes", block_sizes, "256,1024,4096,8192,16384,65536",
           "Block sizes in bytes, 1 to 64 MiB each, comma-separated"),
      Flag("cache_cold", &o->cache_cold, "false",
           "Rotate through a buffer larger than the last-level cache instead of reusing one "
           "cache-hot block; names get a /cold suffix"),
      Flag("cold_buffer_mb", cold_buffer_mb, "0", "Size of that buffer")
          .Range(1, 1 << 20)
          .Or(0, "max(4 x largest cache, 64 MiB)")
          .Unit("MiB"),
      Flag("perf_counters", perf_counters, "auto",
           "perf_event_open counters per iteration as user counters, as kvbench --perf_counters: "
           "auto, off or a list of its events; what cannot be counted is said in the context "
           "(perf_counters)"),
      Flag("cpu_affinity", cpu_affinity, "",
           "Pin the benchmark thread to this one CPU (recorded in the context); empty = unpinned"),
  };
}

[[noreturn]] void UsageError(const std::string& msg) {
  std::fprintf(stderr, "kvbench_micro: %s (see --help)\n", msg.c_str());
  std::exit(kUsageError);
}

std::vector<size_t> ParseBlockSizes(const std::string& list) {
  std::vector<size_t> sizes;
  for (const auto& item : SplitList(list)) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(item.c_str(), &end, 10);
    if (item.empty() || item[0] == '-' || *end != '\0' || v == 0 || v > (64u << 20)) {
      UsageError("--block_sizes takes sizes in bytes, 1 to 64 MiB, separated by commas, got '" +
                 list + "'");
    }
    sizes.push_back(static_cast<size_t>(v));
  }
  return sizes;
}

// --perf_counters: parsed, probed once, and what it counts (or why not) in the context.
void SetupCounters(const std::string& text) {
  PerfPlan plan;
  Status s = ParsePerfCounters(text, &plan);
  if (!s.ok()) UsageError(s.message());
  if (plan.enabled()) ProbePerfCounters(&plan);
  SetPerfPlan(plan);
  benchmark::AddCustomContext("perf_counters", plan.Describe());
  if (!plan.hardware_unavailable.empty()) {
    benchmark::AddCustomContext("perf_counters_unavailable", plan.hardware_unavailable);
  }
  if (!plan.software_unavailable.empty()) {
    benchmark::AddCustomContext("perf_counters_software_unavailable", plan.software_unavailable);
  }
}

// --cpu_affinity: single-threaded benchmarks run on the main thread, pinned here.
void PinBenchmarkThread(const std::string& text) {
  std::vector<int> cpus;
  Status s = ParseCpuAffinity("cpu_affinity", text, &cpus);
  if (s.ok() && cpus.size() > 1) {
    s = Status::InvalidArgument("--cpu_affinity=" + text +
                                ": give one CPU (the benchmark "
                                "thread is one thread)");
  }
  if (!s.ok()) UsageError(s.message());
  if (cpus.empty()) {
    benchmark::AddCustomContext("cpu_affinity", "none");
    return;
  }
  s = PinThisThread(cpus[0]);
  if (!s.ok()) {
    std::fprintf(stderr, "kvbench_micro: %s\n", s.message().c_str());
    std::exit(1);
  }
  benchmark::AddCustomContext("cpu_affinity", std::to_string(cpus[0]));
}

// What the command line asks for: the benchmarks with `options`, or --canary on `cpu_affinity`.
struct CommandLine {
  Options options;
  bool canary = false;
  std::string cpu_affinity;  // --cpu_affinity as given
};

// Takes --canary out of argv, wherever it stands; true when it was there.
bool TakeCanaryFlag(int* argc, char** argv) {
  bool canary = false;
  int n = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strcmp(argv[i], "--canary") == 0) {
      canary = true;
    } else {
      argv[n++] = argv[i];
    }
  }
  *argc = n;
  argv[n] = nullptr;
  return canary;
}

// Consumes kvbench's flags from argv, leaving the rest for Google Benchmark. With --canary they
// are checked as for a run, and nothing is probed or pinned (the canary pins its own thread).
CommandLine ParseFlags(int* argc, char** argv) {
  CommandLine cl;
  cl.canary = TakeCanaryFlag(argc, argv);
  Options& o = cl.options;
  std::string block_sizes;
  uint64_t cold_buffer_mb = 0;
  std::string perf_counters, cpu_affinity;
  std::vector<Flag> table =
      FlagTable(&o, &block_sizes, &cold_buffer_mb, &perf_counters, &cpu_affinity);
  std::string action;
  std::vector<char*> rest;
  Status s = ParseFlags(table, {"help", "h"}, *argc, argv, UnknownFlags::kKeep, &action, &rest);
  if (!s.ok()) UsageError(s.message());
  if (!action.empty()) {
    std::fputs(kUsage, stdout);
    PrintFlags(stdout, table);
    std::fputs(kGbenchUsage, stdout);
    benchmark::PrintDefaultHelp();
    std::exit(0);
  }
  o.block_sizes = ParseBlockSizes(block_sizes);
  cl.cpu_affinity = cpu_affinity;
  if (cl.canary) {
    PerfPlan plan;
    s = ParsePerfCounters(perf_counters, &plan);
    if (!s.ok()) UsageError(s.message());
  } else {
    SetupCounters(perf_counters);
    PinBenchmarkThread(cpu_affinity);
  }
  o.cold_buffer_bytes = static_cast<size_t>(cold_buffer_mb) << 20;
  *argc = 1;
  for (char* arg : rest) argv[(*argc)++] = arg;
  argv[*argc] = nullptr;
  return cl;
}

// The environment audit (env/host_audit.h) as flat "environment.<fact>" keys: Google Benchmark's
// context holds strings only. The noise during the run is not measured here, since the context is
// written before the benchmarks run; real_time against cpu_time per benchmark shows it instead.
void AddEnvironmentContext() {
  const HostAudit audit = AuditHost("");
  for (const auto& f : audit.facts) {
    benchmark::AddCustomContext("environment." + f.name, f.value);
    if (!f.unknown.empty()) benchmark::AddCustomContext("environment.unknown." + f.name, f.unknown);
  }
  for (size_t i = 0; i < audit.warnings.size(); ++i) {
    benchmark::AddCustomContext("environment.warning." + std::to_string(i + 1), audit.warnings[i]);
    std::fprintf(stderr, "kvbench_micro: WARNING: %s\n", audit.warnings[i].c_str());
  }
  benchmark::AddCustomContext("environment.during",
                              "not measured by kvbench_micro: compare real_time with cpu_time per "
                              "benchmark (kvb compare does)");
}

// Where this link put the hot code (common/layout.h, docs/placement.md): the seed, and the offsets
// of the library entry points and crc32c kernels the benchmarks call, so two binaries' placements
// of the same code can be told apart in their JSON.
void AddLayoutContext() {
  benchmark::AddCustomContext("kvbench_layout", LayoutText());
  std::string symbols =
      "LZ4_compress_fast_continue=" +
      CodeOffset(reinterpret_cast<const void*>(&LZ4_compress_fast_continue)) +
      " LZ4_decompress_safe=" + CodeOffset(reinterpret_cast<const void*>(&LZ4_decompress_safe)) +
      " ZSTD_compressCCtx=" + CodeOffset(reinterpret_cast<const void*>(&ZSTD_compressCCtx));
  size_t n = 0;
  const crc32c::Implementation* impls = crc32c::Implementations(&n);
  for (size_t i = 0; i < n; ++i) {
    if (impls[i].extend == nullptr) continue;
    symbols += std::string(" crc32c_") + impls[i].name + "=" +
               CodeOffset(reinterpret_cast<const void*>(impls[i].extend));
  }
  benchmark::AddCustomContext("kvbench_layout_symbols", symbols);
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
  benchmark::AddCustomContext("kvbench_target_cpu", b.target_cpu);
  // Present only under emulation: timings taken there say nothing about real hardware.
  if (*b.emulator) benchmark::AddCustomContext("kvbench_emulator", b.emulator);
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
#if defined(__aarch64__)
  // How this binary and each library it loaded do atomic read-modify-writes (LSE, LL/SC or
  // outline atomics; docs/presets.md).
  for (const auto& [name, audit] : AuditLoadedAtomics()) {
    benchmark::AddCustomContext("atomics_" + name, audit.Summary());
  }
#endif
  AddEnvironmentContext();
  benchmark::AddCustomContext("kvbench_callgrind_marks",
                              kCallgrindMarks ? "yes"
                                              : "no: valgrind/callgrind.h was not found when this "
                                                "build was configured (install valgrind)");
  AddCrc32cContext();
  AddXxhashContext();
  AddLayoutContext();
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
  const CommandLine command_line = ParseFlags(&argc, argv);
  if (command_line.canary) {
    // Google Benchmark's flags are checked as for a run too; then only the canary runs.
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return kUsageError;
    return kvbench::RunCanary("kvbench_micro", command_line.cpu_affinity);
  }
  const Options& options = command_line.options;
  SetOptions(options);
  // crc32c::Extend's choice, made before anything is measured; a KVBENCH_CRC32C that names a
  // kernel this CPU or build cannot run is refused here, as a usage error.
  if (const std::string& error = kvbench::crc32c::CurrentChoice().error; !error.empty()) {
    std::fprintf(stderr, "kvbench_micro: %s\n", error.c_str());
    return kUsageError;
  }
  if (kvbench::GetBuildInfo().assertions) {
    std::fputs(
        "kvbench_micro: WARNING: built with assertions on; numbers are not "
        "representative\n",
        stderr);
  }
  RegisterMemory();
  RegisterCrc32c();
  RegisterXxhash();
  RegisterLz4();
  RegisterZstd();
  AddContext(options);
  BenchmarkOut out(argc, argv);  // before Google Benchmark reads the flag
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return kUsageError;
  const bool ran = benchmark::RunSpecifiedBenchmarks() > 0;
  benchmark::Shutdown();
  if (!out.Finish(ran)) return 1;
  if (!ran) {  // Google Benchmark said "Failed to match any benchmarks" and exits 0 itself
    std::fprintf(stderr,
                 "kvbench_micro: --benchmark_filter=%s matches no benchmark: nothing was run%s "
                 "(--benchmark_list_tests=true alone lists every benchmark)\n",
                 benchmark::GetBenchmarkFilter().c_str(),
                 out.given() ? " and --benchmark_out was left as it was" : "");
    return kUsageError;
  }
  return 0;
}
