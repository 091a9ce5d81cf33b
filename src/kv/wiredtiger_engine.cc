// WiredTiger adapter. The only file that includes wiredtiger.h.
//
// One WT_CONNECTION per Engine and one WT_SESSION (with a cached cursor on the table) per Session.
// Every configuration string kvbench passes to WiredTiger is built in ConnectionConfig() and
// TableConfig() below and reported verbatim by Config(), so a result records exactly what ran.
// The raw --engine_options string is appended to the connection config: WiredTiger lets a later
// setting override an earlier one (key by key inside nested groups such as log=(...)), so the
// user always has the last word.
#include <dlfcn.h>
#include <sys/stat.h>
#include <wiredtiger.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kv/registry.h"

namespace kvbench {

namespace {

LibraryFacts WiredTigerLibrary();  // the adapter's, below

constexpr const char* kTable = "table:kvbench";
constexpr const char* kTableFile = "file:kvbench.wt";
// WiredTiger detects write-write conflicts only under snapshot isolation. Under its default,
// read-committed, two concurrent batches writing the same keys both succeed and can leave a mix
// of the two, which is not what an atomic WriteBatch promises. Snapshot isolation turns such
// conflicts into WT_ROLLBACK, which the session retries.
constexpr const char* kSessionConfig = "isolation=snapshot";
constexpr const char* kSnappyExtension = "libwiredtiger_snappy.so";
// Where Debian installs WiredTiger's compressor extensions, used when the directory of the loaded
// library cannot be found (static link, or dladdr failing).
#if defined(__x86_64__)
constexpr const char* kMultiarchLibDir = "/usr/lib/x86_64-linux-gnu";
#elif defined(__aarch64__)
constexpr const char* kMultiarchLibDir = "/usr/lib/aarch64-linux-gnu";
#else
constexpr const char* kMultiarchLibDir = "/usr/lib";
#endif

// WT_ROLLBACK on an auto-commit operation means a concurrent writer updated the same key (or, under
// cache pressure, WiredTiger chose this operation to back out). Retrying is what WiredTiger expects
// of the application; the bound turns a livelock into an error instead of a hang.
constexpr int kMaxRollbackAttempts = 100;

// WiredTiger reports the detail of an error (e.g. "unknown configuration key 'foo'") through the
// event handler, while the call itself only returns a code. The handler appends the detail to the
// capture buffer of the calling thread, so the Status of that call can carry it; messages from
// WiredTiger's own threads (eviction, log server) have no caller and go to stderr.
thread_local std::string* t_error_capture = nullptr;

int HandleError(WT_EVENT_HANDLER*, WT_SESSION*, int, const char* message) {
  std::string text = message != nullptr ? message : "";
  // Drop the "[timestamp][pid:tid], " prefix: it says nothing the Status does not.
  if (!text.empty() && text[0] == '[') {
    const size_t end = text.find("], ");
    if (end != std::string::npos) text.erase(0, end + 3);
  }
  if (t_error_capture != nullptr) {
    if (!t_error_capture->empty()) t_error_capture->append("; ");
    t_error_capture->append(text);
  } else {
    std::fprintf(stderr, "wiredtiger: %s\n", text.c_str());
  }
  return 0;
}

WT_EVENT_HANDLER g_event_handler = {HandleError, nullptr, nullptr, nullptr};

// Arms the capture for the current thread for the lifetime of the object.
class ErrorCapture {
 public:
  ErrorCapture() : previous_(t_error_capture) { t_error_capture = &text_; }
  ~ErrorCapture() { t_error_capture = previous_; }
  ErrorCapture(const ErrorCapture&) = delete;
  ErrorCapture& operator=(const ErrorCapture&) = delete;

  void Clear() { text_.clear(); }

  // `session` may be null (before one exists); wiredtiger_strerror is used then.
  Status ToStatus(const char* op, int ret, WT_SESSION* session, const std::string& note = "") {
    if (ret == 0) return Status::OK();
    if (ret == WT_NOTFOUND) return Status::NotFound();
    const char* text =
        session != nullptr ? session->strerror(session, ret) : wiredtiger_strerror(ret);
    std::string msg = std::string("wiredtiger: ") + op + ": " + text;
    if (!text_.empty()) msg += " (" + text_ + ")";
    if (!note.empty()) msg += " " + note;
    if (ret == EINVAL) return Status::InvalidArgument(msg);
    if (ret == ENOTSUP) return Status::NotSupported(msg);
    return Status::IOError(msg);
  }

 private:
  std::string* previous_;
  std::string text_;
};

// Runs `op` (which must set the cursor's key/value itself: a failed operation clears them) until
// it stops returning WT_ROLLBACK or the attempts are used up.
template <typename Op>
int RetryOnRollback(ErrorCapture* capture, Op op) {
  int ret = op();
  for (int attempt = 1; ret == WT_ROLLBACK && attempt < kMaxRollbackAttempts; ++attempt) {
    capture->Clear();
    if (attempt < 4) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(1 << std::min(attempt, 10)));
    }
    ret = op();
  }
  return ret;
}

std::string RollbackNote(int ret) {
  if (ret != WT_ROLLBACK) return "";
  return "(gave up after " + std::to_string(kMaxRollbackAttempts) + " attempts)";
}

// WiredTiger does not copy the buffer: the Slice must outlive the operation that uses the item.
WT_ITEM ToItem(const Slice& s) {
  WT_ITEM item = {};
  item.data = s.data();
  item.size = s.size();
  return item;
}

// Sets `key` on `cursor` and runs `op(cursor)` (search, insert, remove), retrying on rollback;
// the key is set again for every attempt.
template <typename Op>
int RetryOnKey(ErrorCapture* capture, WT_CURSOR* cursor, const Slice& key, Op op) {
  WT_ITEM k = ToItem(key);
  return RetryOnRollback(capture, [&] {
    cursor->set_key(cursor, &k);
    return op(cursor);
  });
}

Slice FromItem(const WT_ITEM& item) {
  return Slice(static_cast<const char*>(item.data), item.size);
}

class WTCursor : public Cursor {
 public:
  // `session_open` is false once the owning Session has closed its WT_SESSION, which closed this
  // cursor's WT_CURSOR along with it.
  WTCursor(WT_SESSION* session, WT_CURSOR* cursor, std::shared_ptr<bool> session_open)
      : session_(session), cursor_(cursor), session_open_(std::move(session_open)) {}
  ~WTCursor() override {
    if (*session_open_) cursor_->close(cursor_);
  }

  Status Seek(const Slice& target) override {
    ErrorCapture capture;
    if (target.empty()) {
      // WiredTiger rejects an empty search key; every key is >= "", and next() on an unpositioned
      // cursor returns the first.
      int ret = cursor_->reset(cursor_);
      if (ret == 0) ret = cursor_->next(cursor_);
      return Load(&capture, "cursor next", ret);
    }
    int exact = 0;
    int ret = RetryOnKey(&capture, cursor_, target,
                         [&](WT_CURSOR* c) { return c->search_near(c, &exact); });
    // search_near lands on a neighbour, which may sort before the target.
    if (ret == 0 && exact < 0) ret = cursor_->next(cursor_);
    return Load(&capture, "cursor search_near", ret);
  }

  Status Next() override {
    ErrorCapture capture;
    return Load(&capture, "cursor next", cursor_->next(cursor_));
  }

  bool Valid() const override { return valid_; }
  Slice key() const override { return FromItem(key_); }
  Slice value() const override { return FromItem(value_); }

 private:
  // The items point into WiredTiger's page, pinned while the cursor stays positioned, which is
  // exactly the lifetime key() and value() promise.
  Status Load(ErrorCapture* capture, const char* op, int ret) {
    valid_ = false;
    if (ret == WT_NOTFOUND) return Status::OK();
    if (ret == 0) ret = cursor_->get_key(cursor_, &key_);
    if (ret == 0) ret = cursor_->get_value(cursor_, &value_);
    if (ret != 0) return capture->ToStatus(op, ret, session_, RollbackNote(ret));
    valid_ = true;
    return Status::OK();
  }

  WT_SESSION* session_;
  WT_CURSOR* cursor_;
  std::shared_ptr<bool> session_open_;
  bool valid_ = false;
  WT_ITEM key_ = {};
  WT_ITEM value_ = {};
};

Status EmptyKeyError(const char* op) {
  return Status::InvalidArgument(std::string("wiredtiger: ") + op +
                                 ": wiredtiger does not store empty keys");
}

// NewCursor cannot return a Status, so a cursor WiredTiger failed to open reports it at Seek.
class FailedCursor : public Cursor {
 public:
  explicit FailedCursor(Status status) : status_(std::move(status)) {}
  Status Seek(const Slice&) override { return status_; }
  Status Next() override { return status_; }
  bool Valid() const override { return false; }
  Slice key() const override { return Slice(); }
  Slice value() const override { return Slice(); }

 private:
  Status status_;
};

class WTSession : public Session {
 public:
  WTSession(WT_SESSION* session, WT_CURSOR* cursor) : session_(session), cursor_(cursor) {}
  ~WTSession() override {
    *open_ = false;
    session_->close(session_, nullptr);  // also closes cursor_ and any Cursor's WT_CURSOR
  }

  Status Put(const Slice& key, const Slice& value) override {
    if (key.empty()) return EmptyKeyError("put");
    ErrorCapture capture;
    WT_ITEM v = ToItem(value);
    const int ret = RetryOnKey(&capture, cursor_, key, [&](WT_CURSOR* c) {
      c->set_value(c, &v);
      return c->insert(c);
    });
    return capture.ToStatus("cursor insert", ret, session_, RollbackNote(ret));
  }

  Status Get(const Slice& key, std::string* value) override {
    if (key.empty()) return Status::NotFound();  // WiredTiger stores no empty key
    ErrorCapture capture;
    int ret = RetryOnKey(&capture, cursor_, key, [](WT_CURSOR* c) { return c->search(c); });
    if (ret == 0) {
      WT_ITEM v = {};
      ret = cursor_->get_value(cursor_, &v);
      if (ret == 0) value->assign(static_cast<const char*>(v.data), v.size);
    }
    // A positioned cursor pins its page in the cache (and blocks eviction of it); let it go now
    // rather than at the session's next operation.
    const int reset = cursor_->reset(cursor_);
    if (ret == 0) ret = reset;
    return capture.ToStatus("cursor search", ret, session_, RollbackNote(ret));
  }

  Status Delete(const Slice& key) override {
    if (key.empty()) return Status::OK();  // WiredTiger stores no empty key
    ErrorCapture capture;
    int ret = RetryOnKey(&capture, cursor_, key, [](WT_CURSOR* c) { return c->remove(c); });
    if (ret == WT_NOTFOUND) ret = 0;
    return capture.ToStatus("cursor remove", ret, session_, RollbackNote(ret));
  }

  Status Write(const WriteBatch& batch) override {
    for (const auto& e : batch.ops()) {
      if (e.type == BatchOp::Type::kPut && e.key.empty()) return EmptyKeyError("write batch");
    }
    ErrorCapture capture;
    const char* op = "begin_transaction";
    const int ret = RetryOnRollback(&capture, [&] {
      op = "begin_transaction";
      int r = session_->begin_transaction(session_, nullptr);
      if (r != 0) return r;
      for (const auto& e : batch.ops()) {
        if (e.key.empty()) continue;  // a delete (puts were checked): no empty key exists
        WT_ITEM k = ToItem(Slice(e.key));
        WT_ITEM v = ToItem(Slice(e.value));
        cursor_->set_key(cursor_, &k);
        if (e.type == BatchOp::Type::kPut) {
          op = "cursor insert (batch)";
          cursor_->set_value(cursor_, &v);
          r = cursor_->insert(cursor_);
        } else {
          op = "cursor remove (batch)";
          r = cursor_->remove(cursor_);
          if (r == WT_NOTFOUND) r = 0;
        }
        if (r != 0) {
          session_->rollback_transaction(session_, nullptr);
          return r;
        }
      }
      op = "commit_transaction";
      // A failed commit has already rolled the transaction back.
      return session_->commit_transaction(session_, nullptr);
    });
    return capture.ToStatus(op, ret, session_, RollbackNote(ret));
  }

  std::unique_ptr<Cursor> NewCursor() override {
    // Opening is cheap: WiredTiger caches closed cursors per session and hands them back.
    WT_CURSOR* c = nullptr;
    ErrorCapture capture;
    const int ret = session_->open_cursor(session_, kTable, nullptr, nullptr, &c);
    if (ret != 0) {
      return std::make_unique<FailedCursor>(capture.ToStatus("open_cursor", ret, session_));
    }
    return std::make_unique<WTCursor>(session_, c, open_);
  }

 private:
  WT_SESSION* session_;
  WT_CURSOR* cursor_;
  std::shared_ptr<bool> open_ = std::make_shared<bool>(true);
};

class WTEngine : public Engine {
 public:
  WTEngine(const std::string& path, WT_CONNECTION* conn, WT_SESSION* internal,
           std::vector<std::pair<std::string, std::string>> config)
      : Engine(path), conn_(conn), internal_(internal), config_(std::move(config)) {}
  ~WTEngine() override { Close(); }

  std::string Name() const override { return "wiredtiger"; }
  std::string Version() const override { return WiredTigerLibrary().version; }
  std::vector<std::pair<std::string, std::string>> Config() const override { return config_; }

  Status NewSession(std::unique_ptr<Session>* session) override {
    ErrorCapture capture;
    WT_SESSION* s = nullptr;
    int ret = conn_->open_session(conn_, nullptr, kSessionConfig, &s);
    if (ret != 0) return capture.ToStatus("open_session", ret, nullptr);
    WT_CURSOR* c = nullptr;
    ret = s->open_cursor(s, kTable, nullptr, nullptr, &c);
    if (ret != 0) {
      Status st = capture.ToStatus("open_cursor", ret, s);
      s->close(s, nullptr);
      return st;
    }
    *session = std::make_unique<WTSession>(s, c);
    return Status::OK();
  }

  std::vector<EngineMetric> Metrics() const override {
    std::lock_guard<std::mutex> l(mu_);
    if (internal_ == nullptr) return {};
    WT_CURSOR* c = nullptr;
    if (internal_->open_cursor(internal_, "statistics:", nullptr, nullptr, &c) != 0) return {};
    auto stat = [c](int key) {
      const char* desc = nullptr;
      const char* pvalue = nullptr;
      int64_t value = 0;
      c->set_key(c, key);
      if (c->search(c) != 0 || c->get_value(c, &desc, &pvalue, &value) != 0) return 0.0;
      return static_cast<double>(value);
    };
    std::vector<EngineMetric> m = {
        {"cache_bytes", stat(WT_STAT_CONN_CACHE_BYTES_INUSE), false},
        {"cache_dirty_bytes", stat(WT_STAT_CONN_CACHE_BYTES_DIRTY), false},
        {"eviction_clean", stat(WT_STAT_CONN_CACHE_EVICTION_CLEAN), true},
        {"eviction_dirty", stat(WT_STAT_CONN_CACHE_EVICTION_DIRTY), true},
        {"cache_read_bytes", stat(WT_STAT_CONN_CACHE_BYTES_READ), true},
        {"cache_written_bytes", stat(WT_STAT_CONN_CACHE_BYTES_WRITE), true},
        {"block_written_bytes", stat(WT_STAT_CONN_BLOCK_BYTE_WRITE), true},
        {"log_written_bytes", stat(WT_STAT_CONN_LOG_BYTES_WRITTEN), true},
    };
    c->close(c);
    return m;
  }

  // A checkpoint writes every dirty page and syncs the data and log files; afterwards the log
  // before it can be archived and a reopen needs no recovery.
  Status Settle() override {
    std::lock_guard<std::mutex> l(mu_);
    if (internal_ == nullptr) return Status::InvalidArgument("wiredtiger: settle after close");
    ErrorCapture capture;
    return capture.ToStatus("checkpoint", internal_->checkpoint(internal_, nullptr), internal_);
  }

  Status Close() override {
    std::lock_guard<std::mutex> l(mu_);
    if (conn_ == nullptr) return Status::OK();
    ErrorCapture capture;
    // Closing the connection closes internal_ and takes a final checkpoint.
    const int ret = conn_->close(conn_, nullptr);
    conn_ = nullptr;
    internal_ = nullptr;
    return capture.ToStatus("close", ret, nullptr);
  }

 private:
  mutable std::mutex mu_;  // guards internal_, which is a session and so not thread-safe
  WT_CONNECTION* conn_;
  WT_SESSION* internal_;
  const std::vector<std::pair<std::string, std::string>> config_;
};

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The snappy extension that matches the loaded libwiredtiger lives next to it; an extension from a
// different build could disagree on the extension API.
std::string FindSnappyExtension(std::string* searched) {
  std::vector<std::string> dirs;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&wiredtiger_open), &info) != 0 && info.dli_fname != nullptr) {
    const std::string lib = info.dli_fname;
    const size_t slash = lib.rfind('/');
    if (slash != std::string::npos) dirs.push_back(lib.substr(0, slash));
  }
  if (std::find(dirs.begin(), dirs.end(), kMultiarchLibDir) == dirs.end()) {
    dirs.push_back(kMultiarchLibDir);
  }
  for (const auto& dir : dirs) {
    std::string candidate = dir + "/" + kSnappyExtension;
    if (FileExists(candidate)) return candidate;
    if (!searched->empty()) searched->append(", ");
    searched->append(dir);
  }
  return "";
}

// The whole budget is WiredTiger's cache, its only one (clean and dirty pages alike). Its default
// dirty-eviction targets (eviction_dirty_target=5, eviction_dirty_trigger=20, % of the cache)
// make eviction write the same pages back over and over once the dirty part of the working set
// passes them: measured in docs/engines.md ("Comparing engines fairly"), and raised here.
MemoryPlan PlanWiredTigerMemory(uint64_t budget) {
  MemoryPlan plan;
  plan.parts = {{"cache_size", budget, "clean and dirty pages: WiredTiger's only cache"}};
  plan.settings = {{"eviction_dirty_target", "50"}, {"eviction_dirty_trigger", "80"}};
  plan.direct_io = "direct_io=[data]";
  return plan;
}

std::string ConnectionConfig(const EngineOptions& o, const std::string& extension) {
  std::string c;
  if (o.create) c += "create,";
  c += "cache_size=" + std::to_string(o.memory_budget != 0 ? o.memory_budget : o.cache_size);
  if (o.memory_budget != 0) {
    for (const auto& [option, value] : PlanWiredTigerMemory(o.memory_budget).settings) {
      c += ",";
      c += option;
      c += "=";
      c += value;
    }
    if (o.io_bound) c += "," + PlanWiredTigerMemory(o.memory_budget).direct_io;
  }
  // WiredTiger's own threads (log, checkpoint, eviction) take sessions from this budget too.
  c += ",session_max=" + std::to_string(std::max(100, o.max_sessions + 20));
  c += ",log=(enabled=true)";
  // "fast" connection statistics feed Metrics() (cache, eviction, bytes written); they are
  // per-connection counters, cheap next to an operation.
  c += ",statistics=(fast)";
  c += o.sync ? ",transaction_sync=(enabled=true,method=fsync)"
              : ",transaction_sync=(enabled=false)";
  // The config recorded with a result must be all there is: no settings persisted in
  // WiredTiger.basecfg at creation, none from the WIREDTIGER_CONFIG environment variable.
  c += ",config_base=false,use_environment=false";
  if (!extension.empty()) c += ",extensions=[\"" + extension + "\"]";
  if (!o.engine_options.empty()) c += "," + o.engine_options;
  return c;
}

// `key` (dotted for nested groups, e.g. "log.enabled") as WiredTiger reads it from `config`: the
// last occurrence wins, so this sees through --engine_options overrides. Empty if absent.
std::string ConfigValue(const std::string& config, const char* key) {
  WT_CONFIG_PARSER* parser = nullptr;
  if (wiredtiger_config_parser_open(nullptr, config.data(), config.size(), &parser) != 0) return "";
  WT_CONFIG_ITEM item;
  std::string value;
  if (parser->get(parser, key, &item) == 0) {
    value = item.type == WT_CONFIG_ITEM::WT_CONFIG_ITEM_NUM ? std::to_string(item.val)
                                                            : std::string(item.str, item.len);
  }
  parser->close(parser);
  return value;
}

std::string Durability(const std::string& conn_config) {
  if (ConfigValue(conn_config, "log.enabled") != "true") {
    return "log off: durable only at checkpoints (settle/close)";
  }
  if (ConfigValue(conn_config, "transaction_sync.enabled") != "true") {
    return "log on; commit does not sync the log (durable at settle/close)";
  }
  const std::string method = ConfigValue(conn_config, "transaction_sync.method");
  return "log on; each commit syncs the log (method=" + (method.empty() ? "fsync" : method) + ")";
}

std::string TableConfig(const std::string& compression) {
  // 'u' = raw bytes, compared with memcmp then length: the same order as Slice::compare.
  std::string c = "key_format=u,value_format=u";
  if (compression != "none") c += ",block_compressor=" + compression;
  return c;
}

// The block_compressor an existing table was created with ("none" if it has none).
Status ExistingCompressor(WT_SESSION* session, std::string* compressor) {
  ErrorCapture capture;
  WT_CURSOR* meta = nullptr;
  int ret = session->open_cursor(session, "metadata:", nullptr, nullptr, &meta);
  if (ret != 0) return capture.ToStatus("open metadata cursor", ret, session);
  meta->set_key(meta, kTableFile);
  ret = meta->search(meta);
  const char* value = nullptr;
  if (ret == 0) ret = meta->get_value(meta, &value);
  WT_CONFIG_PARSER* parser = nullptr;
  if (ret == 0) ret = wiredtiger_config_parser_open(session, value, strlen(value), &parser);
  if (ret == 0) {
    WT_CONFIG_ITEM item;
    ret = parser->get(parser, "block_compressor", &item);
    if (ret == 0) *compressor = item.len == 0 ? "none" : std::string(item.str, item.len);
    if (ret == WT_NOTFOUND) {
      *compressor = "none";
      ret = 0;
    }
    parser->close(parser);
  }
  meta->close(meta);
  return capture.ToStatus("read table metadata", ret, session);
}

LibraryFacts WiredTigerLibrary() {
  int major = 0, minor = 0, patch = 0;
  wiredtiger_version(&major, &minor, &patch);
  return {std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch), ""};
}

// The compressions this build can write, and the directory for a new or existing database.
Status CheckOptions(const EngineOptions& options) {
  if (options.compression == "lz4" || options.compression == "zstd") {
    return Status::NotSupported("wiredtiger: --compression=" + options.compression +
                                " is not available: Debian's WiredTiger 3.2.1 ships only the "
                                "snappy and zlib compressors (use none or snappy)");
  }
  if (options.compression != "none" && options.compression != "snappy") {
    return Status::InvalidArgument("wiredtiger: unknown compression '" + options.compression + "'");
  }
  if (options.create) {
    std::error_code ec;
    std::filesystem::create_directories(options.path, ec);
    if (ec)
      return Status::IOError("wiredtiger: cannot create " + options.path + ": " + ec.message());
  } else if (!FileExists(options.path + "/WiredTiger")) {
    return Status::InvalidArgument("no wiredtiger database at " + options.path);
  }
  return Status::OK();
}

// Opens the connection with kvbench's config, the snappy extension and --engine_options, which
// are validated first: wiredtiger_open ignores some malformed strings (")(" opens fine).
Status OpenConnection(const EngineOptions& options, const std::string& snappy,
                      std::string* conn_config, WT_CONNECTION** conn) {
  ErrorCapture capture;
  if (!options.engine_options.empty()) {
    const int vret = wiredtiger_config_validate(nullptr, &g_event_handler, "wiredtiger_open",
                                                options.engine_options.c_str());
    if (vret != 0) {
      return capture.ToStatus("--engine_options", vret, nullptr,
                              "(a wiredtiger_open config string is expected)");
    }
    capture.Clear();
  }
  *conn_config = ConnectionConfig(options, snappy);
  const int ret =
      wiredtiger_open(options.path.c_str(), &g_event_handler, conn_config->c_str(), conn);
  return ret == 0 ? Status::OK() : capture.ToStatus("open", ret, nullptr);
}

// Creates the table, or checks the existing one and that it was created with --compression
// (a reopened table keeps its compressor; a run must not be labelled with one it does not use).
// *table_config is what the header records.
Status OpenTable(const EngineOptions& options, WT_SESSION* internal, std::string* table_config) {
  ErrorCapture capture;
  if (options.create) {
    *table_config = TableConfig(options.compression);
    const int ret = internal->create(internal, kTable, table_config->c_str());
    return ret == 0 ? Status::OK() : capture.ToStatus("create table", ret, internal);
  }
  WT_CURSOR* probe = nullptr;
  const int ret = internal->open_cursor(internal, kTable, nullptr, nullptr, &probe);
  if (ret != 0) {
    return Status::InvalidArgument("no wiredtiger database at " + options.path + " (" +
                                   capture.ToStatus("open table", ret, internal).message() + ")");
  }
  probe->close(probe);
  std::string existing;
  Status s = ExistingCompressor(internal, &existing);
  if (!s.ok()) return s;
  if (existing != options.compression) {
    return Status::InvalidArgument("wiredtiger: the table at " + options.path +
                                   " was created with block_compressor=" + existing +
                                   "; reopen it with --compression=" + existing);
  }
  *table_config = "(existing table) " + TableConfig(existing);
  return Status::OK();
}

Status OpenWiredTigerEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine) {
  Status s = CheckOptions(options);
  if (!s.ok()) return s;
  // Snappy is needed to write a snappy table, and to read one back when reopening whatever
  // --compression says (a mismatch is refused in OpenTable, with a better message than
  // WiredTiger's).
  std::string searched;
  const std::string snappy = options.compression == "snappy" || !options.create
                                 ? FindSnappyExtension(&searched)
                                 : std::string();
  if (options.compression == "snappy" && snappy.empty()) {
    return Status::NotSupported(std::string("wiredtiger: --compression=snappy needs ") +
                                kSnappyExtension + ", not found in " + searched);
  }
  std::string conn_config, table_config;
  WT_CONNECTION* conn = nullptr;
  s = OpenConnection(options, snappy, &conn_config, &conn);
  if (!s.ok()) return s;
  WT_SESSION* internal = nullptr;
  ErrorCapture capture;
  const int ret = conn->open_session(conn, nullptr, nullptr, &internal);
  s = ret == 0 ? OpenTable(options, internal, &table_config)
               : capture.ToStatus("open_session", ret, nullptr);
  if (!s.ok()) {
    conn->close(conn, nullptr);
    return s;
  }
  std::vector<std::pair<std::string, std::string>> config = {
      {"connection_config", conn_config},
      {"table", kTable},
      {"table_config", table_config},
      {"session_config", kSessionConfig},
      {"cache_size", ConfigValue(conn_config, "cache_size")},
      {"compression", options.compression},
      {"snappy_extension", snappy.empty() ? "(not loaded)" : snappy},
      {"durability", Durability(conn_config)},
      {"engine_options", options.engine_options.empty() ? "(none)" : options.engine_options},
      {"library", wiredtiger_version(nullptr, nullptr, nullptr)},
  };
  if (options.memory_budget != 0) {
    for (auto& kv : BudgetConfig(options.memory_budget, PlanWiredTigerMemory(options.memory_budget),
                                 options.io_bound)) {
      config.push_back(std::move(kv));
    }
  }
  *engine = std::make_unique<WTEngine>(options.path, conn, internal, std::move(config));
  return Status::OK();
}

}  // namespace

KVBENCH_ENGINE_ADAPTER(wiredtiger) = {&OpenWiredTigerEngine, &WiredTigerLibrary, nullptr,
                                      &PlanWiredTigerMemory};

}  // namespace kvbench
