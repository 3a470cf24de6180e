#include "samplers.hpp"

#include <algorithm>
#include <cstring>

#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"

namespace kv::mon {
namespace {

bool is_idle_virtual_disk(const DiskStat& d) {
  bool virt =
      d.device.starts_with("loop") || d.device.starts_with("ram") || d.device.starts_with("zram");
  return virt && d.reads == 0 && d.writes == 0;
}

}  // namespace

Result<ProcessInfo> read_process_info(const ProcFs& fs, pid_t pid) {
  int err = 0;
  auto dir = fs.open_pid(pid, &err);
  if (!dir) return Error{"pid " + std::to_string(pid) + ": " + std::strerror(err)};
  FileText stat = dir->read("stat");
  if (!stat.ok()) return Error{"pid " + std::to_string(pid) + ": " + std::strerror(stat.err)};
  auto st = parse_pid_stat(stat.text);
  if (!st) return Error{"pid " + std::to_string(pid) + ": " + st.error().message};
  if (st.value().state == 'Z' || st.value().state == 'X') {
    return Error{"pid " + std::to_string(pid) + ": exited (not reaped yet)"};
  }
  return ProcessInfo{{pid, st.value().start_ticks}, st.value().ppid, st.value().comm};
}

ProcessSampler::ProcessSampler(const ProcFs& fs, int64_t ticks_per_s, PssPolicy pss)
    : fs_(fs), ticks_per_s_(ticks_per_s > 0 ? ticks_per_s : 100), pss_(pss) {}

void ProcessSampler::maybe_read_pss(Proc& p, ProcessSample& s) {
  if (pss_.interval_us <= 0 || !s.rss_kib || *s.rss_kib > pss_.max_rss_kib) return;
  int64_t now_us = steady_us();
  if (p.last_pss_steady_us && now_us - *p.last_pss_steady_us < pss_.interval_us) return;
  p.last_pss_steady_us = now_us;
  FileText t = p.dir.read("smaps_rollup");  // rare: opened each time
  if (t.ok()) s.pss_kib = parse_smaps_rollup_pss(t.text);
}

void ProcessSampler::warn_once(bool& warned, const char* what, pid_t pid, int err) {
  if (warned) return;
  warned = true;
  log_warn() << "cannot read " << fs_.proc_root() << "/" << pid << "/" << what << " ("
             << std::strerror(err) << "): stored as NULL. Reading it needs the target's user, "
             << "root, or CAP_SYS_PTRACE (e.g. setcap cap_sys_ptrace,cap_dac_read_search+ep kvmon)";
}

Result<ProcessSample> ProcessSampler::sample(const ProcessKey& key) {
  auto it = procs_.find(key);
  if (it == procs_.end()) {
    auto dir = fs_.open_pid(key.pid);
    if (!dir) return Error{"gone"};
    Proc p;
    p.stat = dir->open("stat");
    p.status = dir->open("status");
    p.dir = std::move(*dir);
    it = procs_.emplace(key, std::move(p)).first;
  }
  auto s = sample(key, it->second);
  if (!s) procs_.erase(it);
  return s;
}

void ProcessSampler::retain(std::span<const ProcessKey> keys) {
  std::erase_if(procs_, [&](const auto& entry) {
    return std::find(keys.begin(), keys.end(), entry.first) == keys.end();
  });
}

Result<ProcessSample> ProcessSampler::sample(const ProcessKey& key, Proc& p) {
  if (!p.stat.read()) return Error{"gone"};
  // Outside procfs (fixture trees) a removed process directory leaves its open files readable.
  if (!fs_.is_procfs() && !p.stat.exists()) return Error{"gone"};
  auto parsed = parse_pid_stat(p.stat.text());
  if (!parsed) return Error{"gone: " + parsed.error().message};
  const PidStat& st = parsed.value();
  if (st.start_ticks != key.start_ticks) return Error{"gone: pid reused"};
  if (st.state == 'Z' || st.state == 'X') return Error{"gone: exited"};

  ProcessSample s;
  s.key = key;
  s.ts_us = now_ts_us();
  s.ppid = st.ppid;
  s.comm = st.comm;
  s.cpu_user_us = ticks_to_us(st.utime_ticks, ticks_per_s_);
  s.cpu_system_us = ticks_to_us(st.stime_ticks, ticks_per_s_);
  s.minor_faults = st.minor_faults;
  s.major_faults = st.major_faults;
  s.threads = st.num_threads;
  s.vsize_kib = st.vsize_bytes / 1024;

  if (p.status.read()) {
    PidStatus ps = parse_pid_status(p.status.text());
    s.rss_kib = ps.vm_rss_kib;
    s.rss_anon_kib = ps.rss_anon_kib;
    s.rss_file_kib = ps.rss_file_kib;
    s.rss_shmem_kib = ps.rss_shmem_kib;
    s.swap_kib = ps.vm_swap_kib;
    s.vsize_kib = ps.vm_size_kib;  // none for a kernel thread: NULL, not stat's 0
    if (ps.threads) s.threads = ps.threads;
    s.ctx_voluntary = ps.ctx_voluntary;
    s.ctx_involuntary = ps.ctx_involuntary;
  }

  // io and fd/ need the target's user or CAP_SYS_PTRACE: opened again each tick until they
  // open (a failure is stored as NULL, never 0).
  if (!p.io.is_open()) p.io = p.dir.open("io");
  if (p.io.read()) {
    PidIo io = parse_pid_io(p.io.text());
    s.io_read_bytes = io.read_bytes;
    s.io_write_bytes = io.write_bytes;
  } else if (p.io.err() == EACCES || p.io.err() == EPERM) {
    warn_once(warned_io_, "io", key.pid, p.io.err());
  }

  if (!p.fd_dir.is_open()) p.fd_dir = p.dir.open_dir("fd");
  s.fds = fs_.fd_dir_size_is_count() ? p.fd_dir.stat_size() : p.fd_dir.count();
  if (!s.fds && (p.fd_dir.err() == EACCES || p.fd_dir.err() == EPERM)) {
    warn_once(warned_fd_, "fd", key.pid, p.fd_dir.err());
  }
  maybe_read_pss(p, s);
  return s;
}

std::string ProcessSampler::command_line(pid_t pid) const {
  auto dir = fs_.open_pid(pid);
  if (!dir) return {};
  FileText t = dir->read("cmdline");
  if (!t.ok()) return {};
  std::string& s = t.text;
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (char& c : s) {
    if (c == '\0') c = ' ';
  }
  return s;
}

HostSampler::HostSampler(const ProcFs& fs, int64_t psi_every)
    : fs_(fs),
      loadavg_(fs.open("loadavg")),
      meminfo_(fs.open("meminfo")),
      vmstat_(fs.open("vmstat")),
      stat_(fs.open("stat")),
      psi_memory_(fs.open("pressure/memory")),
      psi_io_(fs.open("pressure/io")),
      psi_cpu_(fs.open("pressure/cpu")),
      diskstats_(fs.open("diskstats")),
      psi_every_(std::max<int64_t>(1, psi_every)) {}

bool HostSampler::is_whole_disk(const std::string& device) {
  auto it = whole_disk_.find(device);
  if (it == whole_disk_.end()) it = whole_disk_.emplace(device, fs_.is_whole_disk(device)).first;
  return it->second;
}

HostSample HostSampler::sample(std::string_view loadavg) {
  HostSample h;
  h.ts_us = now_ts_us();
  if (loadavg.empty() && loadavg_.read()) loadavg = loadavg_.text();
  if (!loadavg.empty()) {
    if (auto la = parse_loadavg(loadavg)) {
      h.load1 = la.value().load1;
      h.load5 = la.value().load5;
      h.load15 = la.value().load15;
    }
  }
  if (meminfo_.read()) {
    MemInfo m = parse_meminfo(meminfo_.text());
    h.mem_total_kib = m.mem_total_kib;
    h.mem_available_kib = m.mem_available_kib;
    h.swap_total_kib = m.swap_total_kib;
    h.swap_free_kib = m.swap_free_kib;
  }
  if (auto v = read_vmstat()) {
    h.pswpin = v->pswpin;
    h.pswpout = v->pswpout;
    h.pgmajfault = v->pgmajfault;
  }
  if (stat_.read()) {
    HostStat st = parse_host_stat(stat_.text());
    h.cpu_user_ticks = st.cpu_user_ticks;
    h.cpu_system_ticks = st.cpu_system_ticks;
    h.cpu_idle_ticks = st.cpu_idle_ticks;
    h.cpu_iowait_ticks = st.cpu_iowait_ticks;
    h.cpu_steal_ticks = st.cpu_steal_ticks;
  }
  if (samples_++ % psi_every_ == 0) {
    auto read = [](OpenFile& f) { return f.read() ? parse_pressure(f.text()) : Pressure{}; };
    psi_memory_last_ = read(psi_memory_);
    psi_io_last_ = read(psi_io_);
    psi_cpu_last_ = read(psi_cpu_);
  }
  h.psi_memory_some_avg10 = psi_memory_last_.some_avg10;
  h.psi_memory_full_avg10 = psi_memory_last_.full_avg10;
  h.psi_io_some_avg10 = psi_io_last_.some_avg10;
  h.psi_io_full_avg10 = psi_io_last_.full_avg10;
  h.psi_cpu_some_avg10 = psi_cpu_last_.some_avg10;
  h.psi_memory_some_us = psi_memory_last_.some_total_us;
  h.psi_memory_full_us = psi_memory_last_.full_total_us;
  h.psi_io_some_us = psi_io_last_.some_total_us;
  h.psi_io_full_us = psi_io_last_.full_total_us;
  h.psi_cpu_some_us = psi_cpu_last_.some_total_us;
  read_disks(h);
  return h;
}

// Lists the disks from /proc/diskstats every kListEvery samples (a disk attached, or a loop
// device put to use, shows up within that many), and when a disk's own file fails (detached).
void HostSampler::read_disks(HostSample& h) {
  constexpr int64_t kListEvery = 60;
  if (samples_since_listing_ < 0 || ++samples_since_listing_ >= kListEvery) {
    list_disks(h);
    return;
  }
  h.disks.reserve(disks_.size());
  for (Disk& d : disks_) {
    std::optional<DiskStat> s;
    if (d.stat.read()) s = parse_block_stat(d.stat.text());
    if (!s) {
      h.disks.clear();
      list_disks(h);
      return;
    }
    s->device = d.device;
    h.disks.push_back(std::move(*s));
  }
}

void HostSampler::list_disks(HostSample& h) {
  samples_since_listing_ = 0;
  std::vector<Disk> listed;
  bool all_open = true;
  if (diskstats_.read()) {
    for (DiskStat& d : parse_diskstats(diskstats_.text())) {
      if (!is_whole_disk(d.device) || is_idle_virtual_disk(d)) continue;
      auto kept = std::find_if(disks_.begin(), disks_.end(),
                               [&](const Disk& k) { return k.device == d.device; });
      if (kept != disks_.end()) {
        listed.push_back(std::move(*kept));
      } else {
        listed.push_back(Disk{d.device, fs_.open_block_stat(d.device)});
      }
      all_open = all_open && listed.back().stat.is_open();
      h.disks.push_back(std::move(d));
    }
  }
  disks_ = std::move(listed);
  // Without the sysfs files (not mounted, or an unusual device), /proc/diskstats every time.
  if (!all_open) samples_since_listing_ = -1;
}

// /proc/vmstat is ~180 lines generated as they are read, and the three wanted come in its
// first half: read up to a little past where the last of them ended last time (half the
// kernel's work), and the whole file when one of them is not in that part.
std::optional<VmStat> HostSampler::read_vmstat() {
  constexpr size_t kMargin = 512;  // counters grow a digit now and then
  auto complete = [](const VmStat& v) { return v.pswpin && v.pswpout && v.pgmajfault; };
  if (vmstat_prefix_ > 0 && vmstat_.read_prefix(vmstat_prefix_ + kMargin)) {
    VmStat v = parse_vmstat(vmstat_.text());
    if (complete(v)) return v;
  }
  if (!vmstat_.read()) return std::nullopt;
  std::string_view text = vmstat_.text();
  VmStat v = parse_vmstat(text);
  vmstat_prefix_ = 0;
  if (complete(v)) {  // where the last wanted line ends
    for (std::string_view key : {"\npswpin ", "\npswpout ", "\npgmajfault "}) {
      size_t at = text.find(key);
      size_t end = at == std::string_view::npos ? text.size() : text.find('\n', at + 1);
      vmstat_prefix_ =
          std::max(vmstat_prefix_, end == std::string_view::npos ? text.size() : end + 1);
    }
  }
  return v;
}

std::optional<int64_t> HostSampler::boot_ts_us() const {
  FileText t = fs_.read("uptime");
  if (!t.ok()) return std::nullopt;
  auto uptime_us = parse_uptime_us(t.text);
  if (!uptime_us) return std::nullopt;
  return now_ts_us() - uptime_us.value();
}

}  // namespace kv::mon
