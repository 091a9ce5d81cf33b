// RocksDB adapter. The only file that includes RocksDB headers.
//
// Options start from RocksDB's own defaults (not db_bench's, which differ: see docs/engines.md),
// then kvbench's common options (block cache, compression, sync) and finally the raw
// --engine_options string, so the user always has the last word. Config() lists the values in
// effect after all three.
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/table.h>
#include <rocksdb/version.h>
#include <rocksdb/write_batch.h>
// RocksDB 8 moved the Cache class (GetCapacity) out of cache.h; 7.x has no advanced_cache.h.
#if ROCKSDB_MAJOR >= 8
#include <rocksdb/advanced_cache.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include "kv/registry.h"

// Exported by librocksdb but declared in util/crc32c.h, which Debian does not install. It answers
// whether this library build takes the hardware crc32c path on this CPU.
namespace rocksdb {
namespace crc32c {
std::string IsFastCrc32Supported();
}  // namespace crc32c
}  // namespace rocksdb

namespace kvbench {

namespace {

Status FromRocks(const char* op, const rocksdb::Status& s) {
  if (s.ok()) return Status::OK();
  if (s.IsNotFound()) return Status::NotFound();
  const std::string msg = std::string("rocksdb: ") + op + ": " + s.ToString();
  if (s.IsInvalidArgument()) return Status::InvalidArgument(msg);
  if (s.IsNotSupported()) return Status::NotSupported(msg);
  if (s.IsCorruption()) return Status::Corruption(msg);
  return Status::IOError(msg);
}

rocksdb::Slice ToRocks(const Slice& s) { return rocksdb::Slice(s.data(), s.size()); }
Slice FromRocks(const rocksdb::Slice& s) { return Slice(s.data(), s.size()); }

class RocksCursor : public Cursor {
 public:
  explicit RocksCursor(rocksdb::Iterator* it) : it_(it) {}
  // An iterator that hit an error is !Valid(), so status() (a Status copy per call) is only
  // consulted then.
  Status Seek(const Slice& target) override {
    it_->Seek(ToRocks(target));
    return it_->Valid() ? Status::OK() : FromRocks("iterator seek", it_->status());
  }
  Status Next() override {
    it_->Next();
    return it_->Valid() ? Status::OK() : FromRocks("iterator next", it_->status());
  }
  bool Valid() const override { return it_->Valid(); }
  Slice key() const override { return FromRocks(it_->key()); }
  Slice value() const override { return FromRocks(it_->value()); }

 private:
  std::unique_ptr<rocksdb::Iterator> it_;
};

class RocksSession : public Session {
 public:
  RocksSession(rocksdb::DB* db, bool sync) : db_(db) { write_options_.sync = sync; }
  // RocksDB's perf level is per thread and starts at kEnableCount, which bumps perf_context
  // counters (a thread-local lookup each) on every key comparison: ~4% of a readrandom op.
  // db_bench sets kDisable in every benchmark thread (its --perf_level default); so does kvbench.
  void AttachToThread() override { rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable); }
  // Single writes go through one WriteBatch per session, cleared and reused, as db_bench's write
  // loop does; DB::Put would build and free a batch per call (~300 instructions more per op).
  Status Put(const Slice& key, const Slice& value) override {
    batch_.Clear();
    rocksdb::Status s = batch_.Put(ToRocks(key), ToRocks(value));
    if (!s.ok()) return FromRocks("put", s);
    return FromRocks("put", db_->Write(write_options_, &batch_));
  }
  Status Get(const Slice& key, std::string* value) override {
    return FromRocks("get", db_->Get(read_options_, ToRocks(key), value));
  }
  Status Delete(const Slice& key) override {
    batch_.Clear();
    rocksdb::Status s = batch_.Delete(ToRocks(key));
    if (!s.ok()) return FromRocks("delete", s);
    return FromRocks("delete", db_->Write(write_options_, &batch_));
  }
  Status Write(const WriteBatch& batch) override {
    batch_.Clear();
    for (const auto& op : batch.ops()) {
      rocksdb::Status s =
          op.type == BatchOp::Type::kPut ? batch_.Put(op.key, op.value) : batch_.Delete(op.key);
      if (!s.ok()) return FromRocks("write batch", s);
    }
    return FromRocks("write", db_->Write(write_options_, &batch_));
  }
  std::unique_ptr<Cursor> NewCursor() override {
    // A new iterator (and implicit snapshot) per cursor, as db_bench's seekrandom does per op.
    return std::make_unique<RocksCursor>(db_->NewIterator(read_options_));
  }

 private:
  rocksdb::DB* db_;
  rocksdb::WriteOptions write_options_;
  rocksdb::ReadOptions read_options_;
  rocksdb::WriteBatch batch_;
};

class RocksEngine : public Engine {
 public:
  RocksEngine(const std::string& path, rocksdb::DB* db, rocksdb::Options options, bool sync,
              std::string raw, std::vector<std::pair<std::string, std::string>> budget)
      : Engine(path),
        db_(db),
        options_(std::move(options)),
        sync_(sync),
        raw_(std::move(raw)),
        budget_(std::move(budget)) {}
  ~RocksEngine() override { Close(); }

  std::string Name() const override { return "rocksdb"; }
  std::string Version() const override { return rocksdb::GetRocksVersionAsString(true); }

  std::vector<std::pair<std::string, std::string>> Config() const override {
    std::vector<std::pair<std::string, std::string>> c;
    auto add = [&c](const char* k, const std::string& v) { c.emplace_back(k, v); };
    const auto* t = options_.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
    std::string compression;
    rocksdb::GetStringFromCompressionType(&compression, options_.compression);
    add("compression", compression);
    add("block_cache_bytes",
        t && t->block_cache ? std::to_string(t->block_cache->GetCapacity()) : "none");
    add("block_size", t ? std::to_string(t->block_size) : "n/a");
    add("bloom_filter", t && t->filter_policy ? t->filter_policy->Name() : "none");
    add("cache_index_and_filter_blocks", t && t->cache_index_and_filter_blocks ? "true" : "false");
    add("write_buffer_size", std::to_string(options_.write_buffer_size));
    add("max_write_buffer_number", std::to_string(options_.max_write_buffer_number));
    add("max_background_jobs", std::to_string(options_.max_background_jobs));
    add("level0_file_num_compaction_trigger",
        std::to_string(options_.level0_file_num_compaction_trigger));
    add("target_file_size_base", std::to_string(options_.target_file_size_base));
    add("max_bytes_for_level_base", std::to_string(options_.max_bytes_for_level_base));
    add("use_direct_reads", options_.use_direct_reads ? "true" : "false");
    add("use_direct_io_for_flush_and_compaction",
        options_.use_direct_io_for_flush_and_compaction ? "true" : "false");
    add("enable_pipelined_write", options_.enable_pipelined_write ? "true" : "false");
    add("perf_level", "disable (per worker thread, as db_bench's default)");
    add("wal", "enabled");
    add("write_sync", sync_ ? "true" : "false");
    add("engine_options", raw_.empty() ? "(none)" : raw_);
    add("full_options_file", "OPTIONS-* in the database directory");
    c.insert(c.end(), budget_.begin(), budget_.end());
    return c;
  }

  std::vector<EngineMetric> Metrics() const override {
    std::map<std::string, std::string> db, cf;
    db_->GetMapProperty(rocksdb::DB::Properties::kDBStats, &db);
    db_->GetMapProperty(rocksdb::DB::Properties::kCFStats, &cf);
    auto num = [](const std::map<std::string, std::string>& m, const char* key) {
      auto it = m.find(key);
      return it == m.end() ? 0.0 : std::strtod(it->second.c_str(), nullptr);
    };
    uint64_t pending = 0, live = 0;
    db_->GetIntProperty(rocksdb::DB::Properties::kEstimatePendingCompactionBytes, &pending);
    db_->GetIntProperty(rocksdb::DB::Properties::kLiveSstFilesSize, &live);
    constexpr double kGiB = 1073741824.0;  // the cfstats "GB" figures are GiB
    return {
        {"user_bytes_written", num(db, "db.user_bytes_written"), true},
        {"wal_bytes_written", num(db, "db.wal_bytes_written"), true},
        // Flush (L0) plus compaction output, all levels.
        {"flush_compaction_bytes_written", std::round(num(cf, "compaction.Sum.WriteGB") * kGiB),
         true},
        {"compaction_bytes_read", std::round(num(cf, "compaction.Sum.ReadGB") * kGiB), true},
        {"write_stall_us", num(db, "db.user_write_stall_micros"), true},
        {"stall_slowdowns", num(cf, "io_stalls.total_slowdown"), true},
        {"stall_stops", num(cf, "io_stalls.total_stop"), true},
        {"pending_compaction_bytes", static_cast<double>(pending), false},
        {"live_sst_bytes", static_cast<double>(live), false},
    };
  }

  std::vector<std::string> BuildWarnings() const override {
    const std::string crc = rocksdb::crc32c::IsFastCrc32Supported();
    if (crc.rfind("Not supported", 0) != 0) return {};
    return {"rocksdb computes crc32c in software (the library says: \"" + crc +
            "\"): it was built without the hardware crc32c path, which slows every WAL record "
            "and crc32c block checksum (db_bench --benchmarks=crc32c shows the rate)"};
  }

  Status NewSession(std::unique_ptr<Session>* session) override {
    *session = std::make_unique<RocksSession>(db_, sync_);
    return Status::OK();
  }

  // Flushes the memtable, then waits until RocksDB reports no flush or compaction pending or
  // running on two polls in a row, as db_bench's waitforcompaction checks twice: the properties
  // are read one at a time, so one poll can read "nothing pending" just before a running
  // compaction finishes and leaves a level that needs the next one. (7.8 has no WaitForCompact.)
  Status Settle() override {
    rocksdb::FlushOptions fo;
    fo.wait = true;
    Status s = FromRocks("flush", db_->Flush(fo));
    if (!s.ok()) return s;
    for (int idle_polls = 0; idle_polls < 2;) {
      idle_polls = BackgroundWorkIdle() ? idle_polls + 1 : 0;
      if (idle_polls < 2) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return Status::OK();
  }

  Status Close() override {
    if (db_ == nullptr) return Status::OK();
    rocksdb::Status s = db_->Close();
    delete db_;
    db_ = nullptr;
    return FromRocks("close", s);
  }

 private:
  // The four properties db_bench's waitforcompaction polls. One that the library does not
  // know reads as 0, as before, rather than waiting forever.
  bool BackgroundWorkIdle() const {
    for (const char* p : {"rocksdb.mem-table-flush-pending", "rocksdb.num-running-flushes",
                          "rocksdb.compaction-pending", "rocksdb.num-running-compactions"}) {
      uint64_t v = 0;
      db_->GetIntProperty(p, &v);
      if (v > 0) return false;
    }
    return true;
  }

  rocksdb::DB* db_;
  rocksdb::Options options_;
  bool sync_;
  std::string raw_;
  std::vector<std::pair<std::string, std::string>> budget_;  // BudgetConfig(), if any
};

Status ToCompression(const std::string& name, rocksdb::CompressionType* type) {
  if (name == "none")
    *type = rocksdb::kNoCompression;
  else if (name == "snappy")
    *type = rocksdb::kSnappyCompression;
  else if (name == "lz4")
    *type = rocksdb::kLZ4Compression;
  else if (name == "zstd")
    *type = rocksdb::kZSTD;
  else
    return Status::InvalidArgument("rocksdb: unknown compression '" + name + "'");
  return Status::OK();
}

LibraryFacts RocksDBLibrary() {
  return {rocksdb::GetRocksVersionAsString(true),
          "crc32c: " + rocksdb::crc32c::IsFastCrc32Supported()};
}

// Two memtables of 1/8 of the budget each, at most RocksDB's default 64 MiB (a larger one only
// delays flushes), and the rest block cache, which also holds index and filter blocks
// (cache_index_and_filter_blocks) so that they count against the budget instead of growing with
// the database outside it.
MemoryPlan PlanRocksDBMemory(uint64_t budget) {
  const uint64_t write_buffer = std::min<uint64_t>(budget / 8, 64ull << 20);
  MemoryPlan plan;
  plan.parts = {
      {"block_cache", budget - 2 * write_buffer,
       "data, index and filter blocks (cache_index_and_filter_blocks=true)"},
      {"write_buffers", 2 * write_buffer, "max_write_buffer_number=2 memtables"},
  };
  plan.settings = {{"write_buffer_size", std::to_string(write_buffer)},
                   {"max_write_buffer_number", "2"},
                   {"cache_index_and_filter_blocks", "true"}};
  plan.direct_io = "use_direct_reads=true,use_direct_io_for_flush_and_compaction=true";
  return plan;
}

// --memory_budget and --io_bound, applied before --engine_options so that those still win.
void ApplyBudget(const EngineOptions& eo, rocksdb::Options* options,
                 rocksdb::BlockBasedTableOptions* table) {
  if (eo.memory_budget == 0) return;
  const MemoryPlan plan = PlanRocksDBMemory(eo.memory_budget);
  table->block_cache = rocksdb::NewLRUCache(plan.parts[0].bytes);
  table->cache_index_and_filter_blocks = true;
  options->write_buffer_size = plan.parts[1].bytes / 2;
  options->max_write_buffer_number = 2;
  if (eo.io_bound) {
    options->use_direct_reads = true;
    options->use_direct_io_for_flush_and_compaction = true;
  }
}

Status OpenRocksDBEngine(const EngineOptions& eo, std::unique_ptr<Engine>* engine) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!eo.create && !fs::exists(fs::path(eo.path) / "CURRENT", ec)) {
    return Status::InvalidArgument("no rocksdb database at " + eo.path);
  }
  rocksdb::Options options;
  options.create_if_missing = eo.create;
  Status s = ToCompression(eo.compression, &options.compression);
  if (!s.ok()) return s;
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(eo.cache_size);
  ApplyBudget(eo, &options, &table);
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  if (!eo.engine_options.empty()) {
    rocksdb::ConfigOptions config;
    config.ignore_unknown_options = false;
    rocksdb::Options parsed;
    s = FromRocks("--engine_options",
                  rocksdb::GetOptionsFromString(config, options, eo.engine_options, &parsed));
    if (!s.ok()) return s;
    options = parsed;
  }
  rocksdb::DB* db = nullptr;
  s = FromRocks("open", rocksdb::DB::Open(options, eo.path, &db));
  if (!s.ok()) {
    if (s.IsNotSupported() || s.IsInvalidArgument()) return s;
    return Status::IOError(s.message());
  }
  auto budget = BudgetConfig(eo.memory_budget,
                             eo.memory_budget ? PlanRocksDBMemory(eo.memory_budget) : MemoryPlan(),
                             eo.io_bound);
  *engine = std::make_unique<RocksEngine>(eo.path, db, options, eo.sync, eo.engine_options,
                                          std::move(budget));
  return Status::OK();
}

}  // namespace

KVBENCH_ENGINE_ADAPTER(rocksdb) = {&OpenRocksDBEngine, &RocksDBLibrary, nullptr,
                                   &PlanRocksDBMemory};

}  // namespace kvbench
