// A kvmon sample, defined once: the structs kvmon's samplers fill, and one field table per
// struct naming each stored value's column (the same name is its key on the kvmon link,
// docs/protocol.md). kvmon's INSERTs, the wire encoding and kvdrive's decoding and INSERTs
// (`--monitor`) are all generated from these tables, so a new column is: a migration, a member,
// a table row (tests/common/samples_test.cpp checks the tables against the migrated schema).
// Thread-safety: plain data and reentrant functions.
#pragma once

#include <sys/types.h>

#include <compare>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kv {

class Statement;
namespace proto {
struct Message;
}

// Unknown is empty, stored as NULL (never 0) and left out of a link line.
using OptInt = std::optional<int64_t>;
using OptReal = std::optional<double>;

// A process's identity: pids are reused, (pid, start_ticks) are not.
struct ProcessKey {
  pid_t pid = 0;
  int64_t start_ticks = 0;
  // clang-tidy 14 sees a literal 0 in a defaulted <=> (a false positive).
  // NOLINTBEGIN(modernize-use-nullptr)
  auto operator<=>(const ProcessKey&) const = default;
  // NOLINTEND(modernize-use-nullptr)
};

std::string to_string(const ProcessKey& key);

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
  // The process's cgroup (migration 005; monitor/README.md "Cgroups"): memory and cpu from the
  // v1 hierarchy of that controller where one is mounted, else from cgroup v2; io and pressure
  // from v2 only. Set on target rows; NULL on fork children (their parent's cgroup) and where a
  // file is absent. A limit that is not set ("max", v1's unlimited) is kNoCgroupLimit.
  OptInt cg_memory_bytes, cg_memory_max_bytes, cg_memory_high_bytes;
  OptInt cg_swap_bytes, cg_swap_max_bytes, cg_memsw_bytes, cg_memsw_max_bytes;
  OptInt cg_anon_bytes, cg_file_bytes, cg_kernel_bytes, cg_shmem_bytes;
  OptInt cg_pgmajfault, cg_workingset_refault_anon, cg_workingset_refault_file;
  OptInt cg_pgscan, cg_pgsteal;
  OptInt cg_events_high, cg_events_max, cg_events_oom, cg_events_oom_kill;
  OptInt cg_swap_events_max, cg_swap_events_fail, cg_under_oom, cg_failcnt;
  OptInt cg_cpu_usage_us, cg_cpu_nr_periods, cg_cpu_nr_throttled, cg_cpu_throttled_us;
  OptInt cg_cpu_quota_us, cg_cpu_period_us;  // migration 013; no quota is kNoCgroupLimit
  OptInt cg_io_read_bytes, cg_io_write_bytes, cg_io_reads, cg_io_writes;
  OptReal cg_psi_memory_some_avg10, cg_psi_memory_full_avg10;
  OptReal cg_psi_io_some_avg10, cg_psi_io_full_avg10, cg_psi_cpu_some_avg10;
  // migration 017: the stall time of those lines since the cgroup was made (PSI total=, µs)
  OptInt cg_psi_memory_some_us, cg_psi_memory_full_us;
  OptInt cg_psi_io_some_us, cg_psi_io_full_us, cg_psi_cpu_some_us;
};

// A cgroup limit that is not set (v2 "max"; v1's page-rounded LONG_MAX is mapped to it too).
inline constexpr int64_t kNoCgroupLimit = INT64_MAX;

// One line of /proc/diskstats (the first 11 counters after the name): one disk_samples row.
struct DiskStat {
  std::string device;
  int64_t reads = 0;
  int64_t sectors_read = 0;
  int64_t writes = 0;
  int64_t sectors_written = 0;
  int64_t io_ms = 0;
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
  // migration 017: the stall time of those lines since boot (PSI total=, µs)
  OptInt psi_memory_some_us, psi_memory_full_us;
  OptInt psi_io_some_us, psi_io_full_us, psi_cpu_some_us;
  std::vector<DiskStat> disks;  // whole disks only
};

// One stored value of a sample struct S.
template <typename S>
struct SampleField {
  const char* column;  // SQL column, and the key of the link line
  const char* unit;    // as in schema/README.md; "" for counts and names
  bool nullable;       // the column takes NULL (a link line without the key gives NULL)
  std::variant<OptInt S::*, OptReal S::*, int64_t S::*, std::string S::*> member;
};

// A sample table: its SQL table, its link verb, its fields in link-line order.
template <typename S>
struct SampleTable {
  const char* table;
  const char* verb;
  std::span<const SampleField<S>> fields;
};

inline constexpr SampleField<ProcessSample> kProcessFields[] = {
    {"rss_kib", "KiB", true, &ProcessSample::rss_kib},
    {"rss_anon_kib", "KiB", true, &ProcessSample::rss_anon_kib},
    {"rss_file_kib", "KiB", true, &ProcessSample::rss_file_kib},
    {"rss_shmem_kib", "KiB", true, &ProcessSample::rss_shmem_kib},
    {"swap_kib", "KiB", true, &ProcessSample::swap_kib},
    {"vsize_kib", "KiB", true, &ProcessSample::vsize_kib},
    {"cpu_user_us", "us", true, &ProcessSample::cpu_user_us},
    {"cpu_system_us", "us", true, &ProcessSample::cpu_system_us},
    {"threads", "", true, &ProcessSample::threads},
    {"fds", "", true, &ProcessSample::fds},
    {"io_read_bytes", "bytes", true, &ProcessSample::io_read_bytes},
    {"io_write_bytes", "bytes", true, &ProcessSample::io_write_bytes},
    {"minor_faults", "", true, &ProcessSample::minor_faults},
    {"major_faults", "", true, &ProcessSample::major_faults},
    {"ctx_voluntary", "", true, &ProcessSample::ctx_voluntary},
    {"ctx_involuntary", "", true, &ProcessSample::ctx_involuntary},
    {"pss_kib", "KiB", true, &ProcessSample::pss_kib},
    {"cg_memory_bytes", "bytes", true, &ProcessSample::cg_memory_bytes},
    {"cg_memory_max_bytes", "bytes", true, &ProcessSample::cg_memory_max_bytes},
    {"cg_memory_high_bytes", "bytes", true, &ProcessSample::cg_memory_high_bytes},
    {"cg_swap_bytes", "bytes", true, &ProcessSample::cg_swap_bytes},
    {"cg_swap_max_bytes", "bytes", true, &ProcessSample::cg_swap_max_bytes},
    {"cg_memsw_bytes", "bytes", true, &ProcessSample::cg_memsw_bytes},
    {"cg_memsw_max_bytes", "bytes", true, &ProcessSample::cg_memsw_max_bytes},
    {"cg_anon_bytes", "bytes", true, &ProcessSample::cg_anon_bytes},
    {"cg_file_bytes", "bytes", true, &ProcessSample::cg_file_bytes},
    {"cg_kernel_bytes", "bytes", true, &ProcessSample::cg_kernel_bytes},
    {"cg_shmem_bytes", "bytes", true, &ProcessSample::cg_shmem_bytes},
    {"cg_pgmajfault", "", true, &ProcessSample::cg_pgmajfault},
    {"cg_workingset_refault_anon", "pages", true, &ProcessSample::cg_workingset_refault_anon},
    {"cg_workingset_refault_file", "pages", true, &ProcessSample::cg_workingset_refault_file},
    {"cg_pgscan", "pages", true, &ProcessSample::cg_pgscan},
    {"cg_pgsteal", "pages", true, &ProcessSample::cg_pgsteal},
    {"cg_events_high", "", true, &ProcessSample::cg_events_high},
    {"cg_events_max", "", true, &ProcessSample::cg_events_max},
    {"cg_events_oom", "", true, &ProcessSample::cg_events_oom},
    {"cg_events_oom_kill", "", true, &ProcessSample::cg_events_oom_kill},
    {"cg_swap_events_max", "", true, &ProcessSample::cg_swap_events_max},
    {"cg_swap_events_fail", "", true, &ProcessSample::cg_swap_events_fail},
    {"cg_under_oom", "", true, &ProcessSample::cg_under_oom},
    {"cg_failcnt", "", true, &ProcessSample::cg_failcnt},
    {"cg_cpu_usage_us", "us", true, &ProcessSample::cg_cpu_usage_us},
    {"cg_cpu_nr_periods", "", true, &ProcessSample::cg_cpu_nr_periods},
    {"cg_cpu_nr_throttled", "", true, &ProcessSample::cg_cpu_nr_throttled},
    {"cg_cpu_throttled_us", "us", true, &ProcessSample::cg_cpu_throttled_us},
    {"cg_io_read_bytes", "bytes", true, &ProcessSample::cg_io_read_bytes},
    {"cg_io_write_bytes", "bytes", true, &ProcessSample::cg_io_write_bytes},
    {"cg_io_reads", "", true, &ProcessSample::cg_io_reads},
    {"cg_io_writes", "", true, &ProcessSample::cg_io_writes},
    {"cg_psi_memory_some_avg10", "%", true, &ProcessSample::cg_psi_memory_some_avg10},
    {"cg_psi_memory_full_avg10", "%", true, &ProcessSample::cg_psi_memory_full_avg10},
    {"cg_psi_io_some_avg10", "%", true, &ProcessSample::cg_psi_io_some_avg10},
    {"cg_psi_io_full_avg10", "%", true, &ProcessSample::cg_psi_io_full_avg10},
    {"cg_psi_cpu_some_avg10", "%", true, &ProcessSample::cg_psi_cpu_some_avg10},
    {"cg_cpu_quota_us", "us", true, &ProcessSample::cg_cpu_quota_us},
    {"cg_cpu_period_us", "us", true, &ProcessSample::cg_cpu_period_us},
    {"cg_psi_memory_some_us", "us", true, &ProcessSample::cg_psi_memory_some_us},
    {"cg_psi_memory_full_us", "us", true, &ProcessSample::cg_psi_memory_full_us},
    {"cg_psi_io_some_us", "us", true, &ProcessSample::cg_psi_io_some_us},
    {"cg_psi_io_full_us", "us", true, &ProcessSample::cg_psi_io_full_us},
    {"cg_psi_cpu_some_us", "us", true, &ProcessSample::cg_psi_cpu_some_us},
};
// process_samples columns each writer sets itself: instance_id (each file's own
// process_instances row, from key), ts_us and scheduled_ts_us (kvdrive moves them into its time
// base), remote_ts_us (kvdrive only: kvmon's ts_us). On the link: pid, start_ticks, ts_us,
// scheduled_ts_us, before the fields.
inline constexpr const char* kProcessOwnColumns[] = {"instance_id", "ts_us", "scheduled_ts_us",
                                                     "remote_ts_us"};
inline constexpr SampleTable<ProcessSample> kProcessTable = {"process_samples", "proc",
                                                             kProcessFields};

inline constexpr SampleField<HostSample> kHostFields[] = {
    {"load1", "", true, &HostSample::load1},
    {"load5", "", true, &HostSample::load5},
    {"load15", "", true, &HostSample::load15},
    {"mem_total_kib", "KiB", true, &HostSample::mem_total_kib},
    {"mem_available_kib", "KiB", true, &HostSample::mem_available_kib},
    {"swap_total_kib", "KiB", true, &HostSample::swap_total_kib},
    {"swap_free_kib", "KiB", true, &HostSample::swap_free_kib},
    {"pswpin", "pages", true, &HostSample::pswpin},
    {"pswpout", "pages", true, &HostSample::pswpout},
    {"pgmajfault", "", true, &HostSample::pgmajfault},
    {"cpu_user_ticks", "ticks", true, &HostSample::cpu_user_ticks},
    {"cpu_system_ticks", "ticks", true, &HostSample::cpu_system_ticks},
    {"cpu_iowait_ticks", "ticks", true, &HostSample::cpu_iowait_ticks},
    {"cpu_steal_ticks", "ticks", true, &HostSample::cpu_steal_ticks},
    {"cpu_idle_ticks", "ticks", true, &HostSample::cpu_idle_ticks},
    {"psi_memory_some_avg10", "%", true, &HostSample::psi_memory_some_avg10},
    {"psi_memory_full_avg10", "%", true, &HostSample::psi_memory_full_avg10},
    {"psi_io_some_avg10", "%", true, &HostSample::psi_io_some_avg10},
    {"psi_io_full_avg10", "%", true, &HostSample::psi_io_full_avg10},
    {"psi_cpu_some_avg10", "%", true, &HostSample::psi_cpu_some_avg10},
    {"psi_memory_some_us", "us", true, &HostSample::psi_memory_some_us},
    {"psi_memory_full_us", "us", true, &HostSample::psi_memory_full_us},
    {"psi_io_some_us", "us", true, &HostSample::psi_io_some_us},
    {"psi_io_full_us", "us", true, &HostSample::psi_io_full_us},
    {"psi_cpu_some_us", "us", true, &HostSample::psi_cpu_some_us},
};
// host_samples columns each writer sets itself: session_id (each file's own monitor_sessions
// row), ts_us, scheduled_ts_us and remote_ts_us as for process samples. On the link: ts_us,
// scheduled_ts_us, before the fields.
inline constexpr const char* kHostOwnColumns[] = {"session_id", "ts_us", "scheduled_ts_us",
                                                  "remote_ts_us"};
inline constexpr SampleTable<HostSample> kHostTable = {"host_samples", "host", kHostFields};

// The counters are always read (a disk line without them is skipped), but a link line without
// one gives NULL.
inline constexpr SampleField<DiskStat> kDiskFields[] = {
    {"device", "", false, &DiskStat::device},
    {"reads", "", true, &DiskStat::reads},
    {"writes", "", true, &DiskStat::writes},
    {"sectors_read", "512-byte sectors", true, &DiskStat::sectors_read},
    {"sectors_written", "512-byte sectors", true, &DiskStat::sectors_written},
    {"io_ms", "ms", true, &DiskStat::io_ms},
};
// disk_samples columns each writer sets itself: session_id, ts_us (the host sample's) and
// remote_ts_us. On the link: ts_us, before the fields.
inline constexpr const char* kDiskOwnColumns[] = {"session_id", "ts_us", "remote_ts_us"};
inline constexpr SampleTable<DiskStat> kDiskTable = {"disk_samples", "disk", kDiskFields};

// "INSERT OR REPLACE INTO <table> (<own...>, <fields...>) VALUES (?, ...)": the writer binds
// its own columns at 1..own.size() and bind_fields() the rest after them.
template <typename S>
std::string insert_sql(const SampleTable<S>& t, std::initializer_list<const char*> own);

// Binds each field of `s` from index `first` on (empty optionals as NULL); returns the next index.
template <typename S>
int bind_fields(Statement& st, int first, const SampleTable<S>& t, const S& s);
// The same from a received link line: a field that is absent or not a number of its kind
// binds NULL (a text field binds "").
template <typename S>
int bind_fields(Statement& st, int first, const SampleTable<S>& t, const proto::Message& m);
// Appends each known field of `s` to the link line `m` (empty optionals are left out).
template <typename S>
void add_fields(proto::Message& m, const SampleTable<S>& t, const S& s);

}  // namespace kv
