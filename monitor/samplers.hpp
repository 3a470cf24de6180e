// Samplers: read one process or the host through a ProcFs into plain sample structs.
// Expected failures (a process that is gone) are results, not exceptions. One thread owns a
// sampler (it remembers which privilege warnings it already logged).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "kvbench/result.hpp"
#include "proc_parsers.hpp"
#include "procfs.hpp"
#include "records.hpp"

namespace kv::mon {

struct ProcessInfo {
  ProcessKey key;
  int64_t ppid = 0;
  std::string comm;
};

// Reads /proc/PID/stat: the identity and parent of a live process; error if it is gone or dead
// (a zombie, state Z, exited and waits to be reaped: it is not a process to follow).
Result<ProcessInfo> read_process_info(const ProcFs& fs, pid_t pid);

// PSS from smaps_rollup: costly (the kernel walks every mapping, ~18 ms at 4 GiB RSS, seconds at
// hundreds of GiB, stalling the target's mmap calls), so opt-in, rare, and skipped when large.
struct PssPolicy {
  int64_t interval_us = 0;        // 0: never
  int64_t max_rss_kib = 4 << 20;  // skip processes with a larger RSS (default 4 GiB)
};

class ProcessSampler {
 public:
  // ticks_per_s: sysconf(_SC_CLK_TCK) (tests pass 100).
  ProcessSampler(const ProcFs& fs, int64_t ticks_per_s, PssPolicy pss = {});

  // Samples the process `key`. Error ("gone") if it no longer exists or its pid now belongs to
  // another process (start_ticks differ). Fields that cannot be read are nullopt.
  Result<ProcessSample> sample(const ProcessKey& key);
  // Reads the command line (NUL-separated argv joined with spaces); empty if unreadable.
  std::string command_line(pid_t pid) const;
  // Closes what is kept open for processes not in `keys` (and forgets their PSS timing). The
  // tracker calls it after each tick with the processes it sampled; a process that was found
  // gone is forgotten by sample() itself.
  void retain(std::span<const ProcessKey> keys);
  // Processes with files kept open (for tests).
  size_t open_processes() const { return procs_.size(); }

 private:
  // What stays open for one process between ticks: its /proc/PID directory and the files read
  // every tick (pread at offset 0: no open/close, no allocation per sample).
  struct Proc {
    PidDir dir;
    OpenFile stat, status, io;
    OpenDir fd_dir;
    std::optional<int64_t> last_pss_steady_us;
  };
  Result<ProcessSample> sample(const ProcessKey& key, Proc& p);
  void warn_once(bool& warned, const char* what, pid_t pid, int err);
  void maybe_read_pss(Proc& p, ProcessSample& s);

  const ProcFs& fs_;
  int64_t ticks_per_s_;
  PssPolicy pss_;
  std::map<ProcessKey, Proc> procs_;
  bool warned_io_ = false;
  bool warned_fd_ = false;
};

class HostSampler {
 public:
  // Opens the host files once; each sample re-reads them (a file missing then, like PSI on an
  // older kernel, stays NULL). The pressure files are read every `psi_every` samples and the
  // samples between repeat that reading (the kernel recomputes avg10 only every 2 s).
  explicit HostSampler(const ProcFs& fs, int64_t psi_every = 1);
  // Never fails: what cannot be read is nullopt (PSI is absent on older kernels). loadavg: the
  // text of /proc/loadavg if the caller has just read it (the tracker does, every tick), so it
  // is not read twice; empty: read it here.
  HostSample sample(std::string_view loadavg = {});
  // Boot time as ts_us: now minus /proc/uptime (btime in /proc/stat is whole seconds, too
  // coarse to place a process start); nullopt if unreadable.
  std::optional<int64_t> boot_ts_us() const;

 private:
  bool is_whole_disk(const std::string& device);
  std::optional<VmStat> read_vmstat();
  void read_disks(HostSample& h);
  void list_disks(HostSample& h);

  const ProcFs& fs_;
  OpenFile loadavg_, meminfo_, vmstat_, stat_, psi_memory_, psi_io_, psi_cpu_, diskstats_;
  int64_t psi_every_;
  int64_t samples_ = 0;
  Pressure psi_memory_last_, psi_io_last_, psi_cpu_last_;
  size_t vmstat_prefix_ = 0;  // bytes of /proc/vmstat that held its wanted lines last time
  std::map<std::string, bool, std::less<>> whole_disk_;  // device -> /sys/block/<dev> exists
  // The disks sampled: whole, and not an idle loop/ram/zram device, as /proc/diskstats listed
  // them last time. Between listings each is read from its own /sys/block/<dev>/stat (the
  // kernel formats one line instead of every partition and idle device).
  struct Disk {
    std::string device;
    OpenFile stat;
  };
  std::vector<Disk> disks_;
  int64_t samples_since_listing_ = -1;  // -1: never listed
};

}  // namespace kv::mon
