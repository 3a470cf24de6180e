// The thread beside a run that acts on signals without waiting for the workers.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace kv::drive {

// While it exists, a second Ctrl-C (leave_now_on_signal) marks the run and its running phases
// interrupted on a connection of its own and exits kExitInterrupted at once, whatever the other
// threads are doing. (The first Ctrl-C needs no thread: the event loop watches the stop flag
// and gives up what is in flight within its grace, loop/event_worker.cpp.)
// One at a time per process (leave_now_on_signal reaches the latest).
class RunWatcher {
 public:
  RunWatcher(std::string db_path, int64_t run_id);
  ~RunWatcher();
  RunWatcher(const RunWatcher&) = delete;
  RunWatcher& operator=(const RunWatcher&) = delete;

 private:
  void loop();
  [[noreturn]] void leave();

  const std::string db_path_;
  const int64_t run_id_;
  int pipe_[2] = {-1, -1};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// For a signal handler (async-signal-safe): the second Ctrl-C. While a RunWatcher exists (a run
// is being recorded), it marks the run and its running phases `interrupted` on a connection of
// its own and exits kExitInterrupted at once; otherwise the process exits now.
void leave_now_on_signal() noexcept;

}  // namespace kv::drive
