#include <link.h>
#include <lz4.h>
#include <xxhash.h>
#include <zstd.h>

#include <cstring>
#include <string>

#include "runner/environment.h"

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

}  // namespace

std::vector<LibraryInfo> LinkedLibraries() {
  auto lib = [](std::string name, std::string version) {
    LibraryInfo l;
    l.path = LoadedPath(("lib" + name + ".so").c_str());
    l.name = std::move(name);
    l.version = std::move(version);
    return l;
  };
  const unsigned xxh = XXH_versionNumber();
  std::vector<LibraryInfo> libs = {
      lib("lz4", LZ4_versionString()),
      lib("zstd", ZSTD_versionString()),
      lib("xxhash", std::to_string(xxh / 10000) + "." + std::to_string(xxh / 100 % 100) + "." +
                        std::to_string(xxh % 100)),
  };
  // Engine libraries: their versions come from the engine adapters; here, which file was loaded.
  for (const char* name : {"rocksdb", "wiredtiger", "lmdb", "snappy"}) {
    LibraryInfo l = lib(name, "");
    if (!l.path.empty()) libs.push_back(std::move(l));
  }
  return libs;
}

}  // namespace kvbench
