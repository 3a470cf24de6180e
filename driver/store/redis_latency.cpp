#include "store/redis_latency.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <string_view>

#include "kvbench/sqlite.hpp"

namespace kv::drive {
namespace {

std::string_view text(const redisReply* r) {
  if (r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS))
    return {r->str, r->len};
  return {};
}

std::optional<double> number(const redisReply* r) {
  if (!r) return std::nullopt;
  if (r->type == REDIS_REPLY_INTEGER) return static_cast<double>(r->integer);
  std::string_view t = text(r);
  long long v = 0;
  if (t.empty() || std::from_chars(t.data(), t.data() + t.size(), v).ec != std::errc()) return {};
  return static_cast<double>(v);
}

// Commands that are not the benchmark's: the poller's own, and administration.
bool benchmark_command(std::string_view cmd) {
  for (std::string_view admin : {"info", "latency", "config", "client", "cluster", "command",
                                 "hello", "auth", "select", "ping", "debug", "slowlog"})
    if (cmd == admin ||
        (cmd.starts_with(admin) && cmd.size() > admin.size() && cmd[admin.size()] == '|'))
      return false;
  return true;
}

// "latency_histogram_usec_get_16" → ("get", 16).
bool split_name(std::string_view name, std::string_view* cmd, double* bucket) {
  std::string_view prefix = kLatencyHistogramPrefix;
  if (!name.starts_with(prefix)) return false;
  name.remove_prefix(prefix.size());
  const auto sep = name.rfind('_');
  if (sep == std::string_view::npos || sep == 0) return false;
  long long b = 0;
  std::string_view num = name.substr(sep + 1);
  if (std::from_chars(num.data(), num.data() + num.size(), b).ec != std::errc() || b <= 0)
    return false;
  *cmd = name.substr(0, sep);
  *bucket = static_cast<double>(b);
  return true;
}

}  // namespace

std::vector<StatValue> parse_latency_histogram(const redisReply* reply) {
  std::vector<StatValue> out;
  if (!reply || reply->type != REDIS_REPLY_ARRAY) return out;
  for (size_t i = 0; i + 1 < reply->elements; i += 2) {
    std::string_view cmd = text(reply->element[i]);
    const redisReply* body = reply->element[i + 1];
    if (cmd.empty() || !body || body->type != REDIS_REPLY_ARRAY) continue;
    for (size_t k = 0; k + 1 < body->elements; k += 2) {
      if (text(body->element[k]) != "histogram_usec") continue;
      const redisReply* h = body->element[k + 1];
      if (!h || h->type != REDIS_REPLY_ARRAY) continue;
      for (size_t b = 0; b + 1 < h->elements; b += 2) {
        auto bucket = number(h->element[b]), count = number(h->element[b + 1]);
        if (!bucket || !count) continue;
        out.push_back({std::string(kLatencyHistogramPrefix) + std::string(cmd) + "_" +
                           std::to_string(static_cast<long long>(*bucket)),
                       *count});
      }
    }
  }
  return out;
}

std::optional<ServerLatency> server_latency_between(const std::vector<StatValue>& before,
                                                    const std::vector<StatValue>& after,
                                                    std::string_view command) {
  // Per command, its cumulative counts by bucket at each poll.
  using Buckets = std::map<double, double>;
  auto collect = [command](const std::vector<StatValue>& values) {
    std::map<std::string, Buckets, std::less<>> by_cmd;
    for (const auto& v : values) {
      std::string_view cmd;
      double bucket = 0;
      if (split_name(v.name, &cmd, &bucket) &&
          (command.empty() ? benchmark_command(cmd) : cmd == command))
        by_cmd[std::string(cmd)][bucket] = v.value;
    }
    return by_cmd;
  };
  const auto b = collect(before), a = collect(after);
  // Calls of the window per bucket (not cumulative), summed over the commands. A command absent
  // before had no calls yet; a bucket absent before had none.
  Buckets window;
  for (const auto& [cmd, buckets] : a) {
    const auto it = b.find(cmd);
    double prev_cum_after = 0, prev_cum_before = 0;
    for (const auto& [bucket, cum] : buckets) {
      double cum_before = prev_cum_before;
      if (it != b.end()) {
        // The before-poll's cumulative count at this bucket: its highest bucket at or below it.
        auto ub = it->second.upper_bound(bucket);
        cum_before = ub == it->second.begin() ? 0 : std::prev(ub)->second;
      }
      const double n = (cum - prev_cum_after) - (cum_before - prev_cum_before);
      if (n > 0) window[bucket] += n;
      prev_cum_after = cum;
      prev_cum_before = cum_before;
    }
  }
  ServerLatency s;
  for (const auto& [bucket, n] : window) {
    s.calls += n;
    s.buckets.emplace_back(bucket, n);
  }
  if (s.calls <= 0) return std::nullopt;
  s.p50_us = s.at(0.5);
  s.p90_us = s.at(0.9);
  s.p99_us = s.at(0.99);
  s.p999_us = s.at(0.999);
  s.max_us = s.buckets.back().first;
  return s;
}

double ServerLatency::at(double q) const {
  double cum = 0;
  for (const auto& [bucket, n] : buckets) {
    cum += n;
    if (cum >= q * calls) return bucket;
  }
  return buckets.empty() ? 0 : buckets.back().first;
}

std::optional<ServerLatency> read_server_latency(Database& db, int64_t target_id,
                                                 int64_t from_ts_us, int64_t to_ts_us,
                                                 std::string_view command) {
  // The store's histogram at its last poll at or before `ts_us` (`at_or_after`: its first at or
  // after it and before the window's end).
  auto poll = [&](int64_t ts_us, bool at_or_after) {
    std::vector<StatValue> values;
    auto q = db.prepare(std::string("SELECT name, value FROM store_stats WHERE target_id = ?1 AND "
                                    "ts_us = (SELECT ") +
                        (at_or_after ? "MIN(ts_us)" : "MAX(ts_us)") +
                        " FROM store_stats WHERE target_id = ?1 AND " +
                        (at_or_after ? "ts_us >= ?2 AND ts_us <= ?3" : "ts_us <= ?2") +
                        " AND name GLOB 'latency_histogram_usec_*') AND name GLOB "
                        "'latency_histogram_usec_*'");
    q.bind(1, target_id).bind(2, ts_us);
    if (at_or_after) q.bind(3, to_ts_us);
    while (q.step()) values.push_back({q.column_text(0), q.column_double(1)});
    return values;
  };
  const auto after = poll(to_ts_us, false);
  if (after.empty()) return std::nullopt;
  // No poll before the window (the first polls came late): its counts would hold every call
  // since the server started. The window then starts at its first poll instead.
  auto before = poll(from_ts_us, false);
  if (before.empty()) before = poll(from_ts_us, true);
  if (before.empty()) return std::nullopt;
  return server_latency_between(before, after, command);
}

std::string_view redis_command_of(std::string_view op) {
  if (op == "delete") return "del";
  if (op == "touch") return "expire";
  if (op == "add" || op == "replace" || op == "backfill") return "set";
  if (op == "prepend") return {};
  return op;
}

}  // namespace kv::drive
