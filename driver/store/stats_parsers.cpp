// Redis INFO and memcached "stats" replies → numeric fields: pure functions, no sockets.
#include "store/stats_parsers.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "kvbench/text_fields.hpp"

namespace kv::drive {
namespace {

std::string_view trim(std::string_view s) { return trim_blanks(s); }

// Calls fn(line) for each line of text, trimmed (a reply's lines end in "\r\n").
template <typename Fn>
void for_each_trimmed_line(std::string_view text, Fn fn) {
  for_each_line(text, [&](std::string_view line) { fn(trim(line)); });
}

// Printable ASCII without spaces: what a counter name can be. Keeps garbage out of the results.
bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > 200) return false;
  for (char c : s)
    if (c <= ' ' || c > '~') return false;
  return true;
}

// Hex identifiers: all digits now and then, but never a quantity.
bool is_redis_identifier(std::string_view name) {
  constexpr std::array<std::string_view, 5> kIds = {"run_id", "master_replid", "master_replid2",
                                                    "redis_git_sha1", "redis_build_id"};
  for (auto id : kIds)
    if (name == id) return true;
  return false;
}

// "k=v,k=v,..." → name_k for each numeric v.
void parse_redis_list(std::string_view name, std::string_view list, std::vector<StatValue>& out) {
  while (!list.empty()) {
    auto comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    auto eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = trim(item.substr(0, eq));
    auto v = parse_stat_number(item.substr(eq + 1));
    if (v && valid_name(key)) out.push_back({std::string(name) + "_" + std::string(key), *v});
  }
}

// memcached before 1.4 wrote rusage as "seconds:micros".
std::optional<double> parse_rusage(std::string_view s) {
  auto colon = s.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto sec = parse_stat_number(s.substr(0, colon));
  auto us = parse_stat_number(s.substr(colon + 1));
  if (!sec || !us) return std::nullopt;
  return *sec + *us / 1e6;
}

}  // namespace

std::optional<double> parse_stat_number(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::vector<StatValue> parse_redis_info(std::string_view text) {
  std::vector<StatValue> out;
  for_each_trimmed_line(text, [&](std::string_view line) {
    if (line.empty() || line.front() == '#') return;
    auto colon = line.find(':');
    if (colon == std::string_view::npos) return;
    std::string_view name = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    if (!valid_name(name) || is_redis_identifier(name)) return;
    if (auto v = parse_stat_number(value)) {
      out.push_back({std::string(name), *v});
    } else if (value.find('=') != std::string_view::npos) {
      parse_redis_list(name, value, out);
    }
  });
  return out;
}

std::vector<StatValue> redis_latency_values(std::optional<double> threshold_ms,
                                            const std::vector<RedisLatencyEvent>& events) {
  std::vector<StatValue> out;
  if (threshold_ms) out.push_back({"latency_monitor_threshold_ms", *threshold_ms});
  for (const RedisLatencyEvent& e : events) {
    if (!valid_name(e.event)) continue;
    out.push_back({"latency_" + e.event + "_ts", e.ts_s});
    out.push_back({"latency_" + e.event + "_latest_ms", e.latest_ms});
    out.push_back({"latency_" + e.event + "_max_ms", e.max_ms});
  }
  return out;
}

std::vector<StatValue> parse_memcached_stats(std::string_view text) {
  std::vector<StatValue> out;
  for_each_trimmed_line(text, [&](std::string_view line) {
    if (!line.starts_with("STAT ")) return;
    std::string_view rest = trim(line.substr(5));
    auto sp = rest.find_first_of(" \t");
    if (sp == std::string_view::npos) return;
    std::string_view name = rest.substr(0, sp);
    std::string_view value = rest.substr(sp + 1);
    if (!valid_name(name)) return;
    auto v = parse_stat_number(value);
    if (!v && name.starts_with("rusage_")) v = parse_rusage(trim(value));
    if (v) out.push_back({std::string(name), *v});
  });
  return out;
}

}  // namespace kv::drive
