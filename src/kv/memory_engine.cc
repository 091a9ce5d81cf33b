// The `memory` reference engine: a sorted std::map behind one mutex. Not a reader-writer lock:
// glibc's prefers readers, and busy readers would starve a *whilewriting writer.
//
// It is the reference for tests and for separating harness cost from storage cost; it is labelled
// as a reference engine wherever it appears in output. Data lives in memory and is written to
// <path>/MEMORY-SNAPSHOT on Close, and read back when opened with create=false, so that it obeys
// the same reopen semantics as the storage engines. Nothing is durable before Close.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>

#include "kv/registry.h"

namespace kvbench {

namespace {

constexpr const char* kSnapshotName = "MEMORY-SNAPSHOT";

struct Store {
  std::mutex mu;
  std::map<std::string, std::string, std::less<>> map;
};

class MemoryCursor : public Cursor {
 public:
  explicit MemoryCursor(Store* store) : store_(store) {}
  Status Seek(const Slice& target) override {
    std::lock_guard<std::mutex> l(store_->mu);
    return Load(store_->map.lower_bound(target.view()));
  }
  Status Next() override {
    std::lock_guard<std::mutex> l(store_->mu);
    return Load(store_->map.upper_bound(key_));
  }
  bool Valid() const override { return valid_; }
  Slice key() const override { return key_; }
  Slice value() const override { return value_; }

 private:
  template <typename It>
  Status Load(It it) {
    valid_ = it != store_->map.end();
    if (valid_) {
      key_ = it->first;
      value_ = it->second;
    }
    return Status::OK();
  }
  Store* store_;
  bool valid_ = false;
  std::string key_, value_;
};

class MemorySession : public Session {
 public:
  explicit MemorySession(Store* store) : store_(store) {}
  Status Put(const Slice& key, const Slice& value) override {
    std::lock_guard<std::mutex> l(store_->mu);
    store_->map[key.ToString()].assign(value.data(), value.size());
    return Status::OK();
  }
  Status Get(const Slice& key, std::string* value) override {
    std::lock_guard<std::mutex> l(store_->mu);
    auto it = store_->map.find(key.view());
    if (it == store_->map.end()) return Status::NotFound();
    value->assign(it->second);
    return Status::OK();
  }
  Status Delete(const Slice& key) override {
    std::lock_guard<std::mutex> l(store_->mu);
    auto it = store_->map.find(key.view());
    if (it != store_->map.end()) store_->map.erase(it);
    return Status::OK();
  }
  Status Write(const WriteBatch& batch) override {
    std::lock_guard<std::mutex> l(store_->mu);
    for (const auto& op : batch.ops()) {
      if (op.type == BatchOp::Type::kPut) {
        store_->map[op.key] = op.value;
      } else {
        store_->map.erase(op.key);
      }
    }
    return Status::OK();
  }
  std::unique_ptr<Cursor> NewCursor() override { return std::make_unique<MemoryCursor>(store_); }

 private:
  Store* store_;
};

class MemoryEngine : public Engine {
 public:
  explicit MemoryEngine(const std::string& path) : Engine(path) {}
  ~MemoryEngine() override { Close(); }

  Status Load() {
    std::FILE* f = std::fopen(SnapshotPath().c_str(), "rb");
    if (f == nullptr) return Status::InvalidArgument("no memory database at " + path());
    Status s;
    uint32_t len[2];
    std::string k, v;
    while (std::fread(len, sizeof(len), 1, f) == 1) {
      k.resize(len[0]);
      v.resize(len[1]);
      if ((len[0] && std::fread(&k[0], len[0], 1, f) != 1) ||
          (len[1] && std::fread(&v[0], len[1], 1, f) != 1)) {
        s = Status::Corruption("memory: truncated snapshot " + SnapshotPath());
        break;
      }
      store_.map.emplace(k, v);
    }
    std::fclose(f);
    return s;
  }

  std::string Name() const override { return "memory"; }
  std::string Version() const override { return "reference"; }
  std::vector<std::pair<std::string, std::string>> Config() const override {
    return {{"kind", "reference engine: std::map behind a mutex"},
            {"durability", "none until Close, which writes " + std::string(kSnapshotName)}};
  }
  Status NewSession(std::unique_ptr<Session>* session) override {
    *session = std::make_unique<MemorySession>(&store_);
    return Status::OK();
  }
  Status Settle() override { return Status::OK(); }
  Status Close() override {
    if (closed_) return Status::OK();
    closed_ = true;
    const std::string tmp = SnapshotPath() + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr)
      return Status::IOError("memory: cannot create " + tmp + ": " + strerror(errno));
    bool ok = true;
    for (const auto& [k, v] : store_.map) {
      const uint32_t len[2] = {static_cast<uint32_t>(k.size()), static_cast<uint32_t>(v.size())};
      ok = ok && std::fwrite(len, sizeof(len), 1, f) == 1 &&
           std::fwrite(k.data(), 1, k.size(), f) == k.size() &&
           std::fwrite(v.data(), 1, v.size(), f) == v.size();
    }
    ok = (std::fclose(f) == 0) && ok;
    if (!ok || std::rename(tmp.c_str(), SnapshotPath().c_str()) != 0) {
      const std::string reason = strerror(errno);
      std::remove(tmp.c_str());
      return Status::IOError("memory: cannot write snapshot " + SnapshotPath() + ": " + reason);
    }
    return Status::OK();
  }

 private:
  std::string SnapshotPath() const { return path() + "/" + kSnapshotName; }
  Store store_;
  bool closed_ = false;
};

Status OpenMemoryEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine) {
  if (options.compression != "none") {
    return Status::NotSupported("memory engine does not compress (use --compression=none)");
  }
  std::error_code ec;
  std::filesystem::create_directories(options.path, ec);
  if (ec) return Status::IOError("cannot create " + options.path + ": " + ec.message());
  auto e = std::make_unique<MemoryEngine>(options.path);
  if (!options.create) {
    Status s = e->Load();
    if (!s.ok()) return s;
  }
  *engine = std::move(e);
  return Status::OK();
}

}  // namespace

extern const EngineInfo kMemoryEngine;
const EngineInfo kMemoryEngine = {"memory",
                                  "in-memory sorted map (REFERENCE engine, not a storage engine)",
                                  true,
                                  "",
                                  /*reference=*/true,
                                  {&OpenMemoryEngine, nullptr, nullptr, nullptr}};

}  // namespace kvbench
