// Redis 7's per-command latency histogram (`LATENCY HISTOGRAM`: for each command its calls and
// the cumulative count of calls per power-of-two bucket of microseconds, on by default) as store
// stat values, so it is polled each second with INFO and stored as store_stats rows; and the
// server's latency over a window from two such polls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/stat_sample.hpp"

struct redisReply;

namespace kv {
class Database;
}

namespace kv::drive {

// The stat name of one bucket: "latency_histogram_usec_<command>_<bucket>" holds how many calls
// of <command> (lower case, "latency|histogram" for subcommands) took at most about <bucket> µs
// (Redis rounds to its histogram's precision, ~1 %), since the server started or CONFIG
// RESETSTAT. Cumulative over buckets and over time.
inline constexpr const char* kLatencyHistogramPrefix = "latency_histogram_usec_";

// The reply of LATENCY HISTOGRAM (RESP2: [name, ["calls", N, "histogram_usec", [b, c, ...]],
// ...]) → one value per bucket of every command. Anything else (an error reply, a malformed
// element) gives what could be read; never throws on content.
std::vector<StatValue> parse_latency_histogram(const redisReply* reply);

// The store's own latency over a window, from the bucket values of two polls (before and
// after), summed over the commands a benchmark sends (the poller's own INFO and LATENCY, and
// admin commands, left out).
struct ServerLatency {
  double calls = 0;
  double p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0;  // bucket upper bounds
  double max_us = 0;                                       // the highest bucket with a call
  // The bucket holding the q-th quantile (0 < q <= 1) of the window's calls.
  double at(double q) const;
  std::vector<std::pair<double, double>> buckets;  // (upper bound µs, calls), ascending
};
// Values are (name, value) pairs as stored; nullopt when no bucket was polled in both or no
// call fell in the window.
// `command` (lower case, "get"): that command only; empty: every benchmark command.
std::optional<ServerLatency> server_latency_between(const std::vector<StatValue>& before,
                                                    const std::vector<StatValue>& after,
                                                    std::string_view command = {});

// The store's own latency as the results file holds it (Redis 7 LATENCY HISTOGRAM rows of
// store_stats, `command` as above) between its last polls at or before each end of the window
// (with no poll before the window, from its first poll in the window: never the calls from
// before it); nullopt without such rows or calls.
std::optional<ServerLatency> read_server_latency(Database& db, int64_t target_id,
                                                 int64_t from_ts_us, int64_t to_ts_us,
                                                 std::string_view command = {});

// The Redis command (lower case) an op of the results file ("delete") is sent as ("del"), whose
// histogram is the store's own latency of that op: add and replace are SET NX / XX, so theirs
// is every SET's; empty for an op Redis has no command for.
std::string_view redis_command_of(std::string_view op);

}  // namespace kv::drive
