// `kvdrive report --group LABEL`: a run group (the --segment runs of several client hosts,
// brought into one file by `kvdrive merge`, or the runs of `--processes N`) as the whole and each
// host's share side by side: the group's requests per phase and op, its latency from the added
// histograms (group_latency.hpp), then one row per run with its host, segment, when it started
// and ended against the others, its share of the requests and the flags that say a host did not
// carry its share: started late, lagged, client-bound.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "report/percentiles.hpp"

namespace kv::drive {

// One run of the group.
struct GroupMember {
  int64_t run_id = 0;
  std::string host;     // runs.client_host
  std::string segment;  // "I/N" (run_metadata segment, else process_index + 1 / process_count)
  std::string status;
  std::optional<int64_t> start_offset_us;  // its first phase's start after the group's earliest
  std::optional<int64_t> end_offset_us;    // its last phase's end after the group's earliest end
  std::optional<int64_t> busy_us;          // first phase start to last phase end
  int64_t requests = 0;                    // completed, warm-up left out
  int64_t failed = 0;
  double share = 0;  // of the group's requests
  int64_t threads = 0;
  int64_t client_bound_seconds = 0;  // its client_bound events
  std::optional<double> p99_us;      // its own (the group's is in group_latency)
  std::vector<std::string> flags;    // "started 2.1 s late", "lagged: ...", "client-bound ..."
};

// A run starting (or, beyond its late start, ending) this much after the group's earliest one is
// flagged: hosts started together by --start-at are within the clocks' error of each other.
inline constexpr int64_t kGroupLateUs = 1'000'000;

// The runs of `group` in segment order; empty when no run has that label.
std::vector<GroupMember> group_members(Database& db, const std::string& group);

// The whole text report of `group`: throws UsageError when no run of the file has that label.
void print_group_report(Database& db, const std::string& group, const PercentileList& list,
                        std::ostream& out);

}  // namespace kv::drive
