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
#include "view/group.hpp"
#include "view/percentiles.hpp"

namespace kv::drive {

// The whole text report of `group`: throws UsageError when no run of the file has that label.
void print_group_report(Database& db, const std::string& group, const PercentileList& list,
                        std::ostream& out);

// The rows of each of `groups`, as a text table (nothing for none).
void print_group_latency(Database& db, const std::vector<std::string>& groups,
                         const PercentileList& list, std::ostream& out);

}  // namespace kv::drive
