// The cgroup files' parsers (cgroup.hpp): /proc/PID/cgroup, mountinfo's cgroup mounts, limits,
// keyed files, io.stat, and the events between two readings of the memory counters. Pure
// functions of text, fuzzed by tests/fuzz/proc_parsers_fuzz.cpp; the sampler is cgroup.cpp.
#include <string>
#include <string_view>
#include <vector>

#include "cgroup.hpp"
#include "proc_parsers.hpp"

namespace kv::mon {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() + 0 && s[i + 1] >= '0' && s[i + 1] <= '3') {
      out.push_back(
          static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

OptInt cgroup_value(std::string_view s) { return parse_int(trim_blanks(s)); }

ProcCgroup parse_proc_cgroup(std::string_view text) {
  ProcCgroup out;
  for_each_line(text, [&](std::string_view line) {
    size_t c1 = line.find(':');
    if (c1 == std::string_view::npos) return;
    size_t c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) return;
    std::string_view ctrls = line.substr(c1 + 1, c2 - c1 - 1);
    std::string path(line.substr(c2 + 1));
    if (path.empty() || path.front() != '/') return;
    if (line.substr(0, c1) == "0" && ctrls.empty()) {
      out.v2 = path;
      return;
    }
    while (!ctrls.empty()) {
      size_t comma = ctrls.find(',');
      std::string_view c = ctrls.substr(0, comma);
      if (!c.empty()) out.v1.emplace(std::string(c), path);
      if (comma == std::string_view::npos) break;
      ctrls.remove_prefix(comma + 1);
    }
  });
  return out;
}

CgroupMounts parse_cgroup_mounts(std::string_view mountinfo) {
  CgroupMounts out;
  for_each_line(mountinfo, [&](std::string_view line) {
    std::vector<std::string_view> f = split_fields(line);
    size_t dash = 0;
    for (size_t i = 6; i < f.size(); ++i) {
      if (f[i] == "-") {
        dash = i;
        break;
      }
    }
    if (dash == 0 || dash + 3 >= f.size() + 0 || f.size() < 5) return;
    std::string_view type = f[dash + 1];
    CgroupMount m{unescape(f[3]), unescape(f[4])};
    if (type == "cgroup2") {
      if (!out.v2) out.v2 = m;
      return;
    }
    if (type != "cgroup" || dash + 3 >= f.size()) return;
    std::string_view opts = f[dash + 3];
    while (!opts.empty()) {
      size_t comma = opts.find(',');
      std::string_view o = opts.substr(0, comma);
      if (o.starts_with("name=")) {
        out.v1.emplace(std::string(o), m);
      } else if (o != "rw" && o != "ro" && !o.empty() && o.find('=') == std::string_view::npos &&
                 o != "noprefix" && o != "clone_children" && o != "xattr" &&
                 o != "cpuset_v2_mode") {
        out.v1.emplace(std::string(o), m);
      }
      if (comma == std::string_view::npos) break;
      opts.remove_prefix(comma + 1);
    }
  });
  return out;
}

std::optional<std::string> cgroup_dir(const CgroupMount& mount, std::string_view path) {
  std::string_view root = mount.root;
  if (root != "/") {
    if (!path.starts_with(root) || (path.size() > root.size() && path[root.size()] != '/')) {
      return std::nullopt;
    }
    path.remove_prefix(root.size());
  }
  std::string dir = mount.mount_point;
  while (!dir.empty() && dir.back() == '/') dir.pop_back();
  if (path.empty() || path == "/") return dir.empty() ? std::string("/") : dir;
  return dir + std::string(path);
}

OptInt parse_cgroup_limit(std::string_view text) {
  text = trim_blanks(text);
  if (text == "max") return kNoCgroupLimit;
  OptInt v = cgroup_value(text);
  if (v && *v >= INT64_MAX - 4095) return kNoCgroupLimit;
  return v;
}

OptInt keyed_value(std::string_view text, std::string_view key) {
  size_t at = 0;
  while (at < text.size()) {
    size_t found = text.find(key, at);
    if (found == std::string_view::npos) return std::nullopt;
    bool line_start = found == 0 || text[found - 1] == '\n';
    size_t after = found + key.size();
    if (line_start && after < text.size() && text[after] == ' ') {
      size_t end = text.find('\n', after);
      return cgroup_value(
          text.substr(after + 1, end == std::string_view::npos ? end : end - after - 1));
    }
    at = found + 1;
  }
  return std::nullopt;
}

IoStat parse_io_stat(std::string_view text) {
  IoStat s;
  auto add = [](OptInt& sum, std::string_view v) {
    if (OptInt n = cgroup_value(v)) sum = sum.value_or(0) + *n;
  };
  bool any = false;
  for_each_line(text, [&](std::string_view line) {
    // MAJ:MIN rbytes=… wbytes=… …, every tick: no allocation
    const size_t n = for_each_field(line, [&](size_t i, std::string_view f) {
      if (i == 0) return;
      size_t eq = f.find('=');
      if (eq == std::string_view::npos) return;
      std::string_view k = f.substr(0, eq);
      std::string_view v = f.substr(eq + 1);
      if (k == "rbytes") add(s.read_bytes, v);
      if (k == "wbytes") add(s.write_bytes, v);
      if (k == "rios") add(s.reads, v);
      if (k == "wios") add(s.writes, v);
    });
    if (n > 0) any = true;
  });
  // A readable, empty io.stat (no I/O yet) is zeros, not unknown.
  if (!any || !s.read_bytes) s = IoStat{0, 0, 0, 0};
  return s;
}

CgroupCounters counters_of(const ProcessSample& s) {
  return {s.cg_events_high,     s.cg_events_max,       s.cg_events_oom, s.cg_events_oom_kill,
          s.cg_swap_events_max, s.cg_swap_events_fail, s.cg_under_oom,  s.cg_failcnt};
}

std::vector<CgroupEvent> cgroup_events(const CgroupCounters& before, const CgroupCounters& after,
                                       std::string_view who, bool v2) {
  std::vector<CgroupEvent> out;
  auto grew = [&](const OptInt& a, const OptInt& b, const char* kind, const char* file,
                  const char* key, const char* meaning) {
    if (!a || !b || *b <= *a) return;
    out.push_back({kind, std::string(who) + ": " + file + " " + key + " " + std::to_string(*a) +
                             " -> " + std::to_string(*b) + " (" + meaning + ")"});
  };
  if (v2) {
    grew(before.high, after.high, "cgroup_high", "memory.events", "high",
         "usage went over memory.high: the cgroup was throttled and reclaimed");
    grew(before.max, after.max, "cgroup_max", "memory.events", "max",
         "usage reached memory.max: direct reclaim");
    grew(before.oom, after.oom, "cgroup_oom", "memory.events", "oom",
         "memory.max could not be kept by reclaim");
    grew(before.oom_kill, after.oom_kill, "cgroup_oom_kill", "memory.events", "oom_kill",
         "a process in the cgroup was killed by the OOM killer");
    grew(before.swap_max, after.swap_max, "cgroup_swap_max", "memory.swap.events", "max",
         "swap usage reached memory.swap.max");
    grew(before.swap_fail, after.swap_fail, "cgroup_swap_fail", "memory.swap.events", "fail",
         "a swap-out failed: swap full or memory.swap.max");
  } else {
    grew(before.failcnt, after.failcnt, "cgroup_failcnt", "memory.failcnt", "",
         "usage hit memory.limit_in_bytes: reclaim");
    grew(before.oom_kill, after.oom_kill, "cgroup_oom_kill", "memory.oom_control", "oom_kill",
         "a process in the cgroup was killed by the OOM killer");
    if (before.under_oom && after.under_oom && *before.under_oom == 0 && *after.under_oom != 0) {
      out.push_back({"cgroup_under_oom",
                     std::string(who) + ": memory.oom_control under_oom 0 -> 1 (the cgroup is " +
                         "out of memory and waits: OOM killer disabled or a kill pending)"});
    }
  }
  // "memory.failcnt  A -> B": no key for a one-value file
  for (CgroupEvent& e : out) {
    size_t dbl = e.message.find("  ");
    if (dbl != std::string::npos) e.message.erase(dbl, 1);
  }
  return out;
}

}  // namespace kv::mon
