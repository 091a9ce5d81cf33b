// The table of engines kvbench knows, whether or not each was compiled in: the storage engines of
// the manifest (cmake/deps.json, expanded from the generated kv/engines.def) and the reference
// engines memory and null. Each adapter defines its own piece of the table.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/build_info.h"
#include "kv/engine.h"
#include "kv/memory_budget.h"

namespace kvbench {

// What each adapter file provides, defined there with KVBENCH_ENGINE_ADAPTER(<name>) = {...};
// for every engine the manifest (cmake/deps.json) lists and CMake found.
struct EngineAdapter {
  Status (*open)(const EngineOptions& options, std::unique_ptr<Engine>* engine);
  LibraryFacts (*library)();  // the library's own facts; nullptr: no library
  // The largest key the engine takes, in bytes; nullptr = no limit kvbench's keys reach.
  int (*max_key_size)();
  // How the engine spends --memory_budget=`budget` bytes (kv/memory_budget.h); nullptr = it
  // takes no budget (the reference engines).
  MemoryPlan (*plan_memory)(uint64_t budget);
};

// The adapter of engine <name>, for the engine table (registry.cc) to find by name.
#define KVBENCH_ENGINE_ADAPTER(name)                           \
  extern const ::kvbench::EngineAdapter kEngineAdapter_##name; \
  const ::kvbench::EngineAdapter kEngineAdapter_##name

struct EngineInfo {
  const char* name;
  const char* description;
  bool compiled_in;       // false: the library was missing at configure time
  const char* missing;    // when !compiled_in: how to get it
  bool reference;         // memory/null: reference engines, labelled as such in output
  EngineAdapter adapter;  // all nullptr when !compiled_in
};

// Every engine kvbench knows, compiled in or not, in display order.
const std::vector<EngineInfo>& AllEngines();
// --engine's default (the manifest's default_engine), compiled in or not.
const char* DefaultEngine();
// nullptr if `name` is not a known engine.
const EngineInfo* FindEngine(const std::string& name);
// Opens `name` with `options`. InvalidArgument for an unknown engine, NotSupported for one that
// was not compiled in; otherwise the engine's own Status.
Status OpenEngine(const std::string& name, const EngineOptions& options,
                  std::unique_ptr<Engine>* engine);
// The facts of engine `name`'s library; empty for a reference engine or one not compiled in.
LibraryFacts EngineLibrary(const std::string& name);

}  // namespace kvbench
