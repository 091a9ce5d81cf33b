#include "env/environment.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <sstream>

#include "common/build_info.h"
#include "common/clock.h"
#include "env/arm_atomics.h"
#include "env/elf_audit.h"

namespace kvbench {

namespace {

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string Caches() {
  std::ostringstream out;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string level = ReadFirstLine(dir + "level");
    if (level.empty()) break;
    std::string type = ReadFirstLine(dir + "type");
    const std::string suffix = type == "Data" ? "d" : type == "Instruction" ? "i" : "";
    if (out.tellp() > 0) out << ", ";
    out << "L" << level << suffix << " " << ReadFirstLine(dir + "size");
  }
  return out.str();
}

}  // namespace

Environment Environment::Collect(const LibraryFactsFn& facts, const std::string& db_path) {
  Environment e;
  char buf[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  e.date_utc = buf;
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  e.hostname = host;
  utsname u;
  if (uname(&u) == 0) e.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
  e.cpu_model = HostCpuModel();
  e.cpu_cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  e.cpu_caches = Caches();
  e.memory_bytes = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  e.clock = Clock::Description();
  e.crc32c = crc32c::CurrentChoice();
  e.libraries = LinkedLibraries(facts);
  for (auto& lib : e.libraries) {
    if (lib.path.empty()) continue;
    const ElfFacts facts = InspectElf(lib.path);
    lib.compiler = facts.compiler;
    lib.assertions = facts.imports_assert_fail;
    lib.debug_info = facts.has_debug_info;
  }
#if defined(__aarch64__)
  // LSE, LL/SC or outline atomics: the ARM question of docs/presets.md, for every file loaded.
  e.atomics = AuditAtomics("/proc/self/exe").Summary();
  for (auto& lib : e.libraries) {
    if (!lib.path.empty()) lib.atomics = AuditAtomics(lib.path).Summary();
  }
#endif

  const BuildInfo& b = GetBuildInfo();
  const std::string bt = b.build_type;
  if (bt != "Release" && bt != "RelWithDebInfo") {
    e.warnings.push_back("kvbench was built as '" + bt +
                         "' (not optimised): its own overhead is inflated");
  }
  if (b.assertions) {
    e.warnings.push_back("kvbench was built with assertions enabled (NDEBUG not defined)");
  }
  if (std::string(b.cxx_flags).find("-fsanitize") != std::string::npos) {
    e.warnings.push_back("kvbench was built with sanitizers: timings are not representative");
  }
  if (*b.emulator) {
    e.warnings.push_back(std::string("the CPU is emulated (") + b.emulator +
                         "): timings say nothing about any real machine");
  }
  e.audit = AuditHost(db_path);
  e.noise_start = TakeNoiseSnapshot();
  return e;
}

std::vector<std::string> RunWarnings(const Environment& env, const std::string& engine,
                                     const std::vector<std::string>& engine_build_warnings) {
  std::vector<std::string> warnings = env.warnings;
  warnings.insert(warnings.end(), env.audit.warnings.begin(), env.audit.warnings.end());
  for (const auto& lib : env.libraries) {  // only the engine this run uses
    if (lib.name == engine && lib.assertions) {
      warnings.push_back(lib.name + " (" + lib.path +
                         ") is built with assertions enabled (it calls __assert_fail): every "
                         "operation runs its debug checks, so it is slower than a release build "
                         "of the same version");
    }
  }
  for (const auto& w : engine_build_warnings) warnings.push_back(w);
  return warnings;
}

}  // namespace kvbench
