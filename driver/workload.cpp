#include "workload.hpp"

#include <charconv>
#include <random>

namespace kv::drive {

const char* phase_kind_name(PhaseKind k) { return k == PhaseKind::load ? "load" : "read"; }

std::string WorkloadSpec::to_json() const {
  std::string phases_json;
  for (size_t i = 0; i < phases.size(); ++i)
    phases_json += std::string(i ? "," : "") + "\"" + phase_kind_name(phases[i]) + "\"";
  std::string prefix;
  for (char c : key_prefix) {
    if (c == '"' || c == '\\') prefix += '\\';
    prefix += c;
  }
  return "{\"keys\":" + std::to_string(keys) + ",\"key_prefix\":\"" + prefix +
         "\",\"value_size\":" + std::to_string(value_size) +
         ",\"threads\":" + std::to_string(threads) + ",\"ttl_s\":" + std::to_string(ttl_s) +
         ",\"phases\":[" + phases_json + "]}";
}

KeyFormatter::KeyFormatter(std::string_view prefix) : buf_(prefix), prefix_len_(prefix.size()) {
  buf_.resize(prefix_len_ + 24);
}

std::string_view KeyFormatter::format(uint64_t index) {
  char* begin = buf_.data() + prefix_len_;
  char* end = std::to_chars(begin, buf_.data() + buf_.size(), index).ptr;
  return std::string_view(buf_.data(), static_cast<size_t>(end - buf_.data()));
}

ValueTable::ValueTable(uint64_t max_value_size, uint64_t seed) : max_value_size_(max_value_size) {
  // Table = max value + 64 KiB of slack, so offsets vary even for the largest value.
  size_t n = static_cast<size_t>(max_value_size) + 65536;
  bytes_.resize(n);
  std::mt19937_64 rng(seed);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t r = rng();
    for (int b = 0; b < 8; ++b) bytes_[i + static_cast<size_t>(b)] = static_cast<char>(r >> (8 * b));
  }
  for (; i < n; ++i) bytes_[i] = static_cast<char>(rng());
}

std::string_view ValueTable::value_for(uint64_t key_index, uint64_t size) const {
  uint64_t room = bytes_.size() - size;  // size <= max_value_size_ < bytes_.size()
  uint64_t offset = (key_index * 0x9E3779B97F4A7C15ull) % (room + 1);
  return std::string_view(bytes_.data() + offset, static_cast<size_t>(size));
}

}  // namespace kv::drive
