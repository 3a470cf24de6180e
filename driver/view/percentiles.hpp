// The latency percentiles every report shows (`--percentiles`, memtier's --print-percentiles):
// one list shared by the text, CSV, JSON and HTML reports, and the one computation of a phase's
// percentiles from its stored histogram (latency_buckets), bounded by its observed range.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

// Percentiles in (0, 100), ascending, no repeats. The maximum is always shown beside them.
struct PercentileList {
  std::vector<double> values;
};

// 50, 90, 99, 99.9 (and max beside them).
const PercentileList& default_percentiles();
// "50,90,99,99.9,99.99": each a number above 0 and below 100 (100 is the max, always shown),
// at most 3 decimals, at most 16 of them. Sorted, repeats dropped. Throws
// UsageError naming --percentiles and the value.
PercentileList parse_percentiles(const std::string& text);

// The field name of a percentile: "p" + its two integer digits + its decimals without the
// point: 50 → "p50", 99.9 → "p999", 99.99 → "p9999", 5 → "p05", 0.5 → "p005" (unambiguous,
// and p50/p90/p99/p999 are the names the results file's columns already use).
std::string percentile_name(double p);
// For people: 50 → "p50", 99.9 → "p99.9".
std::string percentile_label(double p);

// The percentiles of `list` from histogram rows (upper bound in µs, count), ascending by bound:
// the bound of the bucket holding rank ceil(q * total), within [lo, hi]; all nullopt when the
// rows count nothing.
using Buckets = std::vector<std::pair<double, int64_t>>;
std::vector<std::optional<double>> from_buckets(const Buckets& buckets, const PercentileList& list,
                                                double lo, double hi);

// What bounds a phase's percentiles per op: the smallest and largest latency recorded
// (latency_range) and the largest per-second maximum outside the warm-up, in the timing the
// phase summary uses. Unknown: 0 and infinity.
struct LatencyBounds {
  double min_us = 0, max_us = INFINITY;
};
using LatencyBoundsMap =
    std::map<std::pair<int64_t, std::string>, LatencyBounds>;  // (phase_id, op)
LatencyBoundsMap phase_latency_bounds(Database& db, int64_t run_id);

// A phase's latency percentiles per op, in µs, from its histogram rows (warm-up left out, the
// timing the phase summary uses: 'intended' in rate mode, else 'sent'): the upper bound of the
// bucket holding rank ceil(q * count) (as the phase_percentiles view), never above the largest
// latency observed (latency_range, and the per-second maxima) nor below the smallest. nullopt
// when the phase recorded no latency for that op.
using PhasePercentiles = std::map<std::pair<int64_t, std::string>,  // (phase_id, op)
                                  std::vector<std::optional<double>>>;
PhasePercentiles run_percentiles(Database& db, int64_t run_id, const PercentileList& list);

// Each second's latency percentiles per op, in µs, warm-up seconds too, in the phase summary's
// timing: from the second's histogram (second_latency_buckets, the rule above) and never above
// the second's max (driver_seconds.lat_max_us). A second written before that table existed (an
// older file: it has no bucket rows) has `from_histogram` false and the stored columns of
// driver_seconds instead (p50, p90, p99, p99.9; nullopt for any other percentile). Seconds in
// which nothing completed are not in the map.
struct SecondPercentiles {
  std::vector<std::optional<double>> values;  // one per list entry
  bool from_histogram = true;
};
using RunSecondPercentiles =
    std::map<std::tuple<int64_t, int64_t, std::string>, SecondPercentiles>;  // (phase, ts_us, op)
RunSecondPercentiles second_percentiles(Database& db, int64_t run_id, const PercentileList& list);

// The latency's parts of each phase (schema 015: queue, client_send, wire, client_recv), per
// (phase_id, op, part): the percentiles of `list` from latency_part_buckets within the part's
// [min, max] (latency_part_range), and its count, mean and max.
struct PartFigures {
  std::vector<std::optional<double>> values;  // one per list entry
  int64_t count = 0;
  double mean_us = 0, max_us = 0;
};
using PartPercentiles = std::map<std::tuple<int64_t, std::string, std::string>, PartFigures>;
PartPercentiles run_part_percentiles(Database& db, int64_t run_id, const PercentileList& list);
// Where the time went (latency_part_bins), per (phase_id, op): for each entry of `list`, then
// "max" and "mean", the requests of the bin holding that rank (all of them for the mean): how
// many, and their mean latency and mean parts, which add up to it.
// Beside them, where the store tells it (Redis 7's LATENCY HISTOGRAM of the op's command, polled
// each second), the store's own execution time at the same percentile (or its max) over the
// phase's measured window: a power-of-two bucket's upper bound, inside the wire part, not a part
// that adds up with the others.
struct TimeWent {
  std::string at;  // "p99", "max", "mean"
  int64_t count = 0;
  double latency_us = 0, queue_us = 0, client_send_us = 0, wire_us = 0, client_recv_us = 0;
  std::optional<double> store_us;
  double client_us() const { return client_send_us + client_recv_us; }
};
using RunTimeWent = std::map<std::pair<int64_t, std::string>, std::vector<TimeWent>>;
RunTimeWent run_time_went(Database& db, int64_t run_id, const PercentileList& list);

// The parts in the order reports show them (the order of a request's way).
inline constexpr const char* kLatencyParts[] = {"queue", "client_send", "wire", "client_recv"};

}  // namespace kv::drive
