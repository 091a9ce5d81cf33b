// SIGINT and SIGTERM end a run cleanly: the workers stop, the finished benchmarks are written to
// the JSON document (marked incomplete) and the process exits with 128 + the signal.
#pragma once

#include <signal.h>

#include <functional>

namespace kvbench {

// Blocks SIGINT and SIGTERM in every thread and takes them in one thread of its own with sigwait,
// so `on_signal` runs as ordinary code, not in a signal handler. A second signal ends the process
// at once (exit 128 + signal).
// REQUIRES: constructed before any other thread exists (threads inherit the signal mask of the
// thread that creates them). Never destroyed: its thread may be in sigwait when the process exits.
class SignalWatcher {
 public:
  explicit SignalWatcher(std::function<void(int)> on_signal);

 private:
  sigset_t set_;
  std::function<void(int)> on_signal_;
};

// "SIGINT", "SIGTERM".
const char* SignalName(int sig);

}  // namespace kvbench
