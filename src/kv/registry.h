// The table of engines kvbench knows, whether or not each was compiled in.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kv/engine.h"

namespace kvbench {

struct EngineInfo {
  const char* name;
  const char* description;
  bool compiled_in;     // false: the library was missing at configure time
  const char* missing;  // when !compiled_in: how to get it
  bool reference;       // memory/null: reference engines, labelled as such in output
  Status (*open)(const EngineOptions& options, std::unique_ptr<Engine>* engine);
};

// Every engine kvbench knows, compiled in or not, in display order.
const std::vector<EngineInfo>& AllEngines();
// nullptr if `name` is not a known engine.
const EngineInfo* FindEngine(const std::string& name);
// Opens `name` with `options`. InvalidArgument for an unknown engine, NotSupported for one that
// was not compiled in; otherwise the engine's own Status.
Status OpenEngine(const std::string& name, const EngineOptions& options,
                  std::unique_ptr<Engine>* engine);
// Every database directory kvbench creates holds this marker, naming the engine. kvbench only
// ever empties a directory that is empty or carries the marker, so a mistyped --db cannot
// delete someone's files.
constexpr const char* kDatabaseMarker = "KVBENCH-DATABASE";

// Empties `path` (creating it if missing) and writes the marker for `engine`. Refuses a path that
// is not a directory, or a non-empty directory without the marker.
Status PrepareNewDatabase(const std::string& path, const std::string& engine);
// OK if `path` holds a kvbench database written by `engine`; otherwise says what is there.
Status CheckExistingDatabase(const std::string& path, const std::string& engine);

// What an engine's linked library says about itself without opening a database, for the build
// audit: its version, and notes on its build (rocksdb: whether it takes the hardware crc32c path,
// "crc32c: Supported on x86"). Empty for a name that is not a compiled-in engine.
struct EngineLibraryFacts {
  std::string version;
  std::string notes;
};
EngineLibraryFacts EngineLibrary(const std::string& name);

// Per-engine entry points, defined in each adapter file.
Status OpenMemoryEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);
Status OpenNullEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);
Status OpenRocksDBEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);
EngineLibraryFacts RocksDBLibrary();
Status OpenWiredTigerEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);
EngineLibraryFacts WiredTigerLibrary();
Status OpenLMDBEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);
EngineLibraryFacts LMDBLibrary();

}  // namespace kvbench
