// The thread beside a run that acts on signals without waiting for the workers.
#pragma once

#include <atomic>
#include <csignal>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/store_client.hpp"

namespace kv::drive {

// While it exists:
//  - once `stop` is set (the first Ctrl-C), it interrupts the watched clients, so a request
//    blocked on a stalled store gives up at once instead of after --timeout;
//  - a second Ctrl-C (leave_now_on_signal) marks the run and its running phases interrupted on
//    a connection of its own and exits kExitInterrupted at once, whatever the other threads are
//    doing.
// One at a time per process (leave_now_on_signal reaches the latest).
class RunWatcher {
 public:
  RunWatcher(const std::atomic<bool>& stop, std::string db_path, int64_t run_id);
  ~RunWatcher();
  RunWatcher(const RunWatcher&) = delete;
  RunWatcher& operator=(const RunWatcher&) = delete;

  // The clients of the phase now running (nullptr: none); interrupted at once if stop is set.
  void watch(std::vector<std::unique_ptr<StoreClient>>* clients);

 private:
  void loop();
  void interrupt_locked();
  [[noreturn]] void leave();

  const std::atomic<bool>& stop_;
  const std::string db_path_;
  const int64_t run_id_;
  int pipe_[2] = {-1, -1};
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::vector<std::unique_ptr<StoreClient>>* clients_ = nullptr;
  std::thread thread_;
};

// For a signal handler (async-signal-safe): the second Ctrl-C. While a RunWatcher exists (a run
// is being recorded), it marks the run and its running phases `interrupted` on a connection of
// its own and exits kExitInterrupted at once; otherwise the process exits now.
void leave_now_on_signal() noexcept;

// The signal a group's parent sends its processes when SIGINT/SIGTERM reached it alone: each
// stops as at a first Ctrl-C. Not SIGINT/SIGTERM themselves: after a terminal's Ctrl-C, which
// reaches every process, they would be a second signal and make the processes leave at once.
inline constexpr int kGroupStopSignal = SIGUSR1;

}  // namespace kv::drive
