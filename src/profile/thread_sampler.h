// One thread's CPU-time samples: a perf_event_open(2) software cpu-clock event on that thread
// (no PMU needed) that writes its thread id and frame-pointer call chain into a ring buffer shared
// with the kernel, once per `period_ns` of the thread's CPU time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kvbench {

class ThreadSampler {
 public:
  // Opens it disabled on thread `tid` (0: the calling thread) of this process. On failure,
  // nullptr with *why ("perf_event_paranoid=3 refuses it (EACCES): ..."); `kernel` = false
  // leaves kernel frames (and time spent in the kernel) out, as perf_event_paranoid 2 requires of
  // an unprivileged user.
  static std::unique_ptr<ThreadSampler> Open(pid_t tid, uint64_t period_ns, bool kernel,
                                             std::string* why);
  ~ThreadSampler();
  ThreadSampler(const ThreadSampler&) = delete;
  ThreadSampler& operator=(const ThreadSampler&) = delete;

  // Thread-safe (an ioctl): any thread may start or stop it.
  void Enable();
  void Disable();

  // Every sample the kernel wrote since the last call, in order: its call chain, innermost
  // first, with the kernel's context markers removed (kernel addresses are the high ones).
  // REQUIRES: one caller at a time.
  void Drain(const std::function<void(const uint64_t* ips, size_t n)>& on_sample);
  uint64_t lost() const { return lost_; }  // samples dropped because the buffer was full
  pid_t tid() const { return tid_; }

 private:
  ThreadSampler(int fd, void* base, size_t pages, pid_t tid);

  int fd_;
  void* base_;  // the metadata page, then the data pages
  size_t map_bytes_;
  size_t data_bytes_;  // a power of two
  pid_t tid_;
  uint64_t lost_ = 0;
  std::vector<uint64_t> scratch_;  // a record that wraps around the end of the buffer
};

// The calling thread's id.
pid_t CurrentThreadId();

}  // namespace kvbench
