#include "kv/registry.h"

namespace kvbench {

// The reference engines, defined in their adapters (memory_engine.cc, null_engine.cc).
extern const EngineInfo kMemoryEngine;
extern const EngineInfo kNullEngine;

// The storage engines CMake found, from the manifest (cmake/deps.json), one line each:
// KVBENCH_ENGINE(name, description) or KVBENCH_MISSING_ENGINE(name, description, install hint),
// and KVBENCH_DEFAULT_ENGINE(name).
#define KVBENCH_ENGINE(name, description) extern const EngineAdapter kEngineAdapter_##name;
#define KVBENCH_MISSING_ENGINE(name, description, missing)
#define KVBENCH_DEFAULT_ENGINE(name)
#include "kv/engines.def"
#undef KVBENCH_ENGINE
#undef KVBENCH_MISSING_ENGINE
#undef KVBENCH_DEFAULT_ENGINE

const std::vector<EngineInfo>& AllEngines() {
  static const std::vector<EngineInfo> engines = {
#define KVBENCH_ENGINE(name, description) \
  {#name, description, true, "", false, kEngineAdapter_##name},
#define KVBENCH_MISSING_ENGINE(name, description, missing) \
  {#name, description, false, missing, false, {nullptr, nullptr, nullptr, nullptr}},
#define KVBENCH_DEFAULT_ENGINE(name)
#include "kv/engines.def"
#undef KVBENCH_ENGINE
#undef KVBENCH_MISSING_ENGINE
#undef KVBENCH_DEFAULT_ENGINE
      kMemoryEngine,
      kNullEngine,
  };
  return engines;
}

const char* DefaultEngine() {
#define KVBENCH_ENGINE(name, description)
#define KVBENCH_MISSING_ENGINE(name, description, missing)
#define KVBENCH_DEFAULT_ENGINE(name) return #name;
#include "kv/engines.def"
#undef KVBENCH_ENGINE
#undef KVBENCH_MISSING_ENGINE
#undef KVBENCH_DEFAULT_ENGINE
}

LibraryFacts EngineLibrary(const std::string& name) {
  const EngineInfo* info = FindEngine(name);
  if (info == nullptr || info->adapter.library == nullptr) return {};
  return info->adapter.library();
}

const EngineInfo* FindEngine(const std::string& name) {
  for (const auto& e : AllEngines()) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

Status OpenEngine(const std::string& name, const EngineOptions& options,
                  std::unique_ptr<Engine>* engine) {
  const EngineInfo* info = FindEngine(name);
  if (info == nullptr) return Status::InvalidArgument("unknown engine '" + name + "'");
  if (!info->compiled_in) {
    return Status::NotSupported("engine '" + name +
                                "' is not compiled into this kvbench: " + info->missing);
  }
  return info->adapter.open(options, engine);
}

}  // namespace kvbench
