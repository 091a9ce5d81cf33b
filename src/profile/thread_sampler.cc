#include "profile/thread_sampler.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "stats/perf_counters.h"

namespace kvbench {

namespace {

// 2^5 data pages (128 KiB with 4 KiB pages) per thread: a sample of a 30-frame stack is ~260
// bytes, so at 1 kHz the buffer holds ~0.5 s, and the collector drains it every 20 ms.
constexpr size_t kDataPages = 32;

// A sample as PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN lays it out after its header.
struct SampleHead {
  uint32_t pid, tid;
  uint64_t nr;
};

}  // namespace

pid_t CurrentThreadId() { return static_cast<pid_t>(syscall(SYS_gettid)); }

std::unique_ptr<ThreadSampler> ThreadSampler::Open(pid_t tid, uint64_t period_ns, bool kernel,
                                                   std::string* why) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = period_ns;  // cpu-clock counts nanoseconds of the thread's CPU time
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
  attr.disabled = 1;
  attr.exclude_hv = 1;
  attr.exclude_kernel = kernel ? 0 : 1;
  attr.exclude_callchain_kernel = kernel ? 0 : 1;
  const int fd = static_cast<int>(
      syscall(SYS_perf_event_open, &attr, tid == 0 ? 0 : tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) {
    const int err = errno;
    // perf_event_paranoid does not apply to root: a refusal then comes from a seccomp filter or
    // a container's policy, and the paranoid level would be the wrong thing to blame.
    *why = "cpu-clock sampling: " +
           ((err == EPERM || err == EACCES) && geteuid() == 0
                ? std::string("refused (") + (err == EPERM ? "EPERM" : "EACCES") +
                      ") although kvbench runs as root: a seccomp filter or a container's policy "
                      "forbids perf_event_open"
                : PerfOpenFailure(err, PerfKind::kSoftware, "cpu-clock", /*first_of_kind=*/true));
    return nullptr;
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t pages = 1 + kDataPages;
  void* base = mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    close(fd);
    *why = std::string("cpu-clock sampling: mapping its ring buffer failed: ") +
           std::strerror(err) + (err == EPERM ? " (kernel.perf_event_mlock_kb)" : "");
    return nullptr;
  }
  return std::unique_ptr<ThreadSampler>(
      new ThreadSampler(fd, base, pages, tid == 0 ? CurrentThreadId() : tid));
}

ThreadSampler::ThreadSampler(int fd, void* base, size_t pages, pid_t tid)
    : fd_(fd),
      base_(base),
      map_bytes_(pages * static_cast<size_t>(sysconf(_SC_PAGESIZE))),
      data_bytes_((pages - 1) * static_cast<size_t>(sysconf(_SC_PAGESIZE))),
      tid_(tid) {}

ThreadSampler::~ThreadSampler() {
  munmap(base_, map_bytes_);
  close(fd_);
}

void ThreadSampler::Enable() { ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0); }
void ThreadSampler::Disable() { ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0); }

void ThreadSampler::Drain(const std::function<void(const uint64_t*, size_t)>& on_sample) {
  auto* meta = static_cast<perf_event_mmap_page*>(base_);
  const size_t offset = meta->data_offset != 0 ? meta->data_offset : map_bytes_ - data_bytes_;
  const char* data = static_cast<const char*>(base_) + offset;
  const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  std::vector<uint64_t> ips;
  while (tail < head) {
    perf_event_header h;
    const size_t at = tail & (data_bytes_ - 1);
    std::memcpy(&h, data + at, sizeof(h));  // records are 8-byte aligned: a header never wraps
    if (h.size < sizeof(h) || tail + h.size > head) break;
    scratch_.resize((h.size + 7) / 8);
    char* rec = reinterpret_cast<char*>(scratch_.data());
    const size_t first = std::min<size_t>(h.size, data_bytes_ - at);
    std::memcpy(rec, data + at, first);
    std::memcpy(rec + first, data, h.size - first);
    tail += h.size;
    if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
      uint64_t lost;
      std::memcpy(&lost, rec + sizeof(h) + 8, sizeof(lost));
      lost_ += lost;
    }
    if (h.type != PERF_RECORD_SAMPLE || h.size < sizeof(h) + sizeof(SampleHead)) continue;
    SampleHead s;
    std::memcpy(&s, rec + sizeof(h), sizeof(s));
    const char* chain = rec + sizeof(h) + sizeof(s);
    if (sizeof(h) + sizeof(s) + s.nr * 8 > h.size) continue;
    ips.clear();
    for (uint64_t i = 0; i < s.nr; ++i) {
      uint64_t ip;
      std::memcpy(&ip, chain + i * 8, sizeof(ip));
      if (ip >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) continue;  // PERF_CONTEXT_KERNEL, ...
      ips.push_back(ip);
    }
    on_sample(ips.data(), ips.size());
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

}  // namespace kvbench
