#include "run/phase_barrier.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <thread>

#include "kvbench/clock.hpp"
#include "kvbench/line_pipe.hpp"
#include "kvbench/log.hpp"

namespace kv::drive {
namespace {

// Set once the parent is gone: every later phase starts at once.
std::atomic<bool> g_parent_gone{false};

void parent_gone() {
  if (!g_parent_gone.exchange(true))
    log_warn() << "the group's parent is gone: this process's phases start without the others";
}

}  // namespace

bool wait_phase_barrier(int in_fd, int out_fd, int target_ordinal, int phase_ordinal,
                        const std::atomic<bool>& stop) {
  if (in_fd < 0 || g_parent_gone.load()) return true;
  if (!write_line(out_fd, "ready " + std::to_string(target_ordinal) + " " +
                              std::to_string(phase_ordinal))) {
    parent_gone();
    return true;
  }
  // Polled in slices, so a Ctrl-C ends the wait.
  for (;;) {
    if (stop.load()) return false;
    pollfd p{in_fd, POLLIN, 0};
    const int n = ::poll(&p, 1, 100);
    if (n == 0 || (n < 0 && errno == EINTR)) continue;
    break;
  }
  const std::optional<std::string> line = read_line(in_fd);
  int64_t go_ts_us = 0;
  if (!line || std::sscanf(line->c_str(), "go %" SCNd64, &go_ts_us) != 1) {
    parent_gone();
    return true;
  }
  sleep_until_ts_us(go_ts_us);  // kGoLeadUs ahead: a Ctrl-C then ends the phase just begun
  return true;
}

PhaseBarrierLeader::~PhaseBarrierLeader() {
  for (auto& m : members_) drop(m);
}

void PhaseBarrierLeader::add(int from_child, int to_child) {
  members_.push_back({from_child, to_child, {}, false, false});
}

void PhaseBarrierLeader::drop(Member& m) {
  if (m.from >= 0) ::close(m.from);
  if (m.to >= 0) ::close(m.to);
  m.from = m.to = -1;
  m.gone = true;
  m.ready = false;
}

void PhaseBarrierLeader::poll(int timeout_ms) {
  std::vector<pollfd> fds;
  std::vector<Member*> who;
  for (auto& m : members_) {
    if (m.gone) continue;
    fds.push_back({m.from, POLLIN, 0});
    who.push_back(&m);
  }
  if (fds.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return;
  }
  if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) return;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    Member& m = *who[i];
    char buf[256];
    const ssize_t n = ::read(m.from, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // the process ended (or its pipe broke): not waited for any more
      drop(m);
      continue;
    }
    m.pending.append(buf, static_cast<size_t>(n));
    for (size_t nl = m.pending.find('\n'); nl != std::string::npos; nl = m.pending.find('\n')) {
      const std::string line = m.pending.substr(0, nl);
      m.pending.erase(0, nl + 1);
      if (line.rfind("ready ", 0) == 0) m.ready = true;
    }
  }
  // Every member still there is ready: release them together.
  const bool all = std::all_of(members_.begin(), members_.end(),
                               [](const Member& m) { return m.gone || m.ready; });
  const bool any =
      std::any_of(members_.begin(), members_.end(), [](const Member& m) { return !m.gone; });
  if (!all || !any) return;
  const std::string go = go_line(now_ts_us());
  for (auto& m : members_) {
    if (m.gone) continue;
    m.ready = false;
    if (!write_line(m.to, go)) drop(m);
  }
}

}  // namespace kv::drive
