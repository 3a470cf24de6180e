// Parsers for Redis INFO and memcached "stats" replies. Pure functions: any input (truncated,
// malformed, binary garbage) gives the numeric fields that could be read and skips the rest;
// they never throw on content.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/stat_sample.hpp"

namespace kv::drive {

// The whole of `s` (spaces, tabs, CR, LF around it aside) as a finite number; nullopt for "",
// "1.2M", "7.0.15", "nan", "ok". A counter's value in any of the replies below.
std::optional<double> parse_stat_number(std::string_view s);

// Redis INFO text (any sections, e.g. "INFO everything") → its numeric fields, in reply order.
// "name:value" lines with a finite numeric value are kept as is. Lines whose value is a list
// "k=v,k=v" (commandstats, keyspace, latencystats, replicas) give one field per numeric item,
// named "<name>_<k>": "cmdstat_set:calls=12,usec=34" → cmdstat_set_calls=12, cmdstat_set_usec=34;
// "db0:keys=5,expires=0" → db0_keys=5, db0_expires=0. Skipped: section headers, non-numeric
// values ("redis_version:7.0.15", "used_memory_human:1.2M", "used_memory_peak_perc:99%"),
// and hex identifiers that may happen to be all digits (run_id, master_replid, ...).
std::vector<StatValue> parse_redis_info(std::string_view text);

// Redis's latency monitor (LATENCY LATEST: per event, the unix time of its latest spike, that
// spike and the largest since the server started, in ms) → latency_<event>_ts,
// latency_<event>_latest_ms, latency_<event>_max_ms, after latency_monitor_threshold_ms (the
// server's latency-monitor-threshold; 0: the monitor is off and no event is ever recorded).
// The poller adds them to each Redis poll (not over TLS); a threshold unknown (CONFIG refused)
// has no value.
struct RedisLatencyEvent {
  std::string event;  // "fork", "aof-fsync-always", "command", "expire-cycle", ...
  double ts_s, latest_ms, max_ms;
};
std::vector<StatValue> redis_latency_values(std::optional<double> threshold_ms,
                                            const std::vector<RedisLatencyEvent>& events);

// memcached "stats" reply ("STAT name value\r\n" ... "END\r\n") → its numeric fields, in reply
// order. rusage_user / rusage_system ("seconds.micros") become seconds as a double. Lines that
// are not "STAT <name> <number>" (END, ERROR, "STAT version 1.6.18") are skipped.
std::vector<StatValue> parse_memcached_stats(std::string_view text);

}  // namespace kv::drive
