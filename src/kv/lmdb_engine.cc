// LMDB adapter. The only file that includes lmdb.h.
//
// One MDB_env per Engine, using the unnamed main database. LMDB serializes write transactions
// itself, so every Put, Delete and Write is one write transaction from the calling thread; readers
// never block. The env is opened with MDB_NOTLS so reader slots belong to MDB_txn objects rather
// than threads: a Session keeps one read transaction for Get (renewed and reset around each call)
// while its Cursor holds another, in the same thread.
#include <lmdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kv/registry.h"

namespace kvbench {

namespace {

LibraryFacts LMDBLibrary();  // the adapter's, below

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kMinDefaultMapSize = 1ull << 30;

struct FlagName {
  unsigned int flag;
  const char* name;
};

// The env flags --engine_options may set, by their lmdb.h names without the MDB_ prefix.
constexpr FlagName kUserFlags[] = {
    {MDB_NOSYNC, "NOSYNC"},     {MDB_NOMETASYNC, "NOMETASYNC"}, {MDB_WRITEMAP, "WRITEMAP"},
    {MDB_MAPASYNC, "MAPASYNC"}, {MDB_NORDAHEAD, "NORDAHEAD"},   {MDB_NOMEMINIT, "NOMEMINIT"},
};

std::string FlagNames(unsigned int flags) {
  std::string names = (flags & MDB_NOTLS) ? "NOTLS" : "";
  for (const auto& f : kUserFlags) {
    if (flags & f.flag) names += (names.empty() ? "" : "|") + std::string(f.name);
  }
  return names.empty() ? "(none)" : names;
}

// From the final flags, since --engine_options may add sync-relaxing flags even with --sync.
std::string Durability(unsigned int flags) {
  if (flags & MDB_NOSYNC) return "commit does not sync (durable at settle/close)";
  if ((flags & MDB_WRITEMAP) && (flags & MDB_MAPASYNC)) {
    return "commit starts an asynchronous flush (durable at settle/close)";
  }
  if (flags & MDB_NOMETASYNC) {
    return "commit syncs data but not the meta page (the last commit is durable at the next "
           "commit, settle or close)";
  }
  return "each commit syncs data and meta page";
}

// What an open database needs to serve sessions and cursors, and to explain its errors.
struct Db {
  MDB_env* env = nullptr;
  MDB_dbi dbi = 0;
  size_t max_key = 0;
};

uint64_t MapSize(MDB_env* env) {
  MDB_envinfo info;
  return mdb_env_info(env, &info) == 0 ? info.me_mapsize : 0;
}

Status FromMdb(MDB_env* env, const std::string& op, int rc) {
  if (rc == 0) return Status::OK();
  if (rc == MDB_NOTFOUND) return Status::NotFound();
  std::string msg = "lmdb: " + op + ": " + mdb_strerror(rc);
  switch (rc) {
    case MDB_MAP_FULL:
      return Status::IOError(msg + " (map_size is " + std::to_string(MapSize(env)) +
                             " bytes; raise it with --engine_options=map_size=<bytes>)");
    case MDB_TXN_FULL:
      return Status::IOError(msg +
                             " (one transaction dirtied too many pages; use smaller "
                             "batches)");
    case MDB_READERS_FULL: {
      unsigned int readers = 0;
      mdb_env_get_maxreaders(env, &readers);
      return Status::IOError(msg + " (maxreaders is " + std::to_string(readers) +
                             ": two per session; raise max_sessions)");
    }
    case MDB_BAD_VALSIZE:
    case EINVAL:
      return Status::InvalidArgument(msg);
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INVALID:
    case MDB_VERSION_MISMATCH:
      return Status::Corruption(msg);
    default:
      return Status::IOError(msg);
  }
}

// LMDB only reads through an MDB_val (for keys and put values); the const_cast does not lead to a
// write.
MDB_val ToVal(const Slice& s) {
  MDB_val v;
  v.mv_size = s.size();
  v.mv_data = const_cast<char*>(s.data());
  return v;
}

Slice FromVal(const MDB_val& v) { return Slice(static_cast<const char*>(v.mv_data), v.mv_size); }

Status CheckKeySize(const Db& db, const char* op, const Slice& key) {
  if (key.size() <= db.max_key) return Status::OK();
  return Status::InvalidArgument(std::string("lmdb: ") + op + ": key of " +
                                 std::to_string(key.size()) + " bytes exceeds the maximum of " +
                                 std::to_string(db.max_key) + " (mdb_env_get_maxkeysize)");
}

class LMDBCursor : public Cursor {
 public:
  explicit LMDBCursor(const Db* db) : db_(db) {}
  ~LMDBCursor() override {
    if (cursor_ != nullptr) mdb_cursor_close(cursor_);
    if (txn_ != nullptr) mdb_txn_abort(txn_);
  }

  Status Seek(const Slice& target) override {
    valid_ = false;
    Status s = CheckKeySize(*db_, "cursor seek", target);
    if (s.ok()) s = StartSnapshot();
    if (!s.ok()) return s;
    // LMDB stores no empty key and rejects one as a search key; every key is >= "".
    if (target.empty()) return Load("cursor first", MDB_FIRST);
    key_ = ToVal(target);
    return Load("cursor set_range", MDB_SET_RANGE);
  }

  Status Next() override { return Load("cursor next", MDB_NEXT); }
  bool Valid() const override { return valid_; }
  // Both point into the memory map, valid while txn_ stays open: until the next Seek.
  Slice key() const override { return FromVal(key_); }
  Slice value() const override { return FromVal(value_); }

 private:
  // The snapshot is taken at Seek and held until the next one, so a cursor left idle keeps old
  // pages from being reused (see docs/engines.md).
  Status StartSnapshot() {
    int rc = 0;
    if (txn_ == nullptr) {
      rc = mdb_txn_begin(db_->env, nullptr, MDB_RDONLY, &txn_);
      if (rc != 0) {
        txn_ = nullptr;
        return FromMdb(db_->env, "begin read txn", rc);
      }
      rc = mdb_cursor_open(txn_, db_->dbi, &cursor_);
      if (rc != 0) {
        cursor_ = nullptr;
        mdb_txn_abort(txn_);
        txn_ = nullptr;
        return FromMdb(db_->env, "cursor open", rc);
      }
      return Status::OK();
    }
    mdb_txn_reset(txn_);
    rc = mdb_txn_renew(txn_);
    if (rc == 0) rc = mdb_cursor_renew(txn_, cursor_);
    return FromMdb(db_->env, "renew read txn", rc);
  }

  Status Load(const char* op, MDB_cursor_op how) {
    const int rc = mdb_cursor_get(cursor_, &key_, &value_, how);
    valid_ = rc == 0;
    return rc == MDB_NOTFOUND ? Status::OK() : FromMdb(db_->env, op, rc);
  }

  const Db* db_;
  MDB_txn* txn_ = nullptr;
  MDB_cursor* cursor_ = nullptr;
  bool valid_ = false;
  MDB_val key_ = {0, nullptr};
  MDB_val value_ = {0, nullptr};
};

class LMDBSession : public Session {
 public:
  // `read_txn` is a reset read-only transaction owned by the session from now on.
  LMDBSession(const Db* db, MDB_txn* read_txn) : db_(db), read_txn_(read_txn) {}
  ~LMDBSession() override { mdb_txn_abort(read_txn_); }

  Status Put(const Slice& key, const Slice& value) override {
    if (key.empty()) return Status::InvalidArgument("lmdb: put: lmdb does not store empty keys");
    Status s = CheckKeySize(*db_, "put", key);
    if (!s.ok()) return s;
    return InWriteTxn([&](MDB_txn* txn) -> Status {
      MDB_val k = ToVal(key), v = ToVal(value);
      return FromMdb(db_->env, "put", mdb_put(txn, db_->dbi, &k, &v, 0));
    });
  }

  Status Get(const Slice& key, std::string* value) override {
    if (key.empty()) return Status::NotFound();
    Status s = CheckKeySize(*db_, "get", key);
    if (!s.ok()) return s;
    int rc = mdb_txn_renew(read_txn_);
    if (rc != 0) return FromMdb(db_->env, "renew read txn", rc);
    MDB_val k = ToVal(key), v;
    rc = mdb_get(read_txn_, db_->dbi, &k, &v);
    // v points into the map, readable only until the reset below.
    if (rc == 0) value->assign(static_cast<const char*>(v.mv_data), v.mv_size);
    mdb_txn_reset(read_txn_);
    return FromMdb(db_->env, "get", rc);
  }

  Status Delete(const Slice& key) override {
    if (key.empty()) return Status::OK();  // nothing to delete: no empty key can exist
    Status s = CheckKeySize(*db_, "delete", key);
    if (!s.ok()) return s;
    return InWriteTxn([&](MDB_txn* txn) { return Del(txn, key); });
  }

  Status Write(const WriteBatch& batch) override {
    // Reject the whole batch up front rather than abort half-way through it.
    for (const auto& op : batch.ops()) {
      if (op.type == BatchOp::Type::kPut && op.key.empty()) {
        return Status::InvalidArgument("lmdb: write batch: lmdb does not store empty keys");
      }
      Status s = CheckKeySize(*db_, "write batch", op.key);
      if (!s.ok()) return s;
    }
    return InWriteTxn([&](MDB_txn* txn) -> Status {
      for (const auto& op : batch.ops()) {
        Status s;
        if (op.type == BatchOp::Type::kPut) {
          MDB_val k = ToVal(op.key), v = ToVal(op.value);
          s = FromMdb(db_->env, "put (batch)", mdb_put(txn, db_->dbi, &k, &v, 0));
        } else if (!op.key.empty()) {
          s = Del(txn, op.key);
        }
        if (!s.ok()) return s;
      }
      return Status::OK();
    });
  }

  std::unique_ptr<Cursor> NewCursor() override { return std::make_unique<LMDBCursor>(db_); }

 private:
  Status Del(MDB_txn* txn, const Slice& key) {
    MDB_val k = ToVal(key);
    const int rc = mdb_del(txn, db_->dbi, &k, nullptr);
    // An absent key leaves the transaction usable; deleting it is not an error.
    return FromMdb(db_->env, "delete", rc == MDB_NOTFOUND ? 0 : rc);
  }

  // Runs `body` in a write transaction, committing if it succeeds. mdb_txn_begin waits while
  // another thread holds the write lock.
  template <typename Body>
  Status InWriteTxn(Body body) {
    MDB_txn* txn = nullptr;
    int rc = mdb_txn_begin(db_->env, nullptr, 0, &txn);
    if (rc != 0) return FromMdb(db_->env, "begin write txn", rc);
    Status s = body(txn);
    if (!s.ok()) {
      mdb_txn_abort(txn);
      return s;
    }
    // Frees txn whether or not it succeeds.
    return FromMdb(db_->env, "commit", mdb_txn_commit(txn));
  }

  const Db* db_;
  MDB_txn* read_txn_;
};

class LMDBEngine : public Engine {
 public:
  LMDBEngine(const std::string& path, Db db,
             std::vector<std::pair<std::string, std::string>> config)
      : Engine(path), db_(db), config_(std::move(config)) {}
  ~LMDBEngine() override { Close(); }

  std::string Name() const override { return "lmdb"; }
  std::string Version() const override { return LMDBLibrary().version; }
  std::vector<std::pair<std::string, std::string>> Config() const override { return config_; }

  Status NewSession(std::unique_ptr<Session>* session) override {
    MDB_txn* txn = nullptr;
    // Taking the reader slot now keeps that cost out of the first Get.
    const int rc = mdb_txn_begin(db_.env, nullptr, MDB_RDONLY, &txn);
    if (rc != 0) return FromMdb(db_.env, "begin read txn", rc);
    mdb_txn_reset(txn);
    *session = std::make_unique<LMDBSession>(&db_, txn);
    return Status::OK();
  }

  // The map and the B+tree's shape: cheap reads of the environment's header.
  std::vector<EngineMetric> Metrics() const override {
    if (db_.env == nullptr) return {};
    MDB_envinfo info;
    MDB_stat st;
    if (mdb_env_info(db_.env, &info) != 0 || mdb_env_stat(db_.env, &st) != 0) return {};
    return {
        {"map_size_bytes", static_cast<double>(info.me_mapsize), false},
        {"pages_in_use", static_cast<double>(info.me_last_pgno + 1), false},
        {"page_size_bytes", static_cast<double>(st.ms_psize), false},
        {"depth", static_cast<double>(st.ms_depth), false},
        {"branch_pages", static_cast<double>(st.ms_branch_pages), false},
        {"leaf_pages", static_cast<double>(st.ms_leaf_pages), false},
        {"overflow_pages", static_cast<double>(st.ms_overflow_pages), false},
        {"entries_in_tree", static_cast<double>(st.ms_entries), false},
    };
  }

  // Flushes what MDB_NOSYNC / MDB_NOMETASYNC left in the OS page cache; nothing else is pending in
  // LMDB, which has no background work.
  Status Settle() override {
    if (db_.env == nullptr) return Status::InvalidArgument("lmdb: settle after close");
    return FromMdb(db_.env, "env sync", mdb_env_sync(db_.env, 1));
  }

  Status Close() override {
    if (db_.env == nullptr) return Status::OK();
    // mdb_env_close does not sync, and without --sync the last commits may be unflushed.
    Status s = FromMdb(db_.env, "env sync", mdb_env_sync(db_.env, 1));
    mdb_env_close(db_.env);
    db_.env = nullptr;
    return s;
  }

 private:
  Db db_;
  const std::vector<std::pair<std::string, std::string>> config_;
};

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t end = s.find(sep, start);
    parts.push_back(Trim(s.substr(start, end - start)));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// Bytes, optionally with a binary K, M, G or T suffix.
bool ParseSize(const std::string& text, uint64_t* bytes) {
  static const std::string kSuffixes = "KMGT";
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 19) return false;
  const uint64_t n = std::stoull(text.substr(0, digits));
  int shift = 0;
  if (digits < text.size()) {
    const size_t i = digits + 1 == text.size()
                         ? kSuffixes.find(static_cast<char>(std::toupper(text[digits])))
                         : std::string::npos;
    if (i == std::string::npos) return false;
    shift = 10 * static_cast<int>(i + 1);
  }
  if (n == 0 || n > (~0ull >> shift)) return false;
  *bytes = n << shift;
  return true;
}

struct LMDBSettings {
  uint64_t map_size = 0;  // 0: not set by --engine_options
  unsigned int flags = 0;
};

Status ParseEngineOptions(const std::string& raw, LMDBSettings* out) {
  if (Trim(raw).empty()) return Status::OK();
  for (const std::string& item : Split(raw, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string key = Trim(item.substr(0, eq));
    const std::string value = eq == std::string::npos ? "" : Trim(item.substr(eq + 1));
    if (key == "map_size") {
      if (!ParseSize(value, &out->map_size)) {
        return Status::InvalidArgument("lmdb: --engine_options: map_size='" + value +
                                       "' is not a positive byte count (e.g. 4294967296 or 4G)");
      }
    } else if (key == "flags") {
      for (std::string name : Split(value, '|')) {
        if (name.rfind("MDB_", 0) == 0) name.erase(0, 4);
        const FlagName* f = std::find_if(std::begin(kUserFlags), std::end(kUserFlags),
                                         [&](const FlagName& fn) { return name == fn.name; });
        if (f == std::end(kUserFlags)) {
          return Status::InvalidArgument("lmdb: --engine_options: unknown flag '" + name +
                                         "' (known: NOSYNC, NOMETASYNC, WRITEMAP, MAPASYNC, "
                                         "NORDAHEAD, NOMEMINIT)");
        }
        out->flags |= f->flag;
      }
    } else {
      return Status::InvalidArgument("lmdb: --engine_options: unknown option '" + key +
                                     "' (known: map_size=<bytes>, flags=<A|B|...>)");
    }
  }
  return Status::OK();
}

uint64_t RoundUp(uint64_t n, uint64_t unit) { return (n + unit - 1) / unit * unit; }

int LMDBMaxKeySize() {
  // The limit is compiled into liblmdb (MDB_MAXKEYSIZE, 511 by default); an environment that is
  // created but never opened reports it.
  static const int max_key = [] {
    MDB_env* env = nullptr;
    if (mdb_env_create(&env) != 0) return 511;
    const int n = mdb_env_get_maxkeysize(env);
    mdb_env_close(env);
    return n;
  }();
  return max_key;
}

LibraryFacts LMDBLibrary() {
  int major = 0, minor = 0, patch = 0;
  mdb_version(&major, &minor, &patch);
  return {std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch), ""};
}

// The directory for a new database, or the size of the existing one's data file.
Status PrepareDirectory(const EngineOptions& options, uint64_t* existing_bytes) {
  *existing_bytes = 0;
  if (options.create) {
    std::error_code ec;
    std::filesystem::create_directories(options.path, ec);
    if (ec) return Status::IOError("lmdb: cannot create " + options.path + ": " + ec.message());
    return Status::OK();
  }
  const std::string data_file = options.path + "/data.mdb";
  struct stat st;
  if (::stat(data_file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::InvalidArgument("no lmdb database at " + options.path);
  }
  *existing_bytes = static_cast<uint64_t>(st.st_size);
  return Status::OK();
}

// The map size caps the database and can only be set before open. The default leaves room for
// B+tree overhead and copy-on-write churn; a reopened database also keeps room to grow, since
// LMDB would otherwise shrink-wrap the map to the file. The map is address space, not memory
// (except with WRITEMAP, which also sizes the file, sparsely). *source says where it came from.
uint64_t ChooseMapSize(const LMDBSettings& settings, const EngineOptions& options,
                       uint64_t existing_bytes, std::string* source) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  if (settings.map_size != 0) {
    *source = "--engine_options";
    return RoundUp(settings.map_size, page);
  }
  const uint64_t expected =
      options.expected_bytes > (~0ull >> 3) ? (~0ull >> 3) : options.expected_bytes;
  *source =
      "default: max(1 GiB, 4 x expected_bytes=" + std::to_string(expected) + ")" +
      (existing_bytes ? " + existing data.mdb " + std::to_string(existing_bytes) : std::string()) +
      ", rounded up to a MiB";
  return RoundUp(std::max(kMinDefaultMapSize, 4 * expected) + existing_bytes, kMiB);
}

// Creates and opens the environment and the main database's handle, which stays valid for every
// later transaction. On failure nothing is left open.
Status OpenEnvironment(const std::string& path, uint64_t map_size, unsigned int flags,
                       unsigned int max_readers, Db* db) {
  int rc = mdb_env_create(&db->env);
  if (rc != 0) return FromMdb(nullptr, "env create", rc);
  auto fail = [db](Status st) {
    mdb_env_close(db->env);
    return st;
  };
  rc = mdb_env_set_mapsize(db->env, map_size);
  if (rc != 0) return fail(FromMdb(db->env, "set map_size", rc));
  rc = mdb_env_set_maxreaders(db->env, max_readers);
  if (rc != 0) return fail(FromMdb(db->env, "set maxreaders", rc));
  rc = mdb_env_open(db->env, path.c_str(), flags, 0644);
  if (rc != 0) return fail(FromMdb(db->env, "open " + path, rc));
  db->max_key = static_cast<size_t>(mdb_env_get_maxkeysize(db->env));
  MDB_txn* txn = nullptr;
  rc = mdb_txn_begin(db->env, nullptr, MDB_RDONLY, &txn);
  if (rc != 0) return fail(FromMdb(db->env, "begin read txn", rc));
  rc = mdb_dbi_open(txn, nullptr, 0, &db->dbi);
  if (rc != 0) {
    mdb_txn_abort(txn);
    return fail(FromMdb(db->env, "open main db", rc));
  }
  rc = mdb_txn_commit(txn);
  if (rc != 0) return fail(FromMdb(db->env, "commit", rc));
  return Status::OK();
}

// LMDB has no cache of its own: the whole budget is the OS page cache over its memory map, which
// nothing but a memory cgroup (--io_bound) bounds.
MemoryPlan PlanLMDBMemory(uint64_t budget) {
  MemoryPlan plan;
  plan.parts = {{"os_page_cache", budget,
                 "pages of the memory-mapped file; bounded only by --io_bound's memory cgroup"}};
  return plan;  // no O_DIRECT: reads are page faults on the map
}

// The effective configuration, as the run header and the JSON record it.
std::vector<std::pair<std::string, std::string>> EffectiveConfig(const Db& db,
                                                                 const EngineOptions& options,
                                                                 unsigned int flags,
                                                                 const std::string& map_source) {
  unsigned int readers = 0;
  mdb_env_get_maxreaders(db.env, &readers);
  MDB_stat stat;
  const bool have_stat = mdb_env_stat(db.env, &stat) == 0;
  std::vector<std::pair<std::string, std::string>> config = {
      {"map_size", std::to_string(MapSize(db.env))},
      {"map_size_source", map_source},
      {"env_flags", FlagNames(flags)},
      {"maxreaders", std::to_string(readers)},
      {"max_key_size", std::to_string(db.max_key)},
      {"page_size", have_stat ? std::to_string(stat.ms_psize) : "unknown"},
      {"database", "unnamed main DB"},
      {"cache_size", "ignored (--cache_size=" + std::to_string(options.cache_size) +
                         "): lmdb has no cache of its own; reads go through the OS page cache "
                         "of the memory map"},
      {"compression", "none"},
      {"durability", Durability(flags)},
      {"engine_options", options.engine_options.empty() ? "(none)" : options.engine_options},
      {"library", mdb_version(nullptr, nullptr, nullptr)},
  };
  if (options.memory_budget != 0) {
    for (auto& [key, value] : config) {
      if (key != "cache_size") continue;
      // Only --io_bound's memory cgroup bounds the page cache; without it the budget is a
      // figure in the plan, and the map is cached in all the memory the machine has free.
      value = options.io_bound
                  ? "ignored: --memory_budget bounds the OS page cache instead (--io_bound)"
                  : "ignored: lmdb has no cache; without --io_bound nothing bounds the OS page "
                    "cache of its map (--memory_budget is recorded, not enforced)";
    }
    for (auto& kv : BudgetConfig(options.memory_budget, PlanLMDBMemory(options.memory_budget),
                                 options.io_bound)) {
      config.push_back(std::move(kv));
    }
  }
  return config;
}

Status OpenLMDBEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine) {
  if (options.compression != "none") return Status::NotSupported("lmdb does not compress values");
  LMDBSettings settings;
  Status s = ParseEngineOptions(options.engine_options, &settings);
  uint64_t existing_bytes = 0;
  if (s.ok()) s = PrepareDirectory(options, &existing_bytes);
  if (!s.ok()) return s;
  std::string map_source;
  const uint64_t map_size = ChooseMapSize(settings, options, existing_bytes, &map_source);
  unsigned int flags = MDB_NOTLS | settings.flags;
  if (!options.sync) flags |= MDB_NOSYNC | MDB_NOMETASYNC;
  const unsigned int max_readers = static_cast<unsigned int>(2 * options.max_sessions + 8);
  Db db;
  s = OpenEnvironment(options.path, map_size, flags, max_readers, &db);
  if (!s.ok()) return s;
  auto config = EffectiveConfig(db, options, flags, map_source);
  *engine = std::make_unique<LMDBEngine>(options.path, db, std::move(config));
  return Status::OK();
}

}  // namespace

KVBENCH_ENGINE_ADAPTER(lmdb) = {&OpenLMDBEngine, &LMDBLibrary, &LMDBMaxKeySize, &PlanLMDBMemory};

}  // namespace kvbench
