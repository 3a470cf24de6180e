// Plain structs that cross module boundaries: what the samplers produce and the sink stores,
// one Batch per tick. Every std::optional that is empty is stored as NULL.
#pragma once

#include <sys/types.h>

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proc_parsers.hpp"

namespace kv::mon {

// A process's identity: pids are reused, (pid, start_ticks) are not.
struct ProcessKey {
  pid_t pid = 0;
  int64_t start_ticks = 0;
  auto operator<=>(const ProcessKey&) const = default;
};

std::string to_string(const ProcessKey& key);

// A process seen for the first time: becomes a process_instances row.
struct InstanceRecord {
  ProcessKey key;
  std::optional<ProcessKey> parent;  // set for fork children of a target
  OptInt started_ts_us;
  std::string name;
  std::string command_line;
  std::string selector;
  int64_t first_seen_ts_us = 0;
};

struct ProcessSample {
  ProcessKey key;
  int64_t ts_us = 0;
  int64_t scheduled_ts_us = 0;
  int64_t ppid = 0;  // not stored: used to find fork children
  std::string comm;  // not stored per sample
  OptInt rss_kib, rss_anon_kib, rss_file_kib, rss_shmem_kib, swap_kib, vsize_kib;
  OptInt cpu_user_us, cpu_system_us;
  OptInt threads, fds;
  OptInt io_read_bytes, io_write_bytes;
  OptInt minor_faults, major_faults;
  OptInt ctx_voluntary, ctx_involuntary;
  OptInt pss_kib;
};

struct HostSample {
  int64_t ts_us = 0;
  int64_t scheduled_ts_us = 0;
  OptReal load1, load5, load15;
  OptInt mem_total_kib, mem_available_kib, swap_total_kib, swap_free_kib;
  OptInt pswpin, pswpout, pgmajfault;
  OptInt cpu_user_ticks, cpu_system_ticks, cpu_iowait_ticks, cpu_steal_ticks, cpu_idle_ticks;
  OptReal psi_memory_some_avg10, psi_memory_full_avg10;
  OptReal psi_io_some_avg10, psi_io_full_avg10;
  OptReal psi_cpu_some_avg10;
  std::vector<DiskStat> disks;  // whole disks only
};

struct EventRecord {
  int64_t ts_us = 0;
  std::string kind;  // target_found, target_exited, target_restarted, samples_dropped, ...
  std::string message;
  std::optional<ProcessKey> instance;
};

// Everything one tick produced, written in one transaction.
struct Batch {
  int64_t scheduled_ts_us = 0;
  std::vector<InstanceRecord> new_instances;
  std::vector<ProcessSample> processes;
  std::optional<HostSample> host;
  std::vector<EventRecord> events;
};

}  // namespace kv::mon
