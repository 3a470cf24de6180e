// Lines over a pipe between the processes of a kvdrive group: the parent and each process say
// short text lines to each other (a search step's rate, a phase barrier's "ready" and "go").
// Blocking; EINTR is retried. SIGPIPE must be ignored by the caller (kvdrive run ignores it),
// so a write to a process that has ended fails instead of killing the writer.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>

namespace kv {

// A group barrier's release (run/phase_barrier.hpp, search/search_group.hpp): "go TS", TS a wall
// time kGoLeadUs after `now_ts_us`, time for the line to reach the last process and for it to
// be scheduled; each process sleeps until its clock reads TS.
constexpr int64_t kGoLeadUs = 20'000;
inline std::string go_line(int64_t now_ts_us) {
  return "go " + std::to_string(now_ts_us + kGoLeadUs);
}

// Writes `line` and a '\n'; false when the other end is gone or on an error.
inline bool write_line(int fd, const std::string& line) {
  const std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// One line (without its '\n'); nullopt at EOF or on an error before a whole line.
inline std::optional<std::string> read_line(int fd) {
  std::string line;
  char c = 0;
  for (;;) {
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    if (c == '\n') return line;
    line += c;
  }
}

}  // namespace kv
