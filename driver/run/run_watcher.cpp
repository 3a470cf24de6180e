#include "run/run_watcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "kvbench/clock.hpp"
#include "kvbench/exit_codes.hpp"
#include "kvbench/sqlite.hpp"

namespace kv::drive {
namespace {

// The write end of the running RunWatcher's pipe, for leave_now_on_signal; -1 when none.
std::atomic<int> g_leave_fd{-1};

}  // namespace

RunWatcher::RunWatcher(std::string db_path, int64_t run_id)
    : db_path_(std::move(db_path)), run_id_(run_id) {
  if (pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) pipe_[0] = pipe_[1] = -1;
  thread_ = std::thread([this] { loop(); });
  g_leave_fd.store(pipe_[1]);
}

RunWatcher::~RunWatcher() {
  g_leave_fd.store(-1);
  done_ = true;
  thread_.join();
  for (int fd : pipe_) {
    if (fd >= 0) close(fd);
  }
}

void RunWatcher::loop() {
  while (!done_) {
    pollfd p{pipe_[0], POLLIN, 0};
    int n = poll(&p, 1, 50);
    if (n > 0 && (p.revents & POLLIN)) leave();
  }
}

// The one status change outside ResultsWriter besides common's mark_abandoned: the run's own
// thread may be stuck inside a write (a stalled disk), so this thread opens the file itself,
// marks what is running and exits at once.
void RunWatcher::leave() {
  try {
    Database db = Database::open(db_path_, 2000);
    const int64_t now = now_ts_us();
    db.prepare(
          "UPDATE phases SET status = 'interrupted', ended_ts_us = ? "
          "WHERE run_id = ? AND status = 'running'")
        .bind(1, now)
        .bind(2, run_id_)
        .run();
    db.prepare(
          "UPDATE runs SET status = 'interrupted', ended_ts_us = ?, error = "
          "'interrupted by a second signal: left at once' "
          "WHERE run_id = ? AND status = 'running'")
        .bind(1, now)
        .bind(2, run_id_)
        .run();
  } catch (...) {
    // The file is busy or gone: the next open marks the run incomplete instead.
  }
  _exit(kExitInterrupted);
}

void leave_now_on_signal() noexcept {
  int fd = g_leave_fd.load();
  if (fd < 0) _exit(kExitInterrupted);
  char c = 1;
  if (write(fd, &c, 1) != 1) _exit(kExitInterrupted);
}

}  // namespace kv::drive
