// The `memory` reference engine: a sorted std::map behind one mutex. Not a reader-writer lock:
// glibc's prefers readers, and busy readers would starve a *whilewriting writer.
//
// It is the reference for tests and for separating harness cost from storage cost; it is labelled
// as a reference engine wherever it appears in output. Data lives in memory and is written to
// <path>/MEMORY-SNAPSHOT on Close, and read back when opened with create=false, so that it obeys
// the same reopen semantics as the storage engines. Nothing is durable before Close.
//
// Its nodes, keys and values come from an arena it maps and touches when the database is opened
// (see Arena): the first-touch page faults of a fresh heap are paid there, outside every measured
// loop, and each repeat of a fill measures the map, not the kernel.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory_resource>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kv/registry.h"

namespace kvbench {

namespace {

constexpr const char* kSnapshotName = "MEMORY-SNAPSHOT";

// The memory the map allocates from: a region mapped and written to, page by page, when the
// database is opened, sized for the run's keys (EngineOptions::expected_keys and expected_bytes),
// then the heap beyond it. A fresh heap comes from the kernel a page fault at a time, on first
// touch: the first fillseq of a run paid one fault per 16 keys (1.3 of its 1.7 us/op of CPU here)
// and ran 4-5x slower than the repeats after it, which reused the pages the one before had freed.
// Blocks up to kLargestClass bytes are kept in free lists by size class (16 bytes apart) and
// reused; larger ones come from the heap and go back to it. Not thread-safe: the store's mutex
// guards it. (std::pmr::unsynchronized_pool_resource did the same 2.6x slower per fill op.)
class Arena : public std::pmr::memory_resource {
 public:
  static constexpr size_t kGrain = 16;
  static constexpr size_t kLargestClass = 4096;
  static constexpr size_t kHeapChunk = 1 << 20;  // taken from the heap once the region is used

  explicit Arena(size_t bytes) {
    if (bytes == 0) return;
    Region r = TakeRegion(bytes);
    if (r.base == nullptr) return;  // then everything comes from the heap, faults and all
    base_ = next_ = r.base;
    end_ = base_ + r.size;
    size_ = r.size;
  }
  ~Arena() override {
    for (void* chunk : chunks_) ::operator delete(chunk);
    if (base_ != nullptr) KeepRegion({base_, size_});
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  size_t prefaulted() const { return size_; }
  size_t used() const { return used_; }      // taken from the region, ever
  size_t beyond() const { return beyond_; }  // held from the heap beyond it, now

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  static size_t ClassOf(size_t bytes) { return (std::max<size_t>(bytes, 1) + kGrain - 1) / kGrain; }

  void* do_allocate(size_t bytes, size_t align) override {
    if (bytes > kLargestClass || align > kGrain) {
      beyond_ += bytes;
      return ::operator new(bytes, std::align_val_t(std::max(align, kGrain)));
    }
    const size_t c = ClassOf(bytes);
    if (FreeBlock* b = free_[c]) {
      free_[c] = b->next;
      return b;
    }
    const size_t size = c * kGrain;
    if (next_ == nullptr || next_ + size > end_) {  // the region (or the last chunk) is used up
      next_ = static_cast<char*>(::operator new(kHeapChunk));
      end_ = next_ + kHeapChunk;
      chunks_.push_back(next_);
      beyond_ += kHeapChunk;
    }
    void* p = next_;
    next_ += size;
    if (chunks_.empty()) used_ += size;
    return p;
  }
  void do_deallocate(void* p, size_t bytes, size_t align) override {
    if (bytes > kLargestClass || align > kGrain) {
      beyond_ -= bytes;
      ::operator delete(p, std::align_val_t(std::max(align, kGrain)));
      return;
    }
    const size_t c = ClassOf(bytes);
    free_[c] = new (p) FreeBlock{free_[c]};
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  // A region mapped and written to. The last engine's is kept for the next (a fill's repeats,
  // each on a new database, and the open before the first): written once per process.
  struct Region {
    char* base = nullptr;
    size_t size = 0;
  };
  static std::mutex& SpareMutex() {
    static std::mutex mu;
    return mu;
  }
  static Region& Spare() {
    static Region spare;
    return spare;
  }
  static Region TakeRegion(size_t bytes) {
    std::lock_guard<std::mutex> l(SpareMutex());
    Region& spare = Spare();
    if (spare.base != nullptr && spare.size >= bytes) return std::exchange(spare, Region{});
    if (spare.base != nullptr) {
      const Region old = std::exchange(spare, Region{});
      munmap(old.base, old.size);
    }
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return {};
    // A write to every page, from here. MAP_POPULATE alone was not enough on this VM: a fill
    // into a populated region still ran at 2.4-2.8 us/op, into one written page by page at 0.6
    // (the first write to a page cost about 29 us there, whoever mapped it).
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    for (size_t at = 0; at < bytes; at += page) static_cast<volatile char*>(p)[at] = 0;
    return {static_cast<char*>(p), bytes};
  }
  static void KeepRegion(Region r) {
    std::lock_guard<std::mutex> l(SpareMutex());
    Region& spare = Spare();
    if (spare.base == nullptr || spare.size < r.size) std::swap(spare, r);
    if (r.base != nullptr) munmap(r.base, r.size);
  }

  char* base_ = nullptr;  // the region
  size_t size_ = 0, used_ = 0, beyond_ = 0;
  char* next_ = nullptr;  // where the next block is cut, in the region or the last chunk
  char* end_ = nullptr;
  std::vector<void*> chunks_;  // taken from the heap beyond the region
  FreeBlock* free_[kLargestClass / kGrain + 1] = {};
};

// 256 MiB: about 900,000 entries of 16 + 100 bytes. Writing every page costs 3-30 us a page on a
// VM (20 s for 1 GiB at load 16 on 2 CPUs here): a larger run pays for the rest in its loop, in
// every repeat alike (the heap beyond the region goes back at each close).
constexpr uint64_t kMaxArenaBytes = 256ull << 20;

// Bytes the map will hold for `keys` keys of `bytes` key+value bytes in all: a node (the tree's
// links and two std::pmr::string headers) and the size classes' rounding of each string's block,
// measured at 16-byte keys and 100-byte values (arena_used_bytes / --num); capped at half of the
// memory available and at kMaxArenaBytes, so a larger run is not refused, only faulted as it grows
// beyond it.
size_t ArenaBytes(uint64_t keys, uint64_t bytes) {
  constexpr uint64_t kPerKey = 160;
  uint64_t want = keys * kPerKey + bytes + bytes / 8;
  uint64_t available = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string name;
  uint64_t kb = 0;
  std::string unit;
  while (meminfo >> name >> kb >> unit) {
    if (name == "MemAvailable:") available = kb * 1024;
  }
  if (available == 0) {
    available = static_cast<uint64_t>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  }
  want = std::min({want, available / 2, kMaxArenaBytes});
  constexpr uint64_t kUnit = 2ull << 20;
  return static_cast<size_t>((want + kUnit - 1) / kUnit * kUnit);
}

using Map = std::pmr::map<std::pmr::string, std::pmr::string, std::less<>>;

struct Store {
  explicit Store(size_t arena_bytes) : arena(arena_bytes), map(&arena) {}
  // Inserts or replaces; the caller holds `mu` (or is the only thread).
  void Put(std::string_view key, std::string_view value) {
    auto it = map.lower_bound(key);
    if (it == map.end() || std::string_view(it->first) != key) {
      it = map.emplace_hint(it, std::piecewise_construct, std::forward_as_tuple(key),
                            std::forward_as_tuple());
    }
    it->second.assign(value.data(), value.size());
  }

  std::mutex mu;
  Arena arena;  // used under `mu` only; outlives the map (members are destroyed in reverse)
  Map map;
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
    return Load(store_->map.upper_bound(std::string_view(key_)));
  }
  bool Valid() const override { return valid_; }
  Slice key() const override { return key_; }
  Slice value() const override { return value_; }

 private:
  template <typename It>
  Status Load(It it) {
    valid_ = it != store_->map.end();
    if (valid_) {
      key_.assign(it->first.data(), it->first.size());
      value_.assign(it->second.data(), it->second.size());
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
    store_->Put(key.view(), value.view());
    return Status::OK();
  }
  Status Get(const Slice& key, std::string* value) override {
    std::lock_guard<std::mutex> l(store_->mu);
    auto it = store_->map.find(key.view());
    if (it == store_->map.end()) return Status::NotFound();
    value->assign(it->second.data(), it->second.size());
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
        store_->Put(op.key, op.value);
      } else {
        auto it = store_->map.find(std::string_view(op.key));
        if (it != store_->map.end()) store_->map.erase(it);
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
  MemoryEngine(const std::string& path, size_t arena_bytes) : Engine(path), store_(arena_bytes) {}
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
      store_.Put(k, v);
    }
    std::fclose(f);
    return s;
  }

  std::string Name() const override { return "memory"; }
  std::string Version() const override { return "reference"; }
  std::vector<std::pair<std::string, std::string>> Config() const override {
    return {{"kind", "reference engine: std::map behind a mutex"},
            {"durability", "none until Close, which writes " + std::string(kSnapshotName)},
            {"arena", std::to_string(store_.arena.prefaulted()) +
                          " bytes mapped and touched at open, for the run's keys; the heap "
                          "beyond them"}};
  }
  // The arena's use: what was touched at open, what the map took of it, and what it took from
  // the heap beyond it (allocated as it went, page faults and all).
  std::vector<EngineMetric> Metrics() const override {
    std::lock_guard<std::mutex> l(store_.mu);
    return {{"arena_prefaulted_bytes", static_cast<double>(store_.arena.prefaulted()), false},
            {"arena_used_bytes", static_cast<double>(store_.arena.used()), false},
            {"heap_bytes_beyond_arena", static_cast<double>(store_.arena.beyond()), false}};
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
  mutable Store store_;
  bool closed_ = false;
};

Status OpenMemoryEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine) {
  if (options.compression != "none") {
    return Status::NotSupported("memory engine does not compress (use --compression=none)");
  }
  std::error_code ec;
  std::filesystem::create_directories(options.path, ec);
  if (ec) return Status::IOError("cannot create " + options.path + ": " + ec.message());
  uint64_t keys = options.expected_keys, bytes = options.expected_bytes;
  if (!options.create) {  // the snapshot's keys are in memory too
    const uint64_t snapshot = std::filesystem::file_size(options.path + "/" + kSnapshotName, ec);
    if (!ec) bytes = std::max(bytes, snapshot);
  }
  auto e = std::make_unique<MemoryEngine>(options.path, ArenaBytes(keys, bytes));
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
