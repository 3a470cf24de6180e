// What kvmon's /metrics endpoint says (monitor/README.md "Prometheus"): the latest tick's
// samples of each target instance and of the host, restarts per target, and kvmon's own cost,
// in the Prometheus text format 0.0.4 or OpenMetrics 1.0. Values that are unknown (NULL in the
// results file) are left out, never written as 0. Pure: no sockets, no clock (tests feed it
// batches). Not thread-safe: the io_context thread updates and renders.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "records.hpp"

namespace kv::mon {

// kvmon's own use of the machine, read at scrape time.
struct SelfUsage {
  OptReal cpu_seconds;  // user + system
  OptInt rss_bytes;
  OptReal start_time_seconds;  // since the epoch
};
// Reads /proc/self/stat (`boot_ts_us`: the host's boot time, for the start time); fields that
// cannot be read stay empty.
SelfUsage read_self_usage(int64_t ticks_per_s, std::optional<int64_t> boot_ts_us);

class MetricsRegistry {
 public:
  // selectors: Selector::text() of each target (their restart counters start at 0);
  // ticks_per_s: sysconf(_SC_CLK_TCK); page_bytes: sysconf(_SC_PAGESIZE) (pswpin/out are pages).
  MetricsRegistry(std::vector<std::string> selectors, int64_t ticks_per_s, int64_t page_bytes);

  // Takes the tick's samples: process samples replace the last tick's (an instance not sampled
  // this tick is gone from the page), a host sample replaces the last one, restart events count.
  void update(const Batch& batch);
  // The whole page. OpenMetrics: counters' TYPE lines name the family without `_total`, and the
  // page ends with `# EOF`.
  std::string render(bool openmetrics, const SelfUsage& self) const;

 private:
  struct Instance {
    std::string selector;
    std::string name;
    OptInt started_ts_us;
  };
  // The labels of the last tick's process i (see render): target, name, place, pid, instance.
  struct ProcessLabels {
    std::string target, name, process, pid, instance;
  };
  std::vector<ProcessLabels> process_labels() const;
  std::vector<std::string> selectors_;
  int64_t ticks_per_s_;
  int64_t page_bytes_;
  std::map<ProcessKey, Instance> instances_;
  std::vector<ProcessSample> processes_;  // the last tick's
  std::optional<HostSample> host_;
  std::map<std::string, int64_t> restarts_;  // per selector
  int64_t ticks_ = 0;
  int64_t last_scheduled_ts_us_ = 0;
};

}  // namespace kv::mon
