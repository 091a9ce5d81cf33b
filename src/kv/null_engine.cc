// The `null` reference engine: every write succeeds and is discarded, every read answers
// not-found, every cursor is empty. Like YCSB's BasicDB it measures what the harness itself costs
// per operation (key generation, timing, histogram, loop), which bounds the smallest latency any
// engine can show.
#include <filesystem>
#include <fstream>

#include "kv/registry.h"

namespace kvbench {

namespace {

constexpr const char* kMarkerName = "NULL-ENGINE";

class NullCursor : public Cursor {
 public:
  Status Seek(const Slice&) override { return Status::OK(); }
  Status Next() override { return Status::OK(); }
  bool Valid() const override { return false; }
  Slice key() const override { return Slice(); }
  Slice value() const override { return Slice(); }
};

class NullSession : public Session {
 public:
  Status Put(const Slice&, const Slice&) override { return Status::OK(); }
  Status Get(const Slice&, std::string*) override { return Status::NotFound(); }
  Status Delete(const Slice&) override { return Status::OK(); }
  Status Write(const WriteBatch&) override { return Status::OK(); }
  std::unique_ptr<Cursor> NewCursor() override { return std::make_unique<NullCursor>(); }
};

class NullEngine : public Engine {
 public:
  explicit NullEngine(const std::string& path) : Engine(path) {}
  std::string Name() const override { return "null"; }
  std::string Version() const override { return "reference"; }
  std::vector<std::pair<std::string, std::string>> Config() const override {
    return {{"kind", "reference engine: stores nothing, reads answer not-found"}};
  }
  Status NewSession(std::unique_ptr<Session>* session) override {
    *session = std::make_unique<NullSession>();
    return Status::OK();
  }
  Status Settle() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }
};

Status OpenNullEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine) {
  std::error_code ec;
  std::filesystem::create_directories(options.path, ec);
  if (ec) return Status::IOError("cannot create " + options.path + ": " + ec.message());
  const std::string marker = options.path + "/" + kMarkerName;
  if (options.create) {
    // A marker so that --use_existing_db finds "a database" here, as for the real engines.
    std::ofstream(marker) << "kvbench null engine\n";
    if (!std::filesystem::exists(marker, ec)) {
      return Status::IOError("cannot write " + marker);
    }
  } else if (!std::filesystem::exists(marker, ec)) {
    return Status::InvalidArgument("no null database at " + options.path);
  }
  *engine = std::make_unique<NullEngine>(options.path);
  return Status::OK();
}

}  // namespace

extern const EngineInfo kNullEngine;
const EngineInfo kNullEngine = {
    "null",
    "does nothing, answers not-found (REFERENCE: measures the harness's own cost)",
    true,
    "",
    /*reference=*/true,
    {&OpenNullEngine, nullptr, nullptr, nullptr}};

}  // namespace kvbench
