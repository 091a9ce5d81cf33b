#include <link.h>
#include <lz4.h>
#include <xxhash.h>
#include <zstd.h>

#include <cstring>
#include <string>

#include "common/build_info.h"
#include "env/environment.h"

namespace kvbench {

namespace {

// Which loaded shared object provides `soname_prefix` ("librocksdb.so"), or "".
std::string LoadedPath(const char* soname_prefix) {
  struct Query {
    const char* prefix;
    std::string path;
  } q{soname_prefix, ""};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* q = static_cast<Query*>(data);
        const char* name = info->dlpi_name;
        if (name == nullptr || *name == '\0') return 0;
        const char* base = std::strrchr(name, '/');
        base = base ? base + 1 : name;
        if (std::strncmp(base, q->prefix, std::strlen(q->prefix)) == 0) {
          q->path = name;
          return 1;
        }
        return 0;
      },
      &q);
  return q.path;
}

// The runtime version of a library kvbench itself calls (the codecs), or "".
std::string RuntimeVersion(const std::string& name) {
  const unsigned xxh = XXH_versionNumber();
  if (name == "lz4") return LZ4_versionString();
  if (name == "zstd") return ZSTD_versionString();
  if (name == "xxhash") {
    return std::to_string(xxh / 10000) + "." + std::to_string(xxh / 100 % 100) + "." +
           std::to_string(xxh % 100);
  }
  return "";
}

}  // namespace

std::vector<LibraryInfo> LinkedLibraries(const LibraryFactsFn& facts) {
  // Every library this build links, in the manifest's order (cmake/deps.json): a shared one with
  // the file loaded, a static one (a source build) with its configured origin. An engine's
  // version comes from its adapter.
  std::vector<LibraryInfo> libs;
  for (const auto& o : LibraryOrigins()) {
    LibraryInfo l;
    l.name = o.name;
    l.path = LoadedPath(("lib" + l.name + ".so").c_str());
    l.version = RuntimeVersion(l.name);
    l.origin = o.origin;
    l.linked_file = o.linked_file;
    l.package = o.package;
    l.prefix = o.prefix;
    l.source_dir = o.source_dir;
    l.build_compiler = o.compiler;
    l.build_flags = o.flags;
    if (l.version.empty()) l.version = o.version;
    const LibraryFacts own = facts(l.name);
    if (l.version.empty()) l.version = own.version;
    l.notes = own.notes;
    // A static library (a source build) is in the executable; a shared copy of the same library
    // may still be loaded as another library's dependency, but it is not the one kvbench calls.
    if (l.linked_file.size() > 2 && l.linked_file.compare(l.linked_file.size() - 2, 2, ".a") == 0 &&
        !l.path.empty()) {
      l.notes += std::string(l.notes.empty() ? "" : "; ") + "a shared copy is also loaded, as " +
                 "another library's dependency: " + l.path;
      l.path.clear();
    }
    libs.push_back(std::move(l));
  }
  return libs;
}

std::string DescribeLibrary(const LibraryInfo& l) {
  std::string s = l.origin.empty() ? "unknown origin" : l.origin;
  if (l.origin == "system") {
    s += " " + (l.package.empty() ? std::string("(no Debian package owns it)") : l.package);
  } else if (l.origin == "prefix") {
    s += " " + l.prefix;
  } else if (l.origin == "source") {
    s += " " + l.source_dir + " (" + l.build_compiler + ": " + l.build_flags + ")";
  }
  const bool is_static = l.path.empty() && l.linked_file.size() > 2 &&
                         l.linked_file.compare(l.linked_file.size() - 2, 2, ".a") == 0;
  if (!l.path.empty()) {
    s += " " + l.path;
  } else if (is_static) {
    s += " static " + l.linked_file;
  }
  if (l.assertions) s += " [assertions]";
  if (!l.compiler.empty()) s += "  " + l.compiler;
  if (!l.notes.empty()) s += "  [" + l.notes + "]";
  return s;
}

}  // namespace kvbench
