#include "cgroup.hpp"

#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"
#include "proc_parsers.hpp"

namespace kv::mon {
namespace {

OptInt ns_to_us(OptInt ns) {
  if (!ns) return std::nullopt;
  return *ns / 1000;
}

// Reads an open file; the text, or empty when it cannot be read.
std::string_view text_of(OpenFile& f) {
  if (!f.is_open() || !f.read()) return {};
  return f.text();
}

OptInt int_file(OpenFile& f) { return cgroup_value(text_of(f)); }
OptInt limit_file(OpenFile& f) { return parse_cgroup_limit(text_of(f)); }

// A v1 memory.stat value: the hierarchical total_ key (as v2's are), else the plain one.
OptInt v1_stat(std::string_view text, std::string_view key) {
  // "total_" + key, on the stack: read every tick (total_pgmajfault and longer would allocate)
  constexpr std::string_view kTotal = "total_";
  std::array<char, 64> total{};
  if (kTotal.size() + key.size() <= total.size()) {
    std::copy(kTotal.begin(), kTotal.end(), total.begin());
    std::copy(key.begin(), key.end(), total.begin() + kTotal.size());
    if (OptInt v = keyed_value(text, std::string_view(total.data(), kTotal.size() + key.size())))
      return v;
  }
  return keyed_value(text, key);
}

}  // namespace

struct CgroupSampler::Group {
  ProcessKey key;
  std::string who;
  OpenFile proc_cgroup;
  std::string proc_cgroup_text;
  std::string moved_text;  // a different /proc/PID/cgroup seen last tick
  std::string v2_dir, mem_dir, cpu_dir, cpuacct_dir;
  bool mem_v1 = false, cpu_v1 = false;
  // memory: v2 files, or v1 usage/limit/stat in the same slots
  OpenFile current, max, high, swap_current, swap_max, stat, events, swap_events;
  OpenFile memsw_usage, memsw_limit, kmem_usage, oom_control, failcnt;  // v1
  OpenFile cpu_stat, cpuacct_usage;
  OpenFile cpu_max, cfs_quota, cfs_period;  // v2 cpu.max; v1 cpu.cfs_quota_us, cfs_period_us
  OpenFile io_stat, psi_memory, psi_io, psi_cpu;
  std::vector<PsiTrigger> psi_triggers;  // --psi-trigger cgroup:..., in the epoll set while open
  CgroupCounters last;                   // the event baseline
  // oom_kill at the process's sample before last: a process being killed may still be sampled
  // once after the kill counted (it is not a zombie yet)
  OptInt oom_kill_at_sample, oom_kill_at_last_sample;
  int wd_events = -1, wd_swap_events = -1;
  int64_t samples = 0;  // taken of this process in this group (the cadence counts them)
  // the last reading of the pressure files, repeated between readings
  Pressure psi_memory_last, psi_io_last, psi_cpu_last;  // read every pressure_every samples

  CgroupCounters read_counters() {
    CgroupCounters c;
    if (mem_v1) {
      std::string_view oc = text_of(oom_control);
      c.oom_kill = keyed_value(oc, "oom_kill");
      c.under_oom = keyed_value(oc, "under_oom");
      c.failcnt = int_file(failcnt);
    } else {
      std::string_view ev = text_of(events);
      c.high = keyed_value(ev, "high");
      c.max = keyed_value(ev, "max");
      c.oom = keyed_value(ev, "oom");
      c.oom_kill = keyed_value(ev, "oom_kill");
      std::string_view sev = text_of(swap_events);
      c.swap_max = keyed_value(sev, "max");
      c.swap_fail = keyed_value(sev, "fail");
    }
    return c;
  }
};

CgroupCadence cadence_for_interval(int64_t interval_us) {
  interval_us = std::max<int64_t>(interval_us, 1);
  return {std::max<int64_t>(1, 5'000'000 / interval_us),
          std::max<int64_t>(1, 2'000'000 / interval_us)};
}

CgroupSampler::CgroupSampler(const ProcFs& fs, CgroupCadence cadence)
    : fs_(fs),
      cadence_{std::max<int64_t>(1, cadence.recheck_every),
               std::max<int64_t>(1, cadence.pressure_every)} {
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
}

CgroupSampler::~CgroupSampler() {
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
}

void CgroupSampler::set_psi_triggers(std::vector<PsiTriggerSpec> specs) {
  psi_specs_ = std::move(specs);
}

std::vector<CgroupSampler::PsiTriggerView> CgroupSampler::psi_triggers() const {
  std::vector<PsiTriggerView> out;
  for (const auto& [key, g] : groups_)
    for (const PsiTrigger& t : g->psi_triggers)
      out.push_back({t.fd(), key,
                     g->who + ": cgroup pressure: " + t.spec().describe() + " (PSI trigger on " +
                         t.path() + ")"});
  return out;
}

std::string CgroupSampler::under_sys(const std::string& path) const {
  if (fs_.sys_root() != "/sys" && (path == "/sys" || path.starts_with("/sys/"))) {
    return fs_.sys_root() + path.substr(4);
  }
  return path;
}

std::string CgroupSampler::describe(const ProcessKey& key) const {
  auto it = groups_.find(key);
  if (it == groups_.end()) return {};
  const Group& g = *it->second;
  std::string out;
  auto add = [&](const char* what, const std::string& dir) {
    if (dir.empty()) return;
    if (!out.empty()) out += ", ";
    out += std::string(what) + " " + dir;
  };
  add("v2", g.v2_dir);
  add(g.mem_v1 ? "v1 memory" : "v2 memory", g.mem_v1 ? g.mem_dir : std::string());
  add("v1 cpu", g.cpu_v1 ? g.cpu_dir : std::string());
  add("v1 cpuacct", g.cpu_v1 ? g.cpuacct_dir : std::string());
  return out;
}

void CgroupSampler::open_files(Group& g, const ProcCgroup& pc) {
  auto v1_dir = [&](const char* ctrl) -> std::string {
    auto m = mounts_.v1.find(ctrl);
    auto p = pc.v1.find(ctrl);
    if (m == mounts_.v1.end() || p == pc.v1.end()) return {};
    auto d = cgroup_dir(m->second, p->second);
    return d ? under_sys(*d) : std::string();
  };
  if (mounts_.v2 && pc.v2) {
    if (auto d = cgroup_dir(*mounts_.v2, *pc.v2)) g.v2_dir = under_sys(*d);
  }
  g.mem_v1 = mounts_.v1.count("memory") > 0;  // then the memory controller cannot be in v2
  g.cpu_v1 = mounts_.v1.count("cpu") > 0 || mounts_.v1.count("cpuacct") > 0;
  auto open = [](const std::string& d, const char* name) {
    if (d.empty()) return OpenFile();
    return OpenFile(AT_FDCWD, (d + "/" + name).c_str());
  };
  if (g.mem_v1) {
    g.mem_dir = v1_dir("memory");
    const std::string& m = g.mem_dir;
    g.current = open(m, "memory.usage_in_bytes");
    g.max = open(m, "memory.limit_in_bytes");
    g.stat = open(m, "memory.stat");
    g.memsw_usage = open(m, "memory.memsw.usage_in_bytes");
    g.memsw_limit = open(m, "memory.memsw.limit_in_bytes");
    g.kmem_usage = open(m, "memory.kmem.usage_in_bytes");
    g.oom_control = open(m, "memory.oom_control");
    g.failcnt = open(m, "memory.failcnt");
  } else {
    const std::string& v = g.v2_dir;
    g.current = open(v, "memory.current");
    g.max = open(v, "memory.max");
    g.high = open(v, "memory.high");
    g.swap_current = open(v, "memory.swap.current");
    g.swap_max = open(v, "memory.swap.max");
    g.stat = open(v, "memory.stat");
    g.events = open(v, "memory.events");
    g.swap_events = open(v, "memory.swap.events");
    if (inotify_fd_ >= 0 && g.events.is_open()) {
      g.wd_events = ::inotify_add_watch(inotify_fd_, (v + "/memory.events").c_str(), IN_MODIFY);
    }
    if (inotify_fd_ >= 0 && g.swap_events.is_open()) {
      g.wd_swap_events =
          ::inotify_add_watch(inotify_fd_, (v + "/memory.swap.events").c_str(), IN_MODIFY);
    }
  }
  if (g.cpu_v1) {
    g.cpu_dir = v1_dir("cpu");
    g.cpuacct_dir = v1_dir("cpuacct");
    g.cpu_stat = open(g.cpu_dir, "cpu.stat");
    g.cpuacct_usage = open(g.cpuacct_dir, "cpuacct.usage");
    g.cfs_quota = open(g.cpu_dir, "cpu.cfs_quota_us");
    g.cfs_period = open(g.cpu_dir, "cpu.cfs_period_us");
  } else {
    g.cpu_stat = open(g.v2_dir, "cpu.stat");
    g.cpu_max = open(g.v2_dir, "cpu.max");
  }
  g.io_stat = open(g.v2_dir, "io.stat");
  g.psi_memory = open(g.v2_dir, "memory.pressure");
  g.psi_io = open(g.v2_dir, "io.pressure");
  g.psi_cpu = open(g.v2_dir, "cpu.pressure");
}

void CgroupSampler::set_psi_triggers(Group& g, std::string_view who) {
  for (const PsiTriggerSpec& spec : psi_specs_) {
    if (g.v2_dir.empty()) {
      log_warn() << who << ": no cgroup v2 directory: the PSI trigger " << spec.describe()
                 << " cannot be set on its cgroup";
      continue;
    }
    PsiTrigger t(g.v2_dir + "/" + spec.resource + ".pressure", spec);
    if (t.fd() < 0) {
      log_warn() << who << ": cannot set the PSI trigger " << spec.describe() << " on " << t.path()
                 << " (" << t.error()
                 << "): only the polled avg10 is recorded (without CAP_SYS_RESOURCE, Linux "
                    "6.5 and later take only windows of whole multiples of 2s)";
      continue;
    }
    log_info() << who << ": PSI trigger set: " << spec.describe() << " on " << t.path();
    g.psi_triggers.push_back(std::move(t));
    ++psi_generation_;
  }
}

CgroupSampler::Group* CgroupSampler::locate(const ProcessKey& key, std::string_view target,
                                            std::vector<EventRecord>& events) {
  auto it = groups_.find(key);
  if (it != groups_.end()) {
    Group& g = *it->second;
    // Moved to another cgroup (a service manager, or a test, moves it after its start)? Only
    // when two ticks agree: a process being killed shows the root cgroup while it exits, and
    // its exit is told with the cgroup it lived in. Looked at every recheck_every samples.
    if (g.moved_text.empty() && g.samples % cadence_.recheck_every != 0) return &g;
    if (!g.proc_cgroup.read() || g.proc_cgroup.text() == g.proc_cgroup_text) {
      g.moved_text.clear();
      return &g;
    }
    if (g.proc_cgroup.text() != g.moved_text) {
      g.moved_text = std::string(g.proc_cgroup.text());
      return &g;
    }
  }
  auto dir = fs_.open_pid(key.pid);
  if (!dir) return it == groups_.end() ? nullptr : it->second.get();
  // Only here, where a group is found: the tick that finds nothing new builds no string.
  const std::string who = std::string(target) + " (pid " + std::to_string(key.pid) + ")";
  auto g = std::make_unique<Group>();
  g->key = key;
  g->who = who;
  g->proc_cgroup = dir->open("cgroup");
  if (!g->proc_cgroup.read()) return it == groups_.end() ? nullptr : it->second.get();
  g->proc_cgroup_text = std::string(g->proc_cgroup.text());
  ProcCgroup pc = parse_proc_cgroup(g->proc_cgroup_text);
  FileText mi = fs_.read("self/mountinfo");
  if (mi.ok()) mounts_ = parse_cgroup_mounts(mi.text);
  open_files(*g, pc);
  set_psi_triggers(*g, who);
  g->last = g->read_counters();
  Group* out = g.get();
  const bool moved = it != groups_.end();
  if (moved) {
    std::swap(it->second, g);
    drop_watches(*g);  // the old group's, unless the new one (or another process) shares them
    if (!g->psi_triggers.empty()) ++psi_generation_;
  } else {
    groups_.emplace(key, std::move(g));
  }
  std::string where = describe(key);
  if (!where.empty()) {
    std::string msg = who + (moved ? ": moved to cgroup " : ": cgroup ") + where;
    log_info() << msg;
    events.push_back(EventRecord{now_ts_us(), "cgroup_found", msg, key});
  }
  return out;
}

void CgroupSampler::drop_watches(Group& g) {
  for (int* wd : {&g.wd_events, &g.wd_swap_events}) {
    if (*wd < 0) continue;
    // inotify gives one watch per file: keep it while another group watches the same file
    bool shared = false;
    for (const auto& [k, other] : groups_) {
      if (other.get() != &g && (other->wd_events == *wd || other->wd_swap_events == *wd)) {
        shared = true;
      }
    }
    if (!shared) ::inotify_rm_watch(inotify_fd_, *wd);
    *wd = -1;
  }
}

CgroupCounters CgroupSampler::read_events(Group& g, std::vector<EventRecord>& events) {
  CgroupCounters now = g.read_counters();
  const int64_t ts = now_ts_us();
  for (CgroupEvent& e : cgroup_events(g.last, now, g.who, !g.mem_v1)) {
    log_info() << e.message;
    events.push_back(EventRecord{ts, std::move(e.kind), std::move(e.message), g.key});
  }
  g.last = now;
  return now;
}

void CgroupSampler::sample_memory(Group& g, ProcessSample& s, std::vector<EventRecord>& events) {
  std::string_view st = text_of(g.stat);
  // memory.stat: v1's hierarchical total_ keys (rss and cache for anon and file), else v2's.
  auto stat = [&](std::string_view v1_key, std::string_view v2_key) {
    return g.mem_v1 ? v1_stat(st, v1_key) : keyed_value(st, v2_key);
  };
  s.cg_memory_bytes = int_file(g.current);
  s.cg_memory_max_bytes = limit_file(g.max);
  s.cg_anon_bytes = stat("rss", "anon");
  s.cg_file_bytes = stat("cache", "file");
  s.cg_shmem_bytes = stat("shmem", "shmem");
  s.cg_pgmajfault = stat("pgmajfault", "pgmajfault");
  s.cg_workingset_refault_anon = stat("workingset_refault_anon", "workingset_refault_anon");
  s.cg_workingset_refault_file = stat("workingset_refault_file", "workingset_refault_file");
  if (g.mem_v1) {
    s.cg_memsw_bytes = int_file(g.memsw_usage);
    s.cg_memsw_max_bytes = limit_file(g.memsw_limit);
    s.cg_kernel_bytes = int_file(g.kmem_usage);
  } else {
    s.cg_memory_high_bytes = limit_file(g.high);
    s.cg_swap_bytes = int_file(g.swap_current);
    s.cg_swap_max_bytes = limit_file(g.swap_max);
    s.cg_kernel_bytes = keyed_value(st, "kernel");
    s.cg_pgscan = keyed_value(st, "pgscan");
    s.cg_pgsteal = keyed_value(st, "pgsteal");
  }
  const CgroupCounters c = read_events(g, events);
  s.cg_events_high = c.high;
  s.cg_events_max = c.max;
  s.cg_events_oom = c.oom;
  s.cg_events_oom_kill = c.oom_kill;
  s.cg_swap_events_max = c.swap_max;
  s.cg_swap_events_fail = c.swap_fail;
  s.cg_under_oom = c.under_oom;
  s.cg_failcnt = c.failcnt;
  g.oom_kill_at_sample = g.oom_kill_at_last_sample ? g.oom_kill_at_last_sample : c.oom_kill;
  g.oom_kill_at_last_sample = c.oom_kill;
}

void CgroupSampler::sample_cpu(Group& g, ProcessSample& s) {
  std::string_view cpu = text_of(g.cpu_stat);
  s.cg_cpu_nr_periods = keyed_value(cpu, "nr_periods");
  s.cg_cpu_nr_throttled = keyed_value(cpu, "nr_throttled");
  if (g.cpu_v1) {
    s.cg_cpu_throttled_us = ns_to_us(keyed_value(cpu, "throttled_time"));
    s.cg_cpu_usage_us = ns_to_us(int_file(g.cpuacct_usage));
    s.cg_cpu_period_us = int_file(g.cfs_period);
    s.cg_cpu_quota_us = int_file(g.cfs_quota);
    if (s.cg_cpu_quota_us && *s.cg_cpu_quota_us < 0) s.cg_cpu_quota_us = kNoCgroupLimit;  // -1
  } else {
    s.cg_cpu_throttled_us = keyed_value(cpu, "throttled_usec");
    s.cg_cpu_usage_us = keyed_value(cpu, "usage_usec");
    // cpu.max: "QUOTA PERIOD", QUOTA "max" when there is none
    std::string_view max = trim_blanks(text_of(g.cpu_max));
    const auto space = max.find(' ');
    if (space != std::string_view::npos) {
      s.cg_cpu_quota_us = parse_cgroup_limit(max.substr(0, space));
      s.cg_cpu_period_us = cgroup_value(trim_blanks(max.substr(space + 1)));
    }
  }
}

void CgroupSampler::sample_io_pressure(Group& g, ProcessSample& s) const {
  if (g.io_stat.is_open() && g.io_stat.read()) {
    IoStat io = parse_io_stat(g.io_stat.text());
    s.cg_io_read_bytes = io.read_bytes;
    s.cg_io_write_bytes = io.write_bytes;
    s.cg_io_reads = io.reads;
    s.cg_io_writes = io.writes;
  }
  if (g.samples++ % cadence_.pressure_every == 0) {
    g.psi_memory_last = parse_pressure(text_of(g.psi_memory));
    g.psi_io_last = parse_pressure(text_of(g.psi_io));
    g.psi_cpu_last = parse_pressure(text_of(g.psi_cpu));
  }
  s.cg_psi_memory_some_avg10 = g.psi_memory_last.some_avg10;
  s.cg_psi_memory_full_avg10 = g.psi_memory_last.full_avg10;
  s.cg_psi_io_some_avg10 = g.psi_io_last.some_avg10;
  s.cg_psi_io_full_avg10 = g.psi_io_last.full_avg10;
  s.cg_psi_cpu_some_avg10 = g.psi_cpu_last.some_avg10;
  s.cg_psi_memory_some_us = g.psi_memory_last.some_total_us;
  s.cg_psi_memory_full_us = g.psi_memory_last.full_total_us;
  s.cg_psi_io_some_us = g.psi_io_last.some_total_us;
  s.cg_psi_io_full_us = g.psi_io_last.full_total_us;
  s.cg_psi_cpu_some_us = g.psi_cpu_last.some_total_us;
}

void CgroupSampler::sample(const ProcessKey& key, std::string_view target, ProcessSample& s,
                           std::vector<EventRecord>& events) {
  Group* gp = locate(key, target, events);
  if (!gp) return;
  Group& g = *gp;
  sample_memory(g, s, events);
  sample_cpu(g, s);
  sample_io_pressure(g, s);
}

std::string CgroupSampler::exit_cause(const ProcessKey& key, std::vector<EventRecord>& events) {
  auto it = groups_.find(key);
  if (it == groups_.end()) return {};
  Group& g = *it->second;
  read_events(g, events);
  std::string cause;
  if (g.oom_kill_at_sample && g.last.oom_kill && *g.last.oom_kill > *g.oom_kill_at_sample) {
    const std::string& dir = g.mem_v1 ? g.mem_dir : g.v2_dir;
    cause = "killed by the OOM killer (cgroup " + dir + " oom_kill " +
            std::to_string(*g.oom_kill_at_sample) + " -> " + std::to_string(*g.last.oom_kill) + ")";
  }
  drop_watches(g);
  if (!g.psi_triggers.empty()) ++psi_generation_;
  groups_.erase(it);
  return cause;
}

void CgroupSampler::retain(std::span<const ProcessKey> keys) {
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (std::find(keys.begin(), keys.end(), it->first) != keys.end()) {
      ++it;
      continue;
    }
    drop_watches(*it->second);
    if (!it->second->psi_triggers.empty()) ++psi_generation_;
    it = groups_.erase(it);
  }
}

void CgroupSampler::on_notify(std::vector<EventRecord>& events) {
  if (inotify_fd_ < 0) return;
  alignas(inotify_event) char buf[4096];
  std::set<int> changed;
  for (;;) {
    ssize_t n = ::read(inotify_fd_, buf, sizeof buf);
    if (n <= 0) break;
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<inotify_event*>(p);
      changed.insert(ev->wd);
      p += sizeof(inotify_event) + ev->len;
    }
  }
  for (auto& [key, g] : groups_) {
    if (changed.count(g->wd_events) || changed.count(g->wd_swap_events)) read_events(*g, events);
  }
}

}  // namespace kv::mon
