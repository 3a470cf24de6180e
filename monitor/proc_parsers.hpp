// Pure parsers of /proc text: each takes a file's contents and returns plain structs. No I/O,
// so every parser is unit-tested against fixture text, including truncated and malformed files.
// A field that is absent or unparsable is std::nullopt (stored as NULL), never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvbench/result.hpp"
#include "kvbench/samples.hpp"      // OptInt, OptReal, DiskStat
#include "kvbench/text_fields.hpp"  // parse_int, which the parsers' callers use too

namespace kv::mon {

// /proc/PID/stat. comm may hold spaces and parentheses, so fields are counted from the last ')'.
struct PidStat {
  std::string comm;
  char state = '?';
  int64_t ppid = 0;
  int64_t minor_faults = 0;
  int64_t major_faults = 0;
  int64_t utime_ticks = 0;
  int64_t stime_ticks = 0;
  int64_t num_threads = 0;
  int64_t start_ticks = 0;  // field 22: clock ticks after boot; with the pid, the identity
  int64_t vsize_bytes = 0;
  int64_t rss_pages = 0;
};
// Error if the text is truncated or a needed field is not a number.
Result<PidStat> parse_pid_stat(std::string_view text);

// /proc/PID/status: the lines kvmon stores. Kernel threads have no Vm*/Rss* lines: nullopt.
struct PidStatus {
  std::string name;
  OptInt ppid;
  OptInt vm_rss_kib;
  OptInt rss_anon_kib;
  OptInt rss_file_kib;
  OptInt rss_shmem_kib;
  OptInt vm_swap_kib;
  OptInt vm_size_kib;
  OptInt threads;
  OptInt ctx_voluntary;
  OptInt ctx_involuntary;
};
PidStatus parse_pid_status(std::string_view text);

// /proc/PID/io: bytes that went to or came from storage.
struct PidIo {
  OptInt read_bytes;
  OptInt write_bytes;
};
PidIo parse_pid_io(std::string_view text);

struct LoadAvg {
  double load1 = 0;
  double load5 = 0;
  double load15 = 0;
};
Result<LoadAvg> parse_loadavg(std::string_view text);
// The last field of /proc/loadavg: the pid most recently handed out (to a process or a thread)
// in the reader's pid namespace; nullopt if malformed.
OptInt parse_loadavg_last_pid(std::string_view text);

struct MemInfo {
  OptInt mem_total_kib;
  OptInt mem_available_kib;
  OptInt swap_total_kib;
  OptInt swap_free_kib;
};
MemInfo parse_meminfo(std::string_view text);

struct VmStat {
  OptInt pswpin;
  OptInt pswpout;
  OptInt pgmajfault;
};
VmStat parse_vmstat(std::string_view text);

// /proc/stat: the aggregate "cpu" line (ticks, all CPUs) and btime (boot time, Unix seconds).
struct HostStat {
  OptInt cpu_user_ticks;  // user + nice
  OptInt cpu_system_ticks;
  OptInt cpu_idle_ticks;
  OptInt cpu_iowait_ticks;
  OptInt cpu_steal_ticks;
  OptInt boot_time_s;
};
HostStat parse_host_stat(std::string_view text);

// /proc/PID/smaps_rollup: the Pss line, KiB; nullopt if absent.
OptInt parse_smaps_rollup_pss(std::string_view text);

// /proc/uptime: seconds since boot, as microseconds (10 ms resolution). Error if malformed,
// negative, NaN or too large for int64 microseconds.
Result<int64_t> parse_uptime_us(std::string_view text);

// /proc/pressure/{memory,io,cpu} (and a cgroup's *.pressure): of the "some" and "full" lines,
// avg10 in percent and total, the stall time since boot (or the cgroup's creation) in µs.
struct Pressure {
  OptReal some_avg10;
  OptReal full_avg10;
  OptInt some_total_us;
  OptInt full_total_us;
};
Pressure parse_pressure(std::string_view text);

// /proc/diskstats: one DiskStat (kvbench/samples.hpp) per line.
// Malformed lines are skipped.
std::vector<DiskStat> parse_diskstats(std::string_view text);
// /sys/block/<dev>/stat: the same counters as a /proc/diskstats line without major, minor and
// name (11 fields on old kernels, 15 or 17 on newer ones). nullopt if fewer than 11 numbers.
// The device name is left empty.
std::optional<DiskStat> parse_block_stat(std::string_view text);

// A socket in /proc/net/tcp or tcp6.
struct TcpSocket {
  int local_port = 0;
  int state = 0;  // 0x0A = LISTEN
  int64_t inode = 0;
};
inline constexpr int kTcpListen = 0x0A;
// Malformed lines (and the header) are skipped.
std::vector<TcpSocket> parse_net_tcp(std::string_view text);

// Clock ticks (/proc/PID/stat utime, starttime) as microseconds; nullopt if ticks_per_s is not
// positive or the product overflows int64 (a parsed field can hold any int64).
OptInt ticks_to_us(int64_t ticks, int64_t ticks_per_s);

}  // namespace kv::mon
