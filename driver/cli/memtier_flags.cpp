#include "cli/memtier_flags.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>

#include "kvbench/cli_validators.hpp"
#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"

namespace kv::drive {
namespace {

using Overrides = std::vector<std::pair<std::string, std::string>>;

const std::string* given(const Overrides& o, const std::string& name) {
  for (const auto& [k, v] : o)
    if (k == name) return &v;
  return nullptr;
}

void set(Overrides& o, const std::string& name, const std::string& value) {
  for (auto& [k, v] : o)
    if (k == name) {
      v = value;
      return;
    }
  o.emplace_back(name, value);
}

// memtier's defaults (memtier_benchmark --help).
constexpr uint64_t kMemtierKeyMaximum = 10'000'000;
constexpr uint64_t kMemtierRequests = 10'000;  // per connection
const char* const kMemtierConnections = "50";
const char* const kMemtierThreads = "4";

}  // namespace

void MemtierFlags::add_to(CLI::App& run) {
  const char* g = "memtier_benchmark's flags (docs/memtier.md)";
  run.add_option("-s,--server", server_, "Server host of one more target [default: localhost]")
      ->type_name("HOST")
      ->group(g)
      ->check(cli::non_empty());
  run.add_option("-p,--port", port_, "Its port [default: 6379, memcached 11211]")
      ->type_name("PORT")
      ->group(g);
  run.add_option("-P,--protocol", protocol_,
                 "Its protocol: redis, resp2, memcache_text or memcache_binary [default: redis]")
      ->type_name("PROTOCOL")
      ->group(g);
  run.add_option("-a,--authenticate", authenticate_,
                 "Its Redis password, or USER:PASSWORD (hidden in the results file)")
      ->type_name("PASSWORD")
      ->group(g)
      ->check(cli::non_empty());
  run.add_option("--select-db", select_db_, "Its Redis database (the URI's /N)")
      ->type_name("N")
      ->group(g);
  run.add_flag("--cluster-mode", cluster_mode_, "It is a Redis Cluster (redis+cluster://)")
      ->group(g);
  run.add_option("-S,--unix-socket", unix_socket_)->group("");  // refused: TCP only
  run.add_option("-n", requests_,
                 "Requests per connection, memtier's -n (x --threads x --connections) "
                 "[default with -s/-p/-P: 10000]")
      ->type_name("N")
      ->group(g);
  run.add_option("--key-minimum", key_minimum_, "Lowest key number (keys: max - min + 1)")
      ->type_name("N")
      ->group(g);
  run.add_option("--key-maximum", key_maximum_,
                 "Highest key number [default with -s/-p/-P: 10000000]")
      ->type_name("N")
      ->group(g);
  run.add_option("--data-size-range", data_size_range_, "Value sizes MIN-MAX (--value-size)")
      ->type_name("MIN-MAX")
      ->group(g);
  run.add_option("--data-size-list", data_size_list_,
                 "Weighted value sizes SIZE:WEIGHT,... (--value-size)")
      ->type_name("LIST")
      ->group(g);
  run.add_option("--rate-limiting", rate_limiting_,
                 "Requests/s per connection (--rate: x --threads x --connections)")
      ->type_name("REQ/S")
      ->group(g);
  run.add_option("--print-percentiles", print_percentiles_, "As --percentiles")
      ->type_name("LIST")
      ->group(g);
  run.add_option("--json-out-file", json_out_file_, "As --json-out")->type_name("FILE")->group(g);
  run.add_flag("--hide-histogram", hide_histogram_, "Accepted: kvdrive prints no histogram")
      ->group(g);
  run.add_flag("--distinct-client-seed", distinct_client_seed_,
               "Accepted: every kvdrive connection has its own key stream")
      ->group(g);
  run.add_flag("--randomize", randomize_, "A --seed from the clock")->group(g);
  run.add_flag("-R,--random-data", random_data_, "Accepted: kvdrive's values are random bytes")
      ->group(g);
  run.add_option("-x,--run-count", run_count_)->group("");     // refused, with the reason
  run.add_option("--expiry-range", expiry_range_)->group("");  // refused, with the reason
}

namespace {
const char* const kExpiryRangeRefused =
    "--expiry-range: kvdrive gives each key one expiry: --ttl DURATION, or weighted per key "
    "(--ttl 10s:50,20s:50)";
}  // namespace

bool MemtierFlags::names_a_target() const {
  return !server_.empty() || !port_.empty() || !protocol_.empty() || !authenticate_.empty() ||
         !select_db_.empty() || cluster_mode_;
}

bool MemtierFlags::memtier_mode(bool phases_given, bool scenario_given) const {
  return names_a_target() && !phases_given && !scenario_given;
}

std::string MemtierFlags::target() const {
  if (!unix_socket_.empty())
    throw UsageError("--unix-socket: kvdrive connects over TCP: -s HOST -p PORT, or --target");
  std::string scheme = "redis", query;
  if (protocol_ == "memcache_text") {
    scheme = "memcached";
  } else if (protocol_ == "memcache_binary") {
    scheme = "memcached";
    query = "?protocol=binary";
  } else if (!protocol_.empty() && protocol_ != "redis" && protocol_ != "resp2") {
    throw UsageError("invalid --protocol '" + protocol_ +
                     "': expected redis, resp2, memcache_text or memcache_binary (kvdrive speaks "
                     "RESP2 to Redis)");
  }
  std::string userinfo;
  if (!authenticate_.empty()) {
    if (scheme != "redis") throw UsageError("--authenticate: memcached targets take no password");
    if (authenticate_.find_first_of("?/") != std::string::npos)
      throw UsageError("--authenticate: a password with '?' or '/' goes in a --target URI only");
    userinfo = authenticate_ + "@";
  }
  std::string path;
  if (!select_db_.empty()) {
    if (scheme != "redis") throw UsageError("--select-db: memcached has no databases");
    path = "/" + std::to_string(parse_whole_number("--select-db", select_db_, 0, 1'000'000));
  }
  if (cluster_mode_) {
    if (scheme != "redis") throw UsageError("--cluster-mode: a Redis Cluster speaks redis");
    if (!path.empty()) throw UsageError("--select-db: a Redis Cluster has database 0 only");
    scheme = "redis+cluster";
  }
  std::string host = server_.empty() ? "localhost" : server_;
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  if (!port_.empty()) parse_whole_number("--port", port_, 1, 65535);
  return scheme + "://" + userinfo + host + (port_.empty() ? "" : ":" + port_) + path + query;
}

void MemtierFlags::apply(bool mode, bool scenario_given, Overrides& o,
                         std::vector<std::string>& notes) const {
  if (!run_count_.empty())
    throw UsageError(
        "--run-count: kvdrive runs the workload once and merges no rounds: --repeat N runs it "
        "N times, each round kept as its own run");
  if (!expiry_range_.empty()) throw UsageError(kExpiryRangeRefused);
  if (!data_size_range_.empty() && !data_size_list_.empty())
    throw UsageError("--data-size-range and --data-size-list: give one");
  for (const std::string* sizes : {&data_size_range_, &data_size_list_}) {
    if (sizes->empty()) continue;
    if (given(o, "value-size"))
      throw UsageError("--data-size-range / --data-size-list and --value-size (-d): give one");
    set(o, "value-size", *sizes);  // the same forms: MIN-MAX, SIZE:WEIGHT,...
  }
  if (mode) {
    notes.emplace_back(
        "memtier_benchmark's command line (-s/-p/-P, no --phases): its defaults and meanings: "
        "one mixed phase, keys R:R, -n/--requests per connection");
    if (!given(o, "phases")) set(o, "phases", "mixed");
    if (!given(o, "key-pattern")) set(o, "key-pattern", "uniform");
    if (!given(o, "value-size")) set(o, "value-size", "32");
    if (!given(o, "connections")) set(o, "connections", kMemtierConnections);
    if (!given(o, "threads")) set(o, "threads", kMemtierThreads);
    if (!given(o, "key-prefix")) set(o, "key-prefix", "memtier-");
  }
  // Keys --key-minimum..--key-maximum, inclusive: kvdrive numbers them from 0.
  if (mode || !key_minimum_.empty() || !key_maximum_.empty()) {
    if (given(o, "keys") && (!key_minimum_.empty() || !key_maximum_.empty()))
      throw UsageError("--keys and --key-minimum/--key-maximum: give one");
    if (!given(o, "keys")) {
      const uint64_t lo = key_minimum_.empty() ? 0 : parse_count(key_minimum_);
      const uint64_t hi = key_maximum_.empty() ? kMemtierKeyMaximum : parse_count(key_maximum_);
      if (hi < lo) throw UsageError("--key-maximum must not be below --key-minimum");
      set(o, "keys", std::to_string(hi - lo + 1));
    }
  }
  // Per connection: -n, memtier's --requests, --rate-limiting.
  const auto per_connection = [&](const std::string& flag, const std::string& text) {
    if (scenario_given)
      throw UsageError(flag +
                       " counts per connection: not with --scenario (its steps have their "
                       "own --threads and --connections): use --requests or --rate");
    const std::string* t = given(o, "threads");
    const std::string* c = given(o, "connections");
    const uint64_t threads = parse_count(t ? *t : "4"), conns = parse_count(c ? *c : "1");
    const uint64_t n = parse_count(text);
    if (n == 0 || threads == 0 || conns == 0) throw UsageError(flag + " must be at least 1");
    return std::pair<uint64_t, std::string>(
        n * threads * conns, flag + " " + text + " per connection x " + std::to_string(threads) +
                                 " threads x " + std::to_string(conns) + " connections");
  };
  std::string n = requests_;
  if (mode && n.empty() && given(o, "requests")) {
    n = *given(o, "requests");  // memtier's --requests is -n
    o.erase(std::find_if(o.begin(), o.end(), [](const auto& p) { return p.first == "requests"; }));
  }
  if (n == "allkeys")
    throw UsageError("-n allkeys (each key once, in order) is kvdrive's load phase: --phases load");
  if (!n.empty() && given(o, "requests"))
    throw UsageError("-n (per connection) and --requests (per phase): give one");
  if (n.empty() && mode && !given(o, "duration")) n = std::to_string(kMemtierRequests);
  if (!n.empty()) {
    if (given(o, "duration"))
      throw UsageError("-n and --test-time (--duration): give one, as memtier takes one");
    const auto [total, how] = per_connection("-n", n);
    set(o, "requests", std::to_string(total));
    notes.push_back(how + " = " + std::to_string(total) + " requests");
  }
  if (!rate_limiting_.empty()) {
    if (given(o, "rate")) throw UsageError("--rate-limiting and --rate: give one");
    const auto [total, how] = per_connection("--rate-limiting", rate_limiting_);
    set(o, "rate", std::to_string(total));
    notes.push_back(how + " = --rate " + std::to_string(total));
  }
  if (randomize_ && !given(o, "seed"))
    set(o, "seed",
        std::to_string(std::chrono::system_clock::now().time_since_epoch().count() & 0xffffffff));
}

}  // namespace kv::drive
