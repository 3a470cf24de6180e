// A target's cgroup, v1 and v2: where it is (/proc/PID/cgroup against the cgroup mounts of
// /proc/self/mountinfo), its files read each tick into the cg_* columns of its process sample,
// and its memory events (v2 memory.events / memory.swap.events, watched with inotify; v1
// memory.oom_control / memory.failcnt, polled each tick) as event rows. Which hierarchy a value
// comes from: memory and cpu from the v1 hierarchy of that controller when one is mounted (the
// controller cannot be in v2 then), else from v2; io.stat and the pressure files from v2 only.
// kvmon only reads: no file here is ever written. One thread owns a CgroupSampler.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "procfs.hpp"
#include "psi_trigger.hpp"
#include "records.hpp"

namespace kv::mon {

// ---- pure parsers (no I/O) ----

// /proc/PID/cgroup: "0::/path" (v2) and "N:ctrl[,ctrl...]:/path" (v1, one line per hierarchy;
// "name=systemd" hierarchies are kept under that name).
struct ProcCgroup {
  std::optional<std::string> v2;
  std::map<std::string, std::string, std::less<>> v1;  // controller -> path
};
ProcCgroup parse_proc_cgroup(std::string_view text);
// An integer that is the whole of `s` but blanks around it (a one-value cgroup file).
OptInt cgroup_value(std::string_view s);

// The cgroup mounts of a mountinfo file: mount point and the cgroup path it shows (its root).
struct CgroupMount {
  std::string root;         // 4th field: the cgroup mounted there ("/" usually)
  std::string mount_point;  // 5th field, \040-style escapes undone
};
struct CgroupMounts {
  std::optional<CgroupMount> v2;                       // the first cgroup2 mount
  std::map<std::string, CgroupMount, std::less<>> v1;  // controller -> its hierarchy's mount
};
CgroupMounts parse_cgroup_mounts(std::string_view mountinfo);

// The directory of cgroup `path` under `mount`; nullopt when the mount does not show it.
std::optional<std::string> cgroup_dir(const CgroupMount& mount, std::string_view path);

// A limit file (memory.max, memory.limit_in_bytes, ...): "max" and v1's unlimited (anything from
// 2^63 - 4096, LONG_MAX rounded down to a page) are kNoCgroupLimit.
OptInt parse_cgroup_limit(std::string_view text);
// The value of `key` in a flat keyed file ("key value" lines: memory.stat, cpu.stat,
// memory.events, memory.oom_control).
OptInt keyed_value(std::string_view text, std::string_view key);
// io.stat summed over its devices (rbytes, wbytes, rios, wios).
struct IoStat {
  OptInt read_bytes, write_bytes, reads, writes;
};
IoStat parse_io_stat(std::string_view text);

// The event counters of a cgroup, as the sample holds them (cg_events_*, cg_swap_events_*,
// cg_under_oom, cg_failcnt).
struct CgroupCounters {
  OptInt high, max, oom, oom_kill, swap_max, swap_fail, under_oom, failcnt;
};
CgroupCounters counters_of(const ProcessSample& s);
// The events between two readings of the counters: a counter that grew (under_oom: that went
// from 0 to 1) is one event row of kind cgroup_<name> (cgroup_high, cgroup_max, cgroup_oom,
// cgroup_oom_kill, cgroup_swap_max, cgroup_swap_fail, cgroup_under_oom, cgroup_failcnt), its
// message "<who>: <file> <key> A -> B (<what it means>)". A counter unknown in either reading
// gives none (the first reading is the baseline).
struct CgroupEvent {
  std::string kind;
  std::string message;
};
std::vector<CgroupEvent> cgroup_events(const CgroupCounters& before, const CgroupCounters& after,
                                       std::string_view who, bool v2);

// ---- the sampler ----

// How often the files that change slowly are read, counted in samples of one process. The
// defaults (every sample) are for tests; kvmon passes cadence_for_interval().
struct CgroupCadence {
  // /proc/PID/cgroup (has the process moved?): every `recheck_every` samples, and on the next
  // sample while a move waits for a second reading that agrees.
  int64_t recheck_every = 1;
  // memory/io/cpu.pressure: every `pressure_every` samples; the samples between repeat the last
  // reading (the kernel recomputes avg10 only every 2 s: a read between gives the same value).
  int64_t pressure_every = 1;
};
// /proc/PID/cgroup every 5 s (a move is followed within 5 s + one interval) and the pressure
// files every 2 s, in ticks of `interval_us` (at least every tick).
CgroupCadence cadence_for_interval(int64_t interval_us);

class CgroupSampler {
 public:
  // Reads proc_root/self/mountinfo for the mounts (again whenever a new process is located).
  // Mount points under /sys are taken under the ProcFs's sys root (fixture trees in tests).
  explicit CgroupSampler(const ProcFs& fs, CgroupCadence cadence = {});
  ~CgroupSampler();
  CgroupSampler(const CgroupSampler&) = delete;
  CgroupSampler& operator=(const CgroupSampler&) = delete;

  // Fills the cg_* fields of `s` (the sample of `key`, a process of target `target`, named
  // "TARGET (pid N)" in messages) and
  // appends to `events` what its counters did since the last reading. The first time (and
  // when /proc/PID/cgroup has changed on two ticks in a row) it locates the cgroup, opens its
  // files and appends a `cgroup_found` event naming the directories.
  void sample(const ProcessKey& key, std::string_view target, ProcessSample& s,
              std::vector<EventRecord>& events);
  // The cause of the exit of `key`, found gone this tick: "killed by the OOM killer (...)" when
  // its cgroup's oom_kill count grew since its sample before last (a process being killed may
  // be sampled once more after the kill was counted), else empty. Forgets `key`.
  std::string exit_cause(const ProcessKey& key, std::vector<EventRecord>& events);
  // Forgets processes not in `keys`.
  void retain(std::span<const ProcessKey> keys);

  // An inotify descriptor (non-blocking) that becomes readable when a watched v2 memory.events
  // or memory.swap.events changes; -1 if inotify is unavailable.
  int notify_fd() const { return inotify_fd_; }
  // Drains notify_fd() and re-reads the changed files: their events, stamped with the time of
  // the reading, go to `events`.
  void on_notify(std::vector<EventRecord>& events);
  // The directories located for `key` (for tests); empty if none.
  std::string describe(const ProcessKey& key) const;

  // Opt-in PSI triggers on each target's v2 <resource>.pressure (--psi-trigger cgroup:...),
  // set when its cgroup is located (again after a move). A trigger that cannot be set is one
  // warning per cgroup; its pressure file is still polled.
  void set_psi_triggers(std::vector<PsiTriggerSpec> specs);
  // The triggers set now: the descriptor to wait on for POLLPRI (the caller's own event loop:
  // PSI's poll clears the event, so no epoll set of ours may stand between), whose target, and
  // the message of its event. Valid until psi_generation() changes.
  struct PsiTriggerView {
    int fd;
    ProcessKey key;
    std::string message;
  };
  std::vector<PsiTriggerView> psi_triggers() const;
  // Changes whenever a trigger is set or closed.
  uint64_t psi_generation() const { return psi_generation_; }

 private:
  struct Group;
  Group* locate(const ProcessKey& key, std::string_view target, std::vector<EventRecord>& events);
  // locate's steps: the controllers' files of g's cgroup (`pc`: its /proc/PID/cgroup), opened
  // once and read at each sample; the PSI triggers on its v2 directory.
  void open_files(Group& g, const ProcCgroup& pc);
  void set_psi_triggers(Group& g, std::string_view who);
  // sample's steps: the memory and its events, the CPU, the I/O and pressure figures.
  void sample_memory(Group& g, ProcessSample& s, std::vector<EventRecord>& events);
  static void sample_cpu(Group& g, ProcessSample& s);
  void sample_io_pressure(Group& g, ProcessSample& s) const;
  // Reads g's event counters, appends an event for each that grew since g.last, and makes
  // them g.last; returns them.
  CgroupCounters read_events(Group& g, std::vector<EventRecord>& events);
  void drop_watches(Group& g);
  std::string under_sys(const std::string& path) const;

  const ProcFs& fs_;
  CgroupCadence cadence_;
  CgroupMounts mounts_;
  int inotify_fd_ = -1;
  std::vector<PsiTriggerSpec> psi_specs_;
  uint64_t psi_generation_ = 0;
  std::map<ProcessKey, std::unique_ptr<Group>> groups_;
};

}  // namespace kv::mon
