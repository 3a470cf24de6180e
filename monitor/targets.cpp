#include "targets.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "kvbench/usage_error.hpp"

namespace kv::mon {
namespace {

std::string basename_of(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// argv[0] up to the first NUL or space (servers like redis rewrite their title into argv[0]).
std::string argv0(const PidDir& dir) {
  FileText t = dir.read("cmdline");
  if (!t.ok()) return {};
  size_t end = t.text.find_first_of(std::string_view("\0 ", 2));
  return t.text.substr(0, end);
}

std::vector<ProcessInfo> resolve_pid_text(const ProcFs& fs, std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  auto pid = parse_int(text);
  if (!pid || *pid <= 0 || *pid > std::numeric_limits<pid_t>::max()) return {};
  auto info = read_process_info(fs, static_cast<pid_t>(*pid));
  if (!info) return {};
  return {info.value()};
}

std::vector<ProcessInfo> resolve_name(const ProcFs& fs, const std::string& name) {
  std::vector<ProcessInfo> matches;
  for (pid_t pid : fs.list_pids()) {
    auto info = read_process_info(fs, pid);
    if (info && process_has_name(fs, pid, info.value().comm, name)) {
      matches.push_back(info.value());
    }
  }
  // Keep only the roots: a match whose parent matches too is a fork child.
  std::vector<ProcessInfo> roots;
  for (const ProcessInfo& m : matches) {
    bool parent_matches = std::any_of(matches.begin(), matches.end(),
                                      [&](const ProcessInfo& o) { return o.key.pid == m.ppid; });
    if (!parent_matches) roots.push_back(m);
  }
  return roots;
}

std::vector<ProcessInfo> resolve_port(const ProcFs& fs, int port) {
  std::vector<int64_t> inodes = listening_inodes(fs, port);
  if (inodes.empty()) return {};
  std::vector<std::string> wanted;
  for (int64_t inode : inodes) wanted.push_back("socket:[" + std::to_string(inode) + "]");
  std::vector<ProcessInfo> found;
  for (pid_t pid : fs.list_pids()) {
    auto dir = fs.open_pid(pid);
    if (!dir) continue;
    for (const std::string& link : dir->fd_links()) {
      if (std::find(wanted.begin(), wanted.end(), link) == wanted.end()) continue;
      if (auto info = read_process_info(fs, pid)) found.push_back(info.value());
      break;
    }
  }
  // A socket inherited by a fork child is owned by both: keep the parent.
  std::vector<ProcessInfo> roots;
  for (const ProcessInfo& m : found) {
    bool parent_owns = std::any_of(found.begin(), found.end(),
                                   [&](const ProcessInfo& o) { return o.key.pid == m.ppid; });
    if (!parent_owns) roots.push_back(m);
  }
  return roots;
}

}  // namespace

std::string Selector::text() const {
  switch (kind) {
    case Kind::pid:
      return "pid:" + value;
    case Kind::pidfile:
      return "pidfile:" + value;
    case Kind::name:
      return "name:" + value;
    case Kind::port:
      return "port:" + value;
  }
  return value;
}

Selector make_selector(Selector::Kind kind, const std::string& value) {
  std::string option = "--" + Selector{kind, ""}.text();  // "--pid:"
  option.pop_back();
  if (value.empty()) throw UsageError(option + ": must not be empty");
  if (kind == Selector::Kind::pid || kind == Selector::Kind::port) {
    auto n = parse_int(value);
    int64_t max = kind == Selector::Kind::pid ? std::numeric_limits<pid_t>::max() : 65535;
    if (!n || *n <= 0 || *n > max) {
      throw UsageError("invalid " + option + " '" + value + "': expected a number from 1 to " +
                       std::to_string(max));
    }
  }
  return Selector{kind, value};
}

bool process_has_name(const ProcFs& fs, pid_t pid, const std::string& comm,
                      const std::string& name) {
  // comm is truncated to 15 characters by the kernel.
  if (comm == name || (name.size() > 15 && comm == name.substr(0, 15))) return true;
  auto dir = fs.open_pid(pid);
  if (!dir) return false;
  std::string exe = dir->exe();
  if (!exe.empty()) {
    if (exe.ends_with(" (deleted)")) exe.resize(exe.size() - 10);
    if (basename_of(exe) == name) return true;
  }
  std::string arg0 = argv0(*dir);
  return !arg0.empty() && basename_of(arg0) == name;
}

std::vector<int64_t> listening_inodes(const ProcFs& fs, int port) {
  std::vector<int64_t> out;
  for (const char* file : {"net/tcp", "net/tcp6"}) {
    FileText t = fs.read(file);
    if (!t.ok()) continue;
    for (const TcpSocket& s : parse_net_tcp(t.text)) {
      if (s.state == kTcpListen && s.local_port == port && s.inode != 0) out.push_back(s.inode);
    }
  }
  return out;
}

std::vector<ProcessInfo> resolve(const ProcFs& fs, const Selector& sel) {
  switch (sel.kind) {
    case Selector::Kind::pid:
      return resolve_pid_text(fs, sel.value);
    case Selector::Kind::pidfile: {
      FileText t = read_file(sel.value);
      return t.ok() ? resolve_pid_text(fs, t.text) : std::vector<ProcessInfo>{};
    }
    case Selector::Kind::name:
      return resolve_name(fs, sel.value);
    case Selector::Kind::port:
      return resolve_port(fs, static_cast<int>(*parse_int(sel.value)));
  }
  return {};
}

}  // namespace kv::mon
