// Target selectors (--pid, --pidfile, --name, --port) and their resolution to live processes
// through a ProcFs. Resolution is a snapshot: the tracker calls it again while a target is absent.
#pragma once

#include <string>
#include <vector>

#include "procfs.hpp"
#include "samplers.hpp"

namespace kv::mon {

struct Selector {
  enum class Kind { pid, pidfile, name, port };
  Kind kind = Kind::pid;
  std::string value;  // the pid, path, name or port as given

  // "pid:123", "name:redis-server", "pidfile:/run/redis.pid", "port:6379"
  std::string text() const;
  // --pid targets are followed until they exit and never re-resolved.
  bool follows_restarts() const { return kind != Kind::pid; }
};

// Throws UsageError if a pid or port is not a positive number in range.
Selector make_selector(Selector::Kind kind, const std::string& value);

// The processes that `sel` names right now (empty when none). A name matches /proc/PID/comm,
// the basename of /proc/PID/exe, or the basename of argv[0]; a process whose parent also
// matches is left out (it is a fork child, sampled as such).
std::vector<ProcessInfo> resolve(const ProcFs& fs, const Selector& sel);

// Whether process `pid` is called `name` (see resolve).
bool process_has_name(const ProcFs& fs, pid_t pid, const std::string& comm,
                      const std::string& name);

// Inodes of the TCP sockets listening on `port` (IPv4 and IPv6).
std::vector<int64_t> listening_inodes(const ProcFs& fs, int port);

}  // namespace kv::mon
