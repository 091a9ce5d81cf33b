#include "runner/signal_watcher.h"

#include <pthread.h>
#include <unistd.h>

#include <thread>

namespace kvbench {

SignalWatcher::SignalWatcher(std::function<void(int)> on_signal)
    : on_signal_(std::move(on_signal)) {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  // Detached: it waits for a signal that may never come; the process exits around it.
  std::thread([this] {
    int sig = 0;
    bool first = true;
    while (sigwait(&set_, &sig) == 0) {
      if (!first) _exit(128 + sig);
      first = false;
      on_signal_(sig);
    }
  }).detach();
}

const char* SignalName(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

}  // namespace kvbench
