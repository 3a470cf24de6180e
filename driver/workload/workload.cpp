#include "workload/workload.hpp"

#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>
#include <random>
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

constexpr uint64_t kMaxValueSize = 64ull << 20;

uint64_t checked_size(std::string_view text, std::string_view whole) {
  uint64_t v = 0;
  try {
    v = parse_size(text);
  } catch (const UsageError&) {
    throw UsageError("invalid value size '" + std::string(whole) +
                     "': expected 100, 100-1000 or 1K:60,10K:40");
  }
  if (v == 0 || v > kMaxValueSize)
    throw UsageError("invalid value size '" + std::string(whole) +
                     "': each size must be from 1 byte to 64 MiB");
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
                      "': expected sequential, uniform, gaussian or zipf[:EXPONENT]");
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
  }
  return "?";
}

ValueSizes parse_value_sizes(std::string_view text) {
  ValueSizes v;
  if (text.find(':') != std::string_view::npos) {
    uint64_t total = 0;
    for (auto item : split(text, ',')) {
      auto colon = item.find(':');
      if (colon == std::string_view::npos)
        throw UsageError("invalid value size '" + std::string(text) +
                         "': every item of a weighted list is SIZE:WEIGHT");
      uint64_t size = checked_size(item.substr(0, colon), text);
      uint32_t weight = 0;
      auto w = item.substr(colon + 1);
      auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), weight);
      if (ec != std::errc() || ptr != w.data() + w.size() || weight == 0 || weight > 1'000'000)
        throw UsageError("invalid value size '" + std::string(text) + "': weight '" +
                         std::string(w) + "' must be a whole number from 1 to 1000000");
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
    v.min = checked_size(text.substr(0, dash), text);
    v.max = checked_size(text.substr(dash + 1), text);
    if (v.min > v.max)
      throw UsageError("invalid value size '" + std::string(text) +
                       "': the range's low end is above its high end");
    return v;
  }
  v.min = v.max = checked_size(text, text);
  return v;
}

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
  j["ttl_s"] = ttl_s;
  auto& kinds = j["phases"] = nlohmann::ordered_json::array();
  for (PhaseKind k : phases) kinds.push_back(phase_kind_name(k));
  j["key_pattern"] = key_pattern_name(pattern);
  j["requests"] = requests;
  j["duration_us"] = duration_us;
  j["ratio"] = std::to_string(ratio_sets) + ":" + std::to_string(ratio_gets);
  j["hit_rate"] = hit_rate;
  j["verify"] = verify;
  j["rate"] = rate;
  if (rate > 0) j["spin_budget"] = spin_budget;
  j["wire_start"] = wire_start_kernel ? "kernel" : "call";
  j["warmup_us"] = warmup_us;
  j["seed"] = seed;
  if (worker_total > 0) {  // --segment: threads is this segment's share of these
    j["segment_threads_total"] = worker_total;
    j["segment_worker_first"] = worker_first;
  }
  // The key prefix was checked to be UTF-8 at parse time; replace, never throw, regardless.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

KeyFormatter::KeyFormatter(std::string_view prefix) : buf_(prefix), prefix_len_(prefix.size()) {
  buf_.resize(prefix_len_ + kMissMarker.size() + 24);
}

std::string_view KeyFormatter::format(uint64_t index) {
  char* begin = buf_.data() + prefix_len_;
  if (index & kMissKey) {
    index &= ~kMissKey;
    begin = std::copy(kMissMarker.begin(), kMissMarker.end(), begin);
  }
  char* end = std::to_chars(begin, buf_.data() + buf_.size(), index).ptr;
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
