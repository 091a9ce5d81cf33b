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
  bool compiled_in;       // false: the library was missing at configure time
  const char* missing;    // when !compiled_in: how to get it
  bool reference;         // memory/null: reference engines, labelled as such in output
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
// Removes the database at `path` (the directory's contents). OK if it does not exist.
Status DestroyDatabase(const std::string& path);
// True if `path` holds files (a database of some engine, or anything else).
bool DatabaseExists(const std::string& path);

// Per-engine entry points, defined in each adapter file.
Status OpenMemoryEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);
Status OpenNullEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);
Status OpenRocksDBEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);
Status OpenWiredTigerEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);
Status OpenLMDBEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);

}  // namespace kvbench
