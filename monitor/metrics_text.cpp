#include "metrics_text.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <string_view>
#include <utility>

#include "kvbench/version.hpp"
#include "proc_parsers.hpp"

namespace kv::mon {
namespace {

struct Label {
  std::string_view key;
  std::string_view value;
};
using LabelList = std::vector<Label>;

void append_escaped(std::string& out, std::string_view v) {
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

// A page being written: one family at a time, its HELP/TYPE lines written with its first
// sample, so a family whose values are all unknown leaves no trace.
class Page {
 public:
  explicit Page(bool openmetrics) : om_(openmetrics) { out_.reserve(size_t{16} * 1024); }

  // `name` without `_total` for a counter (its samples get the suffix).
  void family(std::string_view name, std::string_view type, std::string_view help) {
    name_ = name;
    type_ = type;
    help_ = help;
    header_done_ = false;
  }
  // 15 significant digits: what a scaled figure means (PSI's 13.72 % x 0.01 prints 0.1372, not
  // the product's 0.13720000000000002), and every integer below 10^15 exactly.
  void add(const LabelList& labels, double v) {
    std::array<char, 64> buf{};
    auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::general, 15);
    write_sample(labels, std::string_view(buf.data(), static_cast<size_t>(r.ptr - buf.data())));
  }
  void add(const LabelList& labels, int64_t v) { write_sample(labels, std::to_string(v)); }
  void add(const LabelList& labels, const OptInt& v, int64_t scale = 1) {
    if (v) add(labels, *v * scale);
  }
  void add(const LabelList& labels, const OptReal& v, double scale = 1) {
    if (v) add(labels, *v * scale);
  }
  std::string finish() {
    if (om_) out_ += "# EOF\n";
    return std::move(out_);
  }

 private:
  void write_sample(const LabelList& labels, std::string_view value) {
    const bool counter = type_ == "counter";
    if (!header_done_) {
      header_done_ = true;
      std::string_view suffix = counter && !om_ ? "_total" : "";
      out_.append("# HELP ").append(name_).append(suffix).append(" ").append(help_) += '\n';
      out_.append("# TYPE ").append(name_).append(suffix).append(" ").append(type_) += '\n';
      // OpenMetrics names a family's unit when its name ends with one (the spec wants the
      // name suffixed by the unit); the 0.0.4 text format has no UNIT line.
      if (om_)
        for (std::string_view unit : {"seconds", "bytes", "ratio"})
          if (name_.size() > unit.size() && name_.substr(name_.size() - unit.size()) == unit &&
              name_[name_.size() - unit.size() - 1] == '_') {
            out_.append("# UNIT ").append(name_).append(" ").append(unit) += '\n';
            break;
          }
    }
    out_.append(name_);
    if (counter) out_ += "_total";
    if (labels.size() > 0) {
      out_ += '{';
      bool first = true;
      for (const Label& l : labels) {
        if (!first) out_ += ',';
        first = false;
        out_.append(l.key).append("=\"");
        append_escaped(out_, l.value);
        out_ += '"';
      }
      out_ += '}';
    }
    out_.append(" ").append(value) += '\n';
  }

  bool om_;
  std::string out_;
  std::string_view name_, type_, help_;
  bool header_done_ = false;
};

std::optional<double> seconds_of_ticks(const OptInt& ticks, int64_t ticks_per_s) {
  if (!ticks || ticks_per_s <= 0) return std::nullopt;
  return static_cast<double>(*ticks) / static_cast<double>(ticks_per_s);
}

std::optional<double> seconds_of_us(const OptInt& us) {
  if (!us) return std::nullopt;
  return static_cast<double>(*us) / 1e6;
}

// The host's families (the latest host sample; pswpin/out in pages of page_bytes, CPU in
// ticks of ticks_per_s).
void add_host_families(Page& p, const HostSample& h, int64_t page_bytes, int64_t ticks_per_s) {
  p.family("kvmon_host_load1", "gauge", "Load average over 1 minute.");
  p.add({}, h.load1);
  p.family("kvmon_host_load5", "gauge", "Load average over 5 minutes.");
  p.add({}, h.load5);
  p.family("kvmon_host_load15", "gauge", "Load average over 15 minutes.");
  p.add({}, h.load15);
  p.family("kvmon_host_memory_total_bytes", "gauge", "MemTotal of /proc/meminfo.");
  p.add({}, h.mem_total_kib, 1024);
  p.family("kvmon_host_memory_available_bytes", "gauge", "MemAvailable of /proc/meminfo.");
  p.add({}, h.mem_available_kib, 1024);
  p.family("kvmon_host_swap_total_bytes", "gauge", "SwapTotal of /proc/meminfo.");
  p.add({}, h.swap_total_kib, 1024);
  p.family("kvmon_host_swap_free_bytes", "gauge", "SwapFree of /proc/meminfo.");
  p.add({}, h.swap_free_kib, 1024);
  p.family("kvmon_host_swapped_in_bytes", "counter", "Bytes swapped in (pswpin x page size).");
  p.add({}, h.pswpin, page_bytes);
  p.family("kvmon_host_swapped_out_bytes", "counter", "Bytes swapped out (pswpout x page size).");
  p.add({}, h.pswpout, page_bytes);
  p.family("kvmon_host_major_faults", "counter", "Major page faults of the host (pgmajfault).");
  p.add({}, h.pgmajfault);
  p.family("kvmon_host_cpu_seconds", "counter",
           "CPU time of all CPUs by mode (/proc/stat; user includes nice).");
  p.add({{"mode", "user"}}, seconds_of_ticks(h.cpu_user_ticks, ticks_per_s));
  p.add({{"mode", "system"}}, seconds_of_ticks(h.cpu_system_ticks, ticks_per_s));
  p.add({{"mode", "iowait"}}, seconds_of_ticks(h.cpu_iowait_ticks, ticks_per_s));
  p.add({{"mode", "steal"}}, seconds_of_ticks(h.cpu_steal_ticks, ticks_per_s));
  p.add({{"mode", "idle"}}, seconds_of_ticks(h.cpu_idle_ticks, ticks_per_s));
  p.family("kvmon_host_pressure_avg10_ratio", "gauge",
           "Pressure stall information: share of the last 10 s some or all tasks stalled.");
  p.add({{"resource", "memory"}, {"kind", "some"}}, h.psi_memory_some_avg10, 0.01);
  p.add({{"resource", "memory"}, {"kind", "full"}}, h.psi_memory_full_avg10, 0.01);
  p.add({{"resource", "io"}, {"kind", "some"}}, h.psi_io_some_avg10, 0.01);
  p.add({{"resource", "io"}, {"kind", "full"}}, h.psi_io_full_avg10, 0.01);
  p.add({{"resource", "cpu"}, {"kind", "some"}}, h.psi_cpu_some_avg10, 0.01);
  p.family("kvmon_host_pressure_stall_seconds", "counter",
           "Pressure stall information: time some or all tasks stalled, since boot (total).");
  p.add({{"resource", "memory"}, {"kind", "some"}}, seconds_of_us(h.psi_memory_some_us));
  p.add({{"resource", "memory"}, {"kind", "full"}}, seconds_of_us(h.psi_memory_full_us));
  p.add({{"resource", "io"}, {"kind", "some"}}, seconds_of_us(h.psi_io_some_us));
  p.add({{"resource", "io"}, {"kind", "full"}}, seconds_of_us(h.psi_io_full_us));
  p.add({{"resource", "cpu"}, {"kind", "some"}}, seconds_of_us(h.psi_cpu_some_us));
  auto disks = [&](const char* name, const char* type, const char* help, auto value) {
    p.family(name, type, help);
    for (const DiskStat& d : h.disks) p.add({{"device", d.device}}, value(d));
  };
  disks("kvmon_host_disk_reads_completed", "counter", "Reads completed by a whole disk.",
        [](const DiskStat& d) { return d.reads; });
  disks("kvmon_host_disk_writes_completed", "counter", "Writes completed by a whole disk.",
        [](const DiskStat& d) { return d.writes; });
  disks("kvmon_host_disk_read_bytes", "counter", "Bytes read by a whole disk.",
        [](const DiskStat& d) { return d.sectors_read * 512; });
  disks("kvmon_host_disk_written_bytes", "counter", "Bytes written by a whole disk.",
        [](const DiskStat& d) { return d.sectors_written * 512; });
  disks("kvmon_host_disk_io_time_seconds", "counter", "Time a whole disk had I/O in flight.",
        [](const DiskStat& d) { return static_cast<double>(d.io_ms) / 1000.0; });
}

// The families of each process's cgroup (kvmon reads it every tick; absent outside a cgroup
// with a memory controller, and a limit of "max" is unknown here, not a number). `each` calls
// its argument with every process's sample and labels.
template <class Each>
void add_cgroup_families(Page& p, Each&& each) {
  p.family("kvmon_process_cgroup_memory_bytes", "gauge", "Memory charged to the process's cgroup.");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.cg_memory_bytes); });
  p.family("kvmon_process_cgroup_memory_max_bytes", "gauge",
           "The cgroup's memory limit (memory.max, or v1's limit_in_bytes).");
  each([&](const ProcessSample& s, const LabelList& ls) {
    if (s.cg_memory_max_bytes != kNoCgroupLimit) p.add(ls, s.cg_memory_max_bytes);
  });
  p.family("kvmon_process_cgroup_swap_bytes", "gauge", "Swap charged to the process's cgroup.");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.cg_swap_bytes); });
  p.family("kvmon_process_cgroup_cpu_throttled_seconds", "counter",
           "Time the process's cgroup was throttled by its CPU limit.");
  each([&](const ProcessSample& s, const LabelList& ls) {
    p.add(ls, seconds_of_us(s.cg_cpu_throttled_us));
  });
  p.family("kvmon_process_cgroup_oom_kills", "counter",
           "OOM kills in the process's cgroup (memory.events oom_kill).");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.cg_events_oom_kill); });
  p.family("kvmon_process_cgroup_pressure_stall_seconds", "counter",
           "Time some or all tasks of the process's v2 cgroup stalled on a resource "
           "(*.pressure total).");
  each([&](const ProcessSample& s, const LabelList& ls) {
    auto with = [&](const char* resource, const char* kind) {
      LabelList l = ls;
      l.push_back({"resource", resource});
      l.push_back({"kind", kind});
      return l;
    };
    p.add(with("memory", "some"), seconds_of_us(s.cg_psi_memory_some_us));
    p.add(with("memory", "full"), seconds_of_us(s.cg_psi_memory_full_us));
    p.add(with("io", "some"), seconds_of_us(s.cg_psi_io_some_us));
    p.add(with("io", "full"), seconds_of_us(s.cg_psi_io_full_us));
    p.add(with("cpu", "some"), seconds_of_us(s.cg_psi_cpu_some_us));
  });
}

// kvmon's own families: its CPU, memory and start (the process_* names Prometheus's clients
// use), its ticks, its version.
void add_self_families(Page& p, const SelfUsage& self, int64_t ticks, int64_t last_scheduled_us) {
  p.family("process_cpu_seconds", "counter", "CPU time kvmon itself used (user + system).");
  p.add({}, self.cpu_seconds);
  p.family("process_resident_memory_bytes", "gauge", "Resident set size of kvmon itself.");
  p.add({}, self.rss_bytes);
  p.family("process_start_time_seconds", "gauge", "Start time of kvmon since the epoch.");
  p.add({}, self.start_time_seconds);
  p.family("kvmon_ticks", "counter", "Ticks kvmon has sampled since it started.");
  p.add({}, ticks);
  if (ticks > 0) {
    p.family("kvmon_last_tick_scheduled_seconds", "gauge",
             "When the latest tick was due, since the epoch.");
    p.add({}, static_cast<double>(last_scheduled_us) / 1e6);
  }
  p.family("kvmon_build_info", "gauge", "kvmon's version (the value is always 1).");
  p.add({{"version", version()}}, int64_t{1});
}

// kvmon_process_info: 1 per live process, with its pid and instance (MetricsRegistry's
// ProcessLabels).
template <class Labels>
void add_info_family(Page& p, const Labels& labels) {
  p.family("kvmon_process_info", "gauge",
           "1 per live process: its pid and kvmon's instance id (PID@START_TICKS).");
  for (const auto& l : labels)
    p.add(LabelList{{"target", l.target},
                    {"name", l.name},
                    {"process", l.process},
                    {"pid", l.pid},
                    {"kvmon_instance", l.instance}},
          int64_t{1});
}

}  // namespace

SelfUsage read_self_usage(int64_t ticks_per_s, std::optional<int64_t> boot_ts_us) {
  SelfUsage u;
  int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return u;
  std::array<char, 1024> buf{};
  ssize_t n = ::read(fd, buf.data(), buf.size());
  ::close(fd);
  if (n <= 0) return u;
  auto st = parse_pid_stat(std::string_view(buf.data(), static_cast<size_t>(n)));
  if (!st) return u;
  const PidStat& s = st.value();
  if (ticks_per_s > 0) {
    u.cpu_seconds =
        static_cast<double>(s.utime_ticks + s.stime_ticks) / static_cast<double>(ticks_per_s);
    if (boot_ts_us) {
      u.start_time_seconds = static_cast<double>(*boot_ts_us) / 1e6 +
                             static_cast<double>(s.start_ticks) / static_cast<double>(ticks_per_s);
    }
  }
  long page = sysconf(_SC_PAGESIZE);
  if (page > 0) u.rss_bytes = s.rss_pages * page;
  return u;
}

MetricsRegistry::MetricsRegistry(std::vector<std::string> selectors, int64_t ticks_per_s,
                                 int64_t page_bytes)
    : selectors_(std::move(selectors)), ticks_per_s_(ticks_per_s), page_bytes_(page_bytes) {
  for (const std::string& s : selectors_) restarts_[s] = 0;
}

void MetricsRegistry::update(const Batch& batch) {
  ++ticks_;
  last_scheduled_ts_us_ = batch.scheduled_ts_us;
  for (const InstanceRecord& r : batch.new_instances) {
    instances_[r.key] = Instance{r.selector, r.name, r.started_ts_us};
  }
  processes_ = batch.processes;
  if (batch.host) host_ = batch.host;
  for (const EventRecord& e : batch.events) {
    if (!e.instance) continue;
    auto it = instances_.find(*e.instance);
    if (it == instances_.end()) continue;
    if (e.kind == "target_restarted") {
      ++restarts_[it->second.selector];
    } else if (e.kind == "target_exited" || e.kind == "child_exited") {
      instances_.erase(it);
    }
  }
}

// A process's series are named by target, process name and the process's place among the
// target's live processes of that name (`process`, "0" for the first started), never by pid: a
// restarted store continues its series instead of starting new ones, and Prometheus's own
// `instance` label (the scraped host) is not shadowed. The pid and kvmon's instance id are on
// kvmon_process_info, for joins.
std::vector<MetricsRegistry::ProcessLabels> MetricsRegistry::process_labels() const {
  std::vector<ProcessLabels> labels(processes_.size());
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<int64_t, size_t>>> places;
  for (size_t i = 0; i < processes_.size(); ++i) {
    const ProcessSample& s = processes_[i];
    auto it = instances_.find(s.key);
    ProcessLabels& l = labels[i];
    l.target = it != instances_.end() ? it->second.selector : std::string();
    l.name = it != instances_.end() ? it->second.name : s.comm;
    l.pid = std::to_string(s.key.pid);
    l.instance = to_string(s.key);
    places[{l.target, l.name}].emplace_back(
        it != instances_.end() ? it->second.started_ts_us.value_or(0) : 0, i);
  }
  for (auto& [key, members] : places) {
    std::sort(members.begin(), members.end());
    for (size_t k = 0; k < members.size(); ++k)
      labels[members[k].second].process = std::to_string(k);
  }
  return labels;
}

std::string MetricsRegistry::render(bool openmetrics, const SelfUsage& self) const {
  Page p(openmetrics);
  const std::vector<ProcessLabels> labels = process_labels();
  std::map<std::string, int64_t> live;  // per selector
  for (const std::string& sel : selectors_) live[sel] = 0;
  for (const ProcessLabels& l : labels)
    if (live.count(l.target)) ++live[l.target];
  auto each = [&](auto&& fn) {
    for (size_t i = 0; i < processes_.size(); ++i) {
      const ProcessLabels& l = labels[i];
      fn(processes_[i], LabelList{{"target", l.target}, {"name", l.name}, {"process", l.process}});
    }
  };

  add_info_family(p, labels);
  p.family("kvmon_process_resident_memory_bytes", "gauge",
           "Resident set size of the process (VmRSS).");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.rss_kib, 1024); });
  p.family("kvmon_process_resident_anon_bytes", "gauge", "Anonymous part of the RSS (RssAnon).");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.rss_anon_kib, 1024); });
  p.family("kvmon_process_resident_file_bytes", "gauge", "File-backed part of the RSS (RssFile).");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.rss_file_kib, 1024); });
  p.family("kvmon_process_resident_shmem_bytes", "gauge", "Shared-memory part of the RSS.");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.rss_shmem_kib, 1024); });
  p.family("kvmon_process_swap_bytes", "gauge", "Swapped-out memory of the process (VmSwap).");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.swap_kib, 1024); });
  p.family("kvmon_process_virtual_memory_bytes", "gauge", "Virtual memory size (VmSize).");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.vsize_kib, 1024); });
  p.family("kvmon_process_pss_bytes", "gauge", "Proportional set size (with --pss-interval).");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.pss_kib, 1024); });
  p.family("kvmon_process_cpu_seconds", "counter", "CPU time of the process by mode.");
  each([&](const ProcessSample& s, LabelList ls) {
    ls.push_back({"mode", "user"});
    p.add(ls, seconds_of_us(s.cpu_user_us));
    ls.back().value = "system";
    p.add(ls, seconds_of_us(s.cpu_system_us));
  });
  p.family("kvmon_process_context_switches", "counter", "Context switches of the process by kind.");
  each([&](const ProcessSample& s, LabelList ls) {
    ls.push_back({"kind", "voluntary"});
    p.add(ls, s.ctx_voluntary);
    ls.back().value = "involuntary";
    p.add(ls, s.ctx_involuntary);
  });
  p.family("kvmon_process_minor_faults", "counter", "Page faults that needed no I/O.");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.minor_faults); });
  p.family("kvmon_process_major_faults", "counter", "Page faults that read from storage.");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.major_faults); });
  p.family("kvmon_process_io_read_bytes", "counter",
           "Bytes the process caused to be read from storage (/proc/PID/io read_bytes).");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.io_read_bytes); });
  p.family("kvmon_process_io_written_bytes", "counter",
           "Bytes the process caused to be written to storage (/proc/PID/io write_bytes).");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.io_write_bytes); });
  p.family("kvmon_process_threads", "gauge", "Threads of the process.");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.threads); });
  p.family("kvmon_process_open_fds", "gauge", "Open file descriptors of the process.");
  each([&](const ProcessSample& s, const LabelList& ls) { p.add(ls, s.fds); });
  p.family("kvmon_process_start_time_seconds", "gauge",
           "Start time of the process since the epoch.");
  each([&](const ProcessSample& s, const LabelList& ls) {
    auto it = instances_.find(s.key);
    if (it != instances_.end()) p.add(ls, seconds_of_us(it->second.started_ts_us));
  });

  add_cgroup_families(p, each);

  p.family("kvmon_target_processes", "gauge",
           "Live processes a target selector names now (fork children not counted).");
  for (const auto& [sel, n] : live) p.add({{"target", sel}}, n);
  p.family("kvmon_target_restarts", "counter",
           "New instances of a target after it had exited, since kvmon started.");
  for (const auto& [sel, n] : restarts_) p.add({{"target", sel}}, n);

  if (host_) add_host_families(p, *host_, page_bytes_, ticks_per_s_);

  add_self_families(p, self, ticks_, last_scheduled_ts_us_);
  return p.finish();
}

}  // namespace kv::mon
