#include "workload/workload_options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"

namespace kv::drive {
namespace {

const char* const kMaxKeysWhy =
    " (2^32: Redis's own limit per instance; a load phase of that many keys takes hours)";

[[noreturn]] void bad(std::string_view name, std::string_view value, const std::string& why) {
  throw UsageError("invalid --" + std::string(name) + " '" + std::string(value) + "': " + why);
}

// "1", "0.5", "1e+09": std::to_string prints doubles as "1000000000.000000".
template <typename T>
std::string number_text(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    std::ostringstream out;
    out << v;
    return out.str();
  } else {
    return std::to_string(v);
  }
}

template <typename T>
T parse_number(std::string_view name, std::string_view value, T lo, T hi) {
  T v{};
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || !(v >= lo) || !(v <= hi))
    bad(name, value, "expected a number from " + number_text(lo) + " to " + number_text(hi));
  return v;
}

// Keys go to memcached's text protocol as they are: no spaces or control characters, and room
// for the key number within its 250-byte limit.
std::string parse_key_prefix(std::string_view value) {
  constexpr size_t kMaxPrefix = 200;
  if (value.size() > kMaxPrefix)
    bad("key-prefix", value.substr(0, 20), "longer than " + std::to_string(kMaxPrefix) + " bytes");
  for (char c : value) {
    auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == 0x7f) bad("key-prefix", value, "no spaces or control characters");
  }
  return std::string(value);
}

bool parse_bool(std::string_view name, std::string_view value) {
  if (value == "true" || value == "1" || value == "yes" || value.empty()) return true;
  if (value == "false" || value == "0" || value == "no") return false;
  bad(name, value, "expected true or false");
}

// Runs a kvbench parser, re-throwing its error with the option's name in front.
template <typename F>
auto with_name(std::string_view name, std::string_view value, F parse) {
  try {
    return parse(value);
  } catch (const UsageError& e) {
    throw UsageError("--" + std::string(name) + ": " + e.what());
  }
}

// "10%" or "10": a share of one core, 0-100 %.
double parse_share(std::string_view name, std::string_view value) {
  std::string_view digits = value;
  if (!digits.empty() && digits.back() == '%') digits.remove_suffix(1);
  double v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size() || !(v >= 0) ||
      !(v <= 100))
    bad(name, value, "expected a share of one core from 0% to 100%, such as 10%");
  return v / 100;
}

void set_ratio(WorkloadSpec& w, std::string_view value) {
  auto whole = [](std::string_view text, uint32_t& v) {
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc() && p == text.data() + text.size() && v <= 1'000'000;
  };
  auto colon = value.find(':');
  if (colon == std::string_view::npos || !whole(value.substr(0, colon), w.ratio_sets) ||
      !whole(value.substr(colon + 1), w.ratio_gets))
    bad("ratio", value, "expected SETS:GETS, whole numbers up to 1000000, such as 1:10");
  if (w.ratio_sets + w.ratio_gets == 0) bad("ratio", value, "must not be 0:0");
  if (!w.mix.empty())
    bad("ratio", value, "and --mix both given (--ratio S:G is --mix set:S,get:G)");
  w.ratio_given = true;
}

uint32_t ttl_seconds_of(std::string_view value) {
  const int64_t us = with_name("ttl", value, parse_duration_us);
  if (us % 1'000'000 != 0) bad("ttl", value, "must be whole seconds");
  if (us / 1'000'000 > UINT32_MAX) bad("ttl", value, "is too long");
  return static_cast<uint32_t>(us / 1'000'000);
}

uint32_t ttl_seconds(std::string_view whole, std::string_view text) {
  int64_t us = 0;
  try {
    us = parse_duration_us(text);
  } catch (const UsageError&) {
    bad("ttl", whole, "'" + std::string(text) + "' is not a duration such as 60s or 1h");
  }
  if (us % 1'000'000 != 0) bad("ttl", whole, "must be whole seconds");
  if (us / 1'000'000 > UINT32_MAX) bad("ttl", whole, "is too long");
  return static_cast<uint32_t>(us / 1'000'000);
}

// "1h", or weighted "60s:40,300s:30,1h:30" (each key's TTL one of them, by weight).
Ttls parse_ttls(std::string_view value) {
  Ttls t;
  if (value.find(':') == std::string_view::npos) {
    t.single_s = ttl_seconds_of(value);
    return t;
  }
  size_t pos = 0;
  while (pos <= value.size()) {
    size_t comma = value.find(',', pos);
    if (comma == std::string_view::npos) comma = value.size();
    const std::string_view item = value.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t colon = item.find(':');
    uint32_t weight = 0;
    const std::string_view wt = colon == std::string_view::npos ? "" : item.substr(colon + 1);
    auto [p, ec] = std::from_chars(wt.data(), wt.data() + wt.size(), weight);
    if (colon == std::string_view::npos || wt.empty() || ec != std::errc() ||
        p != wt.data() + wt.size() || weight == 0 || weight > 1'000'000)
      bad("ttl", value, "every item of a weighted list is DURATION:WEIGHT, weights 1 to 1000000");
    t.weighted.push_back({ttl_seconds(value, item.substr(0, colon)), weight});
    t.total_weight += weight;
  }
  return t;
}

void set_trace_option(WorkloadSpec& w, std::string_view name, std::string_view value) {
  if (name == "trace") {
    if (value.empty()) bad(name, value, "names no file");
    w.trace.path = std::string(value);
    w.phases = {PhaseKind::trace};
  } else if (name == "trace-timing") {
    if (value != "recorded" && value != "fast") bad(name, value, "must be recorded or fast");
    w.trace.fast = value == "fast";
  } else if (name == "speed") {
    w.trace.speed = parse_number<double>(name, value, 1e-3, 1e6);
  } else {
    const double f = parse_number<double>(name, value, 1e-6, 1000);
    if (f > 1 && f != std::floor(f))
      bad(name, value, "above 1 must be a whole number (that many copies of each key)");
    w.trace.keys_scale = f;
  }
}

// The options a replay takes from the trace, or that shape what it does not send.
void check_trace_workload(const WorkloadSpec& w) {
  const TraceReplay none;
  if (!w.trace.on()) {
    if (w.trace.fast || w.trace.speed != none.speed || w.trace.keys_scale != none.keys_scale)
      throw UsageError("--trace-timing, --speed and --trace-keys-scale need --trace");
    return;
  }
  const auto refuse = [&](const std::string& option, const std::string& why) {
    throw UsageError(option + " with --trace: " + why);
  };
  if (w.phases_given) refuse("--phases", "a replay is one phase, its trace's requests");
  if (w.ratio_given || !w.mix.empty()) refuse("--ratio/--mix", "the trace's operations are sent");
  if (w.rate > 0) refuse("--rate", "the trace's timing paces a replay (--speed scales it)");
  if (w.cache_aside) refuse("--cache-aside", "a trace holds its own sets after misses");
  if (w.multi_key_get > 0) refuse("--multi-key-get", "each get of a trace is one key");
  for (size_t i = 0; i < kBuiltinOps; ++i)
    if (w.mix_patterns[i] || w.mix_values[i])
      refuse(w.mix_patterns[i] ? "--mix-key-pattern" : "--mix-value-size",
             "a trace's keys and value sizes are its own");
  if (w.verify) refuse("--verify", "a key's values differ in size from one set to the next");
  if (w.hit_rate != 1) refuse("--hit-rate", "the trace decides what misses");
  if (w.ttl.any()) refuse("--ttl", "each write has the trace's TTL");
  if (w.key_sizes.max > 0) refuse("--key-size", "each key has the trace's key size");
  if (w.trace.fast && w.trace.speed != none.speed)
    refuse("--speed", "it scales recorded timing, and --trace-timing is fast");
}

// Each op given a key pattern or value sizes of its own is one of the mix's, and values a get
// checks are the ones --value-size gives.
void check_mix_shapes(const WorkloadSpec& w) {
  const std::vector<MixEntry> mix = w.op_mix();
  for (size_t i = 0; i < kBuiltinOps; ++i) {
    if (!w.mix_patterns[i] && !w.mix_values[i]) continue;
    const auto op = static_cast<OpType>(i);
    const std::string option = w.mix_patterns[i] ? "--mix-key-pattern " : "--mix-value-size ";
    const bool in_mix = std::any_of(mix.begin(), mix.end(), [&](const MixEntry& e) {
      return e.weight > 0 && (e.op == op || (op == OpType::get && e.op == OpType::mget));
    });
    if (!in_mix || !w.has_mixed_phase())
      throw UsageError(option + op_name(op) + ": not an op of a mixed phase (--mix " +
                       mix_text(mix) + (w.has_mixed_phase() ? ")" : ", and no mixed phase)"));
    if (w.mix_values[i] && w.verify)
      throw UsageError("--verify with --mix-value-size " + std::string(op_name(op)) +
                       ": a get checks the value --value-size gives its key");
  }
}

// What an mget cannot be combined with.
void check_multi_key_get(const WorkloadSpec& w) {
  if (w.multi_key_get == 0) return;
  const auto refuse = [&](const std::string& option, const std::string& why) {
    throw UsageError("--multi-key-get with " + option + ": " + why);
  };
  if (w.verify) refuse("--verify", "an mget's reply is not checked key by key");
  if (w.cache_aside) refuse("--cache-aside", "an mget's misses are counted, not backfilled");
  if (w.key_prefix.find(' ') != std::string::npos)
    refuse("--key-prefix", "an mget's keys are separated by spaces; the prefix holds one");
}

// An mset carries --multi-key-get keys and, as Redis's MSET, no expiry.
void check_mset(const WorkloadSpec& w) {
  if (!w.has_mixed_phase() || !w.phase_sends(PhaseKind::mixed, OpType::mset)) return;
  if (w.multi_key_get == 0)
    throw UsageError("--mix mset: needs --multi-key-get N, the keys of each multi-key request");
  if (w.ttl.any()) throw UsageError("--mix mset with --ttl: Redis's MSET sets no expiry");
}

}  // namespace

const std::vector<WorkloadOption>& workload_options() {
  static const std::vector<WorkloadOption> all = {
      {"phases", "Phases in order: load (set every key once), read, mixed", "load,read", false},
      {"keys", "Number of keys (100k, 5M ...)", "100000", false},
      {"value-size", "Value size: fixed (100, 20KB), a range (100-1000) or weighted (1K:60,10K:40)",
       "100", false},
      {"key-pattern",
       "Keys of read/mixed phases: sequential, uniform, gaussian, zipf[:EXPONENT], "
       "hotset:KEYS:REQUESTS (e.g. hotset:0.01:0.9)",
       "sequential", false},
      {"requests", "Requests per read/mixed phase", "one per key", false},
      {"duration", "Length of each read/mixed phase (instead of --requests)", "none", false},
      {"ratio", "Mixed phases: sets:gets", "1:10", false},
      {"mix",
       "Mixed phases: operations and weights, such as get:60,set:20,delete:10,incr:10 (set, get, "
       "delete, incr, decr, add, replace, append, prepend, touch; memcached: gets, cas; Redis: "
       "mset)",
       "set and get at --ratio", false},
      {"mix-key-pattern",
       "Mixed phases: ops with a key pattern of their own, OP=PATTERN;... (delete=uniform;"
       "get=zipf:1.2)",
       "--key-pattern", false},
      {"mix-value-size",
       "Mixed phases: ops with value sizes of their own, OP=SIZES;... (append=16;set=1K:60,10K:40)",
       "--value-size", false},
      {"hit-rate", "Fraction of gets aimed at keys that exist (0-1)", "1", false},
      {"multi-key-get",
       "Each get of read/mixed phases asks for N keys in one request (op mget: memcached get "
       "k1 ... kN, Redis MGET)",
       "0: one key", false},
      {"verify", "Check every value read against what was written", "false", true},
      {"cache-aside",
       "A get that misses is followed on its connection by a set of its key (op backfill)", "false",
       true},
      {"rate", "Open loop: requests/s over all threads, latency from the intended send time",
       "none: closed loop", false},
      {"spin-budget",
       "Rate mode: CPU each thread may spin for send times, % of a core (0: sleep only)", "10%",
       false},
      {"pace-granularity",
       "Rate mode: send times rounded up to multiples of this (up to 1s), so a thread wakes "
       "once per step for all requests due in it; the wait is slip, the client's time",
       "0: each request at its own time", false},
      {"wire-start",
       "Where each request's wire part starts: call (the send call) or kernel (the kernel's "
       "transmit stamp; one more system call per send, plain TCP)",
       "call", false},
      {"io",
       "How plain-TCP bytes move: uring (io_uring: multishot receives, a loop pass's sends in "
       "one call), epoll (a send and a receive call per socket), or auto (uring where the "
       "kernel can, and not with --wire-start kernel). TLS stays on epoll",
       "auto", false},
      {"warmup", "Leading time of each phase left out of summaries", "0s", false},
      {"threads", "Worker threads", "4", false},
      {"connections", "Connections per thread", "1", false},
      {"pipeline", "Requests in flight per connection (memcached: one server only)", "1", false},
      {"key-prefix", "Prefix of every key", "kv:", false},
      {"ttl",
       "Expiry of the values written: one duration (0: none) or weighted per key "
       "(60s:40,300s:30,1h:30)",
       "none", false},
      {"key-size",
       "Key size in bytes, the number padded with zeros: fixed (40), a range (10-100) or "
       "weighted per key (16:60,40:30,100:10)",
       "as long as the key", false},
      {"seed", "Seed of the key and value generators", "1", false},
      {"trace",
       "Replay a cache trace (Twitter's format, plain or zstd): its requests, at its timing, "
       "each key on one connection",
       "none", false},
      {"trace-timing",
       "A replay's timing: recorded (open loop, latency from each request's recorded time) or "
       "fast (closed loop)",
       "recorded", false},
      {"speed", "A replay at recorded timing: the trace's time divided by this (2: twice as fast)",
       "1", false},
      {"trace-keys-scale",
       "A replay's working set: below 1, that share of its keys (and their requests); an "
       "integer above 1, that many copies of each key",
       "1", false},
  };
  return all;
}

void set_workload_option(WorkloadSpec& w, std::string_view name, std::string_view value) {
  if (name == "phases") {
    w.phases = with_name(name, value, parse_phases);
    w.phases_given = true;
  } else if (name == "keys") {
    w.keys = with_name(name, value, parse_count);
    if (w.keys == 0) bad(name, value, "must be at least 1");
    if (w.keys > kMaxKeys) bad(name, value, "more than " + std::to_string(kMaxKeys) + kMaxKeysWhy);
  } else if (name == "value-size")
    w.values = with_name(name, value, parse_value_sizes);
  else if (name == "key-pattern")
    w.pattern = with_name(name, value, parse_key_pattern);
  else if (name == "requests") {
    w.requests = with_name(name, value, parse_count);
    if (w.requests > kMaxRequests)
      bad(name, value, "more than " + std::to_string(kMaxRequests) + " (10^15)");
  } else if (name == "duration")
    w.duration_us = with_name(name, value, parse_duration_us);
  else if (name == "ratio")
    set_ratio(w, value);
  else if (name == "mix") {
    if (w.ratio_given)
      bad(name, value, "and --ratio both given (--ratio S:G is --mix set:S,get:G)");
    w.mix = with_name(name, value, parse_mix);
  } else if (name == "hit-rate")
    w.hit_rate = parse_number<double>(name, value, 0.0, 1.0);
  else if (name == "mix-key-pattern")
    w.mix_patterns = with_name(name, value, parse_mix_patterns);
  else if (name == "mix-value-size")
    w.mix_values = with_name(name, value, parse_mix_values);
  else if (name == "multi-key-get")
    w.multi_key_get = parse_number<uint32_t>(name, value, 0, kMaxMultiKeys);
  else if (name == "verify")
    w.verify = parse_bool(name, value);
  else if (name == "cache-aside")
    w.cache_aside = parse_bool(name, value);
  else if (name == "rate")
    w.rate = parse_number<double>(name, value, 0.0, 1e9);
  else if (name == "spin-budget")
    w.spin_budget = parse_share(name, value);
  else if (name == "pace-granularity") {
    w.pace_granularity_us = with_name(name, value, parse_duration_us);
    if (w.pace_granularity_us < 0 || w.pace_granularity_us > 1'000'000)
      bad(name, value, "must be from 0 to 1s");
  } else if (name == "wire-start") {
    if (value != "call" && value != "kernel") bad(name, value, "must be call or kernel");
    w.wire_start_kernel = value == "kernel";
  } else if (name == "io") {
    if (value != "auto" && value != "epoll" && value != "uring")
      bad(name, value, "must be auto, epoll or uring");
    w.io = value == "uring" ? IoMode::uring : value == "epoll" ? IoMode::epoll : IoMode::automatic;
  } else if (name == "warmup")
    w.warmup_us = with_name(name, value, parse_duration_us);
  else if (name == "threads")
    w.threads = parse_number<int>(name, value, 1, 1024);
  else if (name == "connections")
    w.connections = parse_number<int>(name, value, 1, kMaxEventConnections);
  else if (name == "pipeline")
    w.pipeline = parse_number<int>(name, value, 1, 4096);
  else if (name == "key-prefix")
    w.key_prefix = parse_key_prefix(value);
  else if (name == "seed")
    w.seed = parse_number<uint64_t>(name, value, 0, UINT64_MAX);
  else if (name == "ttl")
    w.ttl = parse_ttls(value);
  else if (name == "key-size")
    w.key_sizes = with_name(name, value, parse_key_sizes);
  else if (name == "trace" || name == "trace-timing" || name == "speed" ||
           name == "trace-keys-scale")
    set_trace_option(w, name, value);
  else {
    throw UsageError("unknown option '" + std::string(name) + "'");
  }
}

void check_workload(const WorkloadSpec& w, bool warmup_added) {
  if (w.keys == 0) throw UsageError("--keys must be at least 1");
  // Also here: --scale multiplies what each option allowed on its own.
  if (w.keys > kMaxKeys)
    throw UsageError("--keys " + std::to_string(w.keys) + " (after --scale) is more than " +
                     std::to_string(kMaxKeys) + kMaxKeysWhy);
  if (w.requests > kMaxRequests)
    throw UsageError("--requests " + std::to_string(w.requests) +
                     " (after --scale) is more than 10^15");
  if (w.duration_us > kMaxDurationUs)
    throw UsageError("--duration (after --scale) is longer than " +
                     format_duration_us(kMaxDurationUs));
  check_trace_workload(w);
  if (static_cast<uint64_t>(w.threads) > w.keys && !w.trace.on())
    throw UsageError("--threads (" + std::to_string(w.threads) + ") must not exceed --keys (" +
                     std::to_string(w.keys) + ")");
  for (const MixEntry& e : w.op_mix()) {
    if (e.weight == 0 || !w.has_mixed_phase()) continue;
    if (e.op == OpType::touch && w.ttl.some_never())
      throw UsageError(
          "--mix touch: needs a --ttl above 0 for every key (the expiry a touch sets; Redis's "
          "EXPIRE 0 would delete the key)");
    if (w.verify && (e.op == OpType::append || e.op == OpType::prepend))
      throw UsageError(std::string("--verify with --mix ") + op_name(e.op) +
                       ": the values it changes cannot be checked");
  }
  if (w.io == IoMode::uring && w.wire_start_kernel)
    throw UsageError(
        "--io uring with --wire-start kernel: transmit stamps are read on epoll only (--io "
        "epoll)");
  check_multi_key_get(w);
  check_mset(w);
  check_mix_shapes(w);
  if (w.key_sizes.max > 0) {
    const size_t natural = w.key_prefix.size() + std::to_string(w.keys - 1).size();
    if (w.key_sizes.min < natural)
      throw UsageError("--key-size " + w.key_sizes.describe() + ": the smallest is below " +
                       std::to_string(natural) + " bytes, the prefix '" + w.key_prefix +
                       "' and the largest key number");
  }
  if (!warmup_added && w.duration_us > 0 && w.warmup_us >= w.duration_us)
    throw UsageError("--warmup must be shorter than --duration");
}

void scale_workload(WorkloadSpec& w, double factor) {
  if (!(factor > 0) || factor > 1000) throw UsageError("--scale must be above 0 and at most 1000");
  auto scale = [&](uint64_t v, uint64_t floor) {
    if (v == 0) return v;
    return std::max<uint64_t>(floor,
                              static_cast<uint64_t>(std::llround(static_cast<double>(v) * factor)));
  };
  w.keys = scale(w.keys, static_cast<uint64_t>(w.threads));
  w.requests = scale(w.requests, 1);
  if (w.duration_us > 0)
    w.duration_us =
        std::max<int64_t>(1'000'000, std::llround(static_cast<double>(w.duration_us) * factor));
  if (w.warmup_us >= w.duration_us && w.duration_us > 0) w.warmup_us = 0;
}

}  // namespace kv::drive
