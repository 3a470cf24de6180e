#include "workload/workload.hpp"

#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>

#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"

namespace kv::drive {
namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    auto pos = text.find(sep);
    parts.push_back(text.substr(0, pos));
    if (pos == std::string_view::npos) return parts;
    text = text.substr(pos + 1);
  }
}

uint64_t mix64(uint64_t x) {  // splitmix64 finalizer: a key's stable pseudo-random number
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Salts that keep a key's size and TTL independent of its value's size (all mix64 of the key).
constexpr uint64_t kKeySizeSalt = 0x6b65792d73697a65ull;
constexpr uint64_t kTtlSalt = 0x74746c2d6b657973ull;

constexpr uint64_t kMaxValueSize = 64ull << 20;

// What a size list is of: its name in errors, its forms, and its sizes' bounds.
struct SizeKind {
  const char* name;  // "value size"
  const char* forms;
  uint64_t max;
  const char* bounds;
};
constexpr SizeKind kValueSize{"value size", "100, 100-1000 or 1K:60,10K:40", kMaxValueSize,
                              "from 1 byte to 64 MiB"};
constexpr SizeKind kKeySize{"key size", "40, 10-100 or 16:60,40:30,100:10", kMaxKeySize,
                            "from 1 to 250 bytes (memcached's limit)"};

uint64_t checked_size(std::string_view text, std::string_view whole, const SizeKind& kind) {
  uint64_t v = 0;
  try {
    v = parse_size(text);
  } catch (const UsageError&) {
    throw UsageError("invalid " + std::string(kind.name) + " '" + std::string(whole) +
                     "': expected " + kind.forms);
  }
  if (v == 0 || v > kind.max)
    throw UsageError("invalid " + std::string(kind.name) + " '" + std::string(whole) +
                     "': each size must be " + kind.bounds);
  return v;
}

ValueSizes parse_sizes(std::string_view text, const SizeKind& kind) {
  ValueSizes v;
  if (text.find(':') != std::string_view::npos) {
    uint64_t total = 0;
    for (auto item : split(text, ',')) {
      auto colon = item.find(':');
      if (colon == std::string_view::npos)
        throw UsageError("invalid " + std::string(kind.name) + " '" + std::string(text) +
                         "': every item of a weighted list is SIZE:WEIGHT");
      uint64_t size = checked_size(item.substr(0, colon), text, kind);
      uint32_t weight = 0;
      auto w = item.substr(colon + 1);
      auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), weight);
      if (ec != std::errc() || ptr != w.data() + w.size() || weight == 0 || weight > 1'000'000)
        throw UsageError("invalid " + std::string(kind.name) + " '" + std::string(text) +
                         "': weight '" + std::string(w) +
                         "' must be a whole number from 1 to 1000000");
      v.weighted.push_back({size, weight});
      total += weight;
    }
    v.total_weight = total;
    v.min = v.max = v.weighted.front().size;
    for (const auto& w : v.weighted) {
      v.min = std::min(v.min, w.size);
      v.max = std::max(v.max, w.size);
    }
    return v;
  }
  auto dash = text.find('-');
  if (dash != std::string_view::npos && dash > 0) {
    v.min = checked_size(text.substr(0, dash), text, kind);
    v.max = checked_size(text.substr(dash + 1), text, kind);
    if (v.min > v.max)
      throw UsageError("invalid " + std::string(kind.name) + " '" + std::string(text) +
                       "': the range's low end is above its high end");
    return v;
  }
  v.min = v.max = checked_size(text, text, kind);
  return v;
}

}  // namespace

const char* phase_kind_name(PhaseKind k) {
  switch (k) {
    case PhaseKind::load:
      return "load";
    case PhaseKind::read:
      return "read";
    case PhaseKind::mixed:
      return "mixed";
    case PhaseKind::trace:
      return "trace";
  }
  return "?";
}

std::vector<PhaseKind> parse_phases(std::string_view text) {
  std::vector<PhaseKind> out;
  for (auto p : split(text, ',')) {
    if (p == "load")
      out.push_back(PhaseKind::load);
    else if (p == "read")
      out.push_back(PhaseKind::read);
    else if (p == "mixed")
      out.push_back(PhaseKind::mixed);
    else
      throw UsageError("invalid phase '" + std::string(p) + "' in '" + std::string(text) +
                       "': expected load, read or mixed, comma-separated");
  }
  return out;
}

KeyPattern parse_key_pattern(std::string_view text) {
  KeyPattern p;
  auto bad = [&] {
    return UsageError("invalid key pattern '" + std::string(text) +
                      "': expected sequential, uniform, gaussian, zipf[:EXPONENT] or "
                      "hotset:KEYS:REQUESTS (fractions, e.g. hotset:0.01:0.9)");
  };
  // memtier_benchmark's SET:GET letters: kvdrive picks the keys of sets and gets alike.
  if (text.size() == 3 && text[1] == ':' && std::isupper(static_cast<unsigned char>(text[0]))) {
    const std::string why = "invalid key pattern '" + std::string(text) + "': ";
    if (text[0] == 'P' || text[2] == 'P')
      throw UsageError(why +
                       "P (each connection its own keys, in order) is kvdrive's load phase: "
                       "--phases load sets every key once, in order");
    if (text[0] != text[2])
      throw UsageError(why +
                       "kvdrive picks the keys of sets and gets alike: one letter twice "
                       "(R:R, S:S, G:G, Z:Z) or sequential, uniform, gaussian, zipf");
    if (text[0] == 'R') return parse_key_pattern("uniform");
    if (text[0] == 'S') return parse_key_pattern("sequential");
    if (text[0] == 'G') return parse_key_pattern("gaussian");
    if (text[0] == 'Z') return parse_key_pattern("zipf");
    throw UsageError(why + "memtier's letters are R, S, G, Z and P");
  }
  if (text == "sequential")
    p.kind = KeyPattern::Kind::sequential;
  else if (text == "uniform" || text == "random")
    p.kind = KeyPattern::Kind::uniform;
  else if (text == "gaussian")
    p.kind = KeyPattern::Kind::gaussian;
  else if (text.substr(0, 4) == "zipf") {
    p.kind = KeyPattern::Kind::zipf;
    if (text.size() > 4) {
      if (text[4] != ':') throw bad();
      auto num = text.substr(5);
      auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), p.zipf_exponent);
      if (ec != std::errc() || ptr != num.data() + num.size() || !(p.zipf_exponent > 0) ||
          p.zipf_exponent > 10)
        throw UsageError("invalid key pattern '" + std::string(text) +
                         "': the zipf exponent must be a number above 0 and at most 10");
    }
  } else if (text.substr(0, 7) == "hotset:") {
    p.kind = KeyPattern::Kind::hotset;
    const std::string_view rest = text.substr(7);
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos) throw bad();
    const auto number = [&](std::string_view num, double& out) {
      auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), out);
      return !num.empty() && ec == std::errc() && ptr == num.data() + num.size();
    };
    if (!number(rest.substr(0, colon), p.hot_fraction) ||
        !number(rest.substr(colon + 1), p.hot_share) || !(p.hot_fraction > 0) ||
        !(p.hot_fraction < 1) || !(p.hot_share >= 0) || !(p.hot_share <= 1))
      throw UsageError("invalid key pattern '" + std::string(text) +
                       "': hotset:KEYS:REQUESTS takes a share of the keys above 0 and below 1 "
                       "and a share of the requests from 0 to 1");
  } else {
    throw bad();
  }
  return p;
}

std::string key_pattern_name(const KeyPattern& p) {
  switch (p.kind) {
    case KeyPattern::Kind::sequential:
      return "sequential";
    case KeyPattern::Kind::uniform:
      return "uniform";
    case KeyPattern::Kind::gaussian:
      return "gaussian";
    case KeyPattern::Kind::zipf:
      return "zipf:" + std::to_string(p.zipf_exponent).substr(0, 4);
    case KeyPattern::Kind::hotset: {
      std::ostringstream s;
      s << "hotset:" << p.hot_fraction << ':' << p.hot_share;
      return s.str();
    }
  }
  return "?";
}

ValueSizes parse_value_sizes(std::string_view text) { return parse_sizes(text, kValueSize); }

ValueSizes parse_key_sizes(std::string_view text) { return parse_sizes(text, kKeySize); }

uint64_t ValueSizes::size_for(uint64_t key_index) const {
  if (!weighted.empty()) {
    uint64_t pick = mix64(key_index) % total_weight;
    for (const auto& w : weighted) {
      if (pick < w.weight) return w.size;
      pick -= w.weight;
    }
    return weighted.back().size;
  }
  if (min == max) return min;
  return min + mix64(key_index) % (max - min + 1);
}

uint64_t ValueSizes::largest() const { return max; }

std::string ValueSizes::describe() const {
  if (!weighted.empty()) {
    std::string out;
    for (const auto& w : weighted) {
      if (!out.empty()) out += ',';
      out += std::to_string(w.size);
      out += ':';
      out += std::to_string(w.weight);
    }
    return out;
  }
  if (min == max) return std::to_string(min);
  return std::to_string(min) + "-" + std::to_string(max);
}

std::string WorkloadSpec::to_json() const {
  // ordered_json: the fields in the order people read them (and earlier files hold them).
  nlohmann::ordered_json j;
  j["keys"] = keys;
  j["key_prefix"] = key_prefix;
  j["value_size"] = values.describe();
  j["threads"] = threads;
  j["connections"] = connections;
  j["pipeline"] = pipeline;
  j["ttl_s"] = ttl.largest();
  if (!ttl.weighted.empty()) j["ttl"] = ttl.describe();
  if (key_sizes.max > 0) j["key_size"] = key_sizes.describe();
  auto& kinds = j["phases"] = nlohmann::ordered_json::array();
  for (PhaseKind k : phases) kinds.push_back(phase_kind_name(k));
  j["key_pattern"] = key_pattern_name(pattern);
  j["requests"] = requests;
  j["duration_us"] = duration_us;
  j["ratio"] = std::to_string(ratio_sets) + ":" + std::to_string(ratio_gets);
  if (!mix.empty()) j["mix"] = mix_text(mix);
  if (!commands.empty()) {
    auto& cs = j["commands"] = nlohmann::ordered_json::array();
    for (const CommandTemplate& c : commands) {
      nlohmann::ordered_json one;
      one["op"] = c.name;
      one["command"] = c.text;
      one["ratio"] = c.weight;
      if (c.pattern_given) one["key_pattern"] = key_pattern_name(c.pattern);
      cs.push_back(std::move(one));
    }
  }
  j["hit_rate"] = hit_rate;
  if (multi_key_get > 0) j["multi_key_get"] = multi_key_get;
  if (const std::string p = mix_patterns_text(mix_patterns); !p.empty()) j["mix_key_pattern"] = p;
  if (const std::string v = mix_values_text(mix_values); !v.empty()) j["mix_value_size"] = v;
  if (cache_aside) j["cache_aside"] = true;
  if (trace.on()) {
    j["trace"] = trace.path;
    j["trace_timing"] = trace.fast ? "fast" : "recorded";
    if (!trace.fast) j["speed"] = trace.speed;
    if (trace.keys_scale != 1) j["trace_keys_scale"] = trace.keys_scale;
  }
  j["verify"] = verify;
  j["rate"] = rate;
  if (rate > 0) j["spin_budget"] = spin_budget;
  if (pace_granularity_us > 0) j["pace_granularity_us"] = pace_granularity_us;
  j["wire_start"] = wire_start_kernel ? "kernel" : "call";
  j["io"] = io_mode_name(io);
  j["warmup_us"] = warmup_us;
  j["seed"] = seed;
  if (worker_total > 0) {  // --segment: threads is this segment's share of these
    j["segment_threads_total"] = worker_total;
    j["segment_worker_first"] = worker_first;
  }
  // The key prefix was checked to be UTF-8 at parse time; replace, never throw, regardless.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

const char* io_mode_name(IoMode m) noexcept {
  switch (m) {
    case IoMode::epoll:
      return "epoll";
    case IoMode::uring:
      return "uring";
    case IoMode::automatic:
      break;
  }
  return "auto";
}

uint32_t Ttls::ttl_for(uint64_t key_index) const noexcept {
  if (weighted.empty()) return single_s;
  uint64_t pick = mix64(key_index ^ kTtlSalt) % total_weight;
  for (const Weighted& w : weighted) {
    if (pick < w.weight) return w.ttl_s;
    pick -= w.weight;
  }
  return weighted.back().ttl_s;
}

uint32_t Ttls::largest() const noexcept {
  uint32_t m = single_s;
  for (const Weighted& w : weighted) m = std::max(m, w.ttl_s);
  return m;
}

bool Ttls::some_never() const noexcept {
  if (weighted.empty()) return single_s == 0;
  for (const Weighted& w : weighted)
    if (w.ttl_s == 0) return true;
  return false;
}

std::string Ttls::describe() const {
  if (weighted.empty()) return std::to_string(single_s);
  std::string out;
  for (const Weighted& w : weighted) {
    if (!out.empty()) out += ',';
    out += std::to_string(w.ttl_s) + ":" + std::to_string(w.weight);
  }
  return out;
}

std::vector<MixEntry> WorkloadSpec::op_mix() const {
  std::vector<MixEntry> ops = mix;
  if (ops.empty() && (ratio_given || commands.empty()))
    ops = {{OpType::set, ratio_sets}, {OpType::get, ratio_gets}};
  for (MixEntry& e : ops)
    if (e.op == OpType::get) e.op = get_op();
  for (size_t i = 0; i < commands.size(); ++i) ops.push_back({command_op(i), commands[i].weight});
  return ops;
}

bool WorkloadSpec::phase_sends(PhaseKind kind, OpType op) const {
  if (op == OpType::backfill) return cache_aside && phase_sends(kind, OpType::get);
  switch (kind) {
    case PhaseKind::load:
      return op == OpType::set;
    case PhaseKind::read:
      return op == get_op();
    case PhaseKind::mixed:
      for (const MixEntry& e : op_mix())
        if (e.op == op && e.weight > 0) return true;
      return false;
    case PhaseKind::trace:  // its prepends go to Redis as APPEND (replay_op)
      return trace.ops[static_cast<size_t>(op)] ||
             (op == OpType::append && trace.ops[static_cast<size_t>(OpType::prepend)]);
  }
  return false;
}

bool WorkloadSpec::has_mixed_phase() const {
  for (PhaseKind k : phases)
    if (k == PhaseKind::mixed) return true;
  return false;
}

bool WorkloadSpec::uses_counters() const {
  return has_mixed_phase() && (phase_sends(PhaseKind::mixed, OpType::incr) ||
                               phase_sends(PhaseKind::mixed, OpType::decr));
}

std::vector<MixEntry> parse_mix(std::string_view text) {
  auto bad = [&](std::string_view part, const std::string& why) {
    throw UsageError("'" + std::string(text) + "': '" + std::string(part) + "' " + why);
  };
  std::vector<MixEntry> mix;
  uint64_t total = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view part = text.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t colon = part.find(':');
    if (colon == std::string_view::npos) bad(part, "is not OP:WEIGHT (such as get:60)");
    std::optional<OpType> op = parse_op_name(part.substr(0, colon));
    if (op == OpType::backfill || op == OpType::mget) op.reset();  // --cache-aside's, or gets'
    if (!op)
      bad(part.substr(0, colon),
          "is not an operation (set, get, delete, incr, decr, add, replace, append, prepend, "
          "touch, gets, cas, mset)");
    uint32_t weight = 0;
    std::string_view w = part.substr(colon + 1);
    auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), weight);
    if (w.empty() || ec != std::errc() || p != w.data() + w.size() || weight > 1'000'000)
      bad(part, "needs a whole weight from 0 to 1000000");
    for (const MixEntry& e : mix)
      if (e.op == *op) bad(part, "names an operation twice");
    mix.push_back({*op, weight});
    total += weight;
  }
  if (total == 0) throw UsageError("'" + std::string(text) + "': no weight above 0");
  return mix;
}

std::string mix_text(const std::vector<MixEntry>& mix) {
  std::string out;
  for (const MixEntry& e : mix) {
    if (!out.empty()) out += ',';
    out += op_name(e.op);
    out += ':';
    out += std::to_string(e.weight);
  }
  return out;
}

KeyFormatter::KeyFormatter(std::string_view prefix) : buf_(prefix), prefix_len_(prefix.size()) {
  // Room for the longest key: a number with both markers, or a padded one (kMaxKeySize).
  buf_.resize(
      std::max<size_t>(prefix_len_ + kCounterMarker.size() + kMissMarker.size() + 24, kMaxKeySize));
}

KeyFormatter::KeyFormatter(std::string_view prefix, const ValueSizes& sizes)
    : KeyFormatter(prefix) {
  if (sizes.max == 0) return;
  sizes_ = &sizes;
  buf_.resize(std::max<size_t>(buf_.size(), static_cast<size_t>(sizes.max)));
}

std::string_view KeyFormatter::format(uint64_t index, size_t size) {
  char* begin = buf_.data() + prefix_len_;
  if (index & kCounterKey) {
    index &= ~kCounterKey;
    begin = std::copy(kCounterMarker.begin(), kCounterMarker.end(), begin);
  }
  if (index & kMissKey) {
    index &= ~kMissKey;
    begin = std::copy(kMissMarker.begin(), kMissMarker.end(), begin);
  }
  char digits[20];
  const auto n =
      static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, index).ptr - digits);
  if (sizes_ != nullptr || size > 0) {
    // Zeros between the marker and the number make it the key's size. The size is a function
    // of the index (size_for hashes it; the salt sets it apart from the value's), so a key is
    // always written the same way.
    const auto want = size > 0 ? size : static_cast<size_t>(sizes_->size_for(index ^ kKeySizeSalt));
    const auto have = static_cast<size_t>(begin - buf_.data()) + n;
    if (want > have) begin = std::fill_n(begin, want - have, '0');
  }
  char* end = std::copy(digits, digits + n, begin);
  return std::string_view(buf_.data(), static_cast<size_t>(end - buf_.data()));
}

ValueTable::ValueTable(uint64_t max_value_size, uint64_t seed) {
  // Table = largest value + 64 KiB of slack, so offsets vary even for the largest value.
  size_t n = static_cast<size_t>(max_value_size) + 65536;
  bytes_.resize(n);
  std::mt19937_64 rng(seed);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t r = rng();
    for (int b = 0; b < 8; ++b)
      bytes_[i + static_cast<size_t>(b)] = static_cast<char>(r >> (8 * b));
  }
  for (; i < n; ++i) bytes_[i] = static_cast<char>(rng());
}

std::string_view ValueTable::value_for(uint64_t key_index, uint64_t size) const {
  uint64_t room = bytes_.size() - size;  // size <= the largest value < bytes_.size()
  uint64_t offset = mix64(key_index) % (room + 1);
  return std::string_view(bytes_.data() + offset, static_cast<size_t>(size));
}

}  // namespace kv::drive
