// The kvmon daemon loop: one thread, one io_context, a timer on absolute deadlines that samples
// the targets and the host each interval, and SIGINT/SIGTERM handling that ends the session.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "intervals.hpp"  // kMinIntervalUs, kMaxIntervalUs
#include "metrics_server.hpp"
#include "psi_trigger.hpp"
#include "samplers.hpp"
#include "server.hpp"
#include "targets.hpp"

namespace kv::mon {

struct MonitorConfig {
  std::string db_path;
  std::vector<Selector> selectors;
  int64_t interval_us = 1'000'000;
  // Ticks that may wait for the database before samples are dropped; 0: ten seconds' worth
  // (at least 16).
  int64_t max_queued = 0;
  // How often the host's files (load, memory, vmstat, stat, PSI, diskstats) are read; 0: the
  // interval, but at least 1 s. Rounded down to a whole number of intervals.
  int64_t host_interval_us = 0;
  // How often queued ticks are committed to the results file; 0: five intervals, but at least
  // 1 s and at most 5 s. Also the most a kill -9 of kvmon can lose (SIGINT/SIGTERM lose nothing).
  int64_t flush_interval_us = 0;
  PssPolicy pss;  // off unless --pss-interval
  // --psi-trigger: PSI triggers set on the host's pressure files (kvmon's one write); each
  // firing is a `psi_trigger` event. None by default: the pressure files are polled.
  std::vector<PsiTriggerSpec> psi_triggers;
  std::string command_line;  // stored in monitor_sessions
  ServerConfig server;       // --listen: off while server.address is empty
  MetricsConfig metrics;     // --metrics: off while metrics.address is empty
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
};

// Throws UsageError if the interval is outside [10 ms, 1 h], the host or flush
// interval is shorter than the interval or longer than 1 h, or the db path is empty.
void validate(const MonitorConfig& config);

// The host interval and the flush period `config` asks for, defaults resolved (the writer also
// keeps its period at least one interval and at most half of the queue).
int64_t effective_host_interval_us(const MonitorConfig& config);
int64_t effective_flush_interval_us(const MonitorConfig& config);

// Samples until SIGINT or SIGTERM, then marks the session completed. Returns the exit status
// (0). Throws if the results file cannot be opened. The database is written by a second thread:
// a busy or slow file never delays a sample; write failures are logged, never fatal.
int run_monitor(const MonitorConfig& config);

}  // namespace kv::mon
