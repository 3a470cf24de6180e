// libFuzzer target for the store statistics parsers (driver/store/store_stats.hpp): Redis INFO and
// memcached "stats" replies, which come from the network. Never a crash; every value kept is
// finite and has a non-empty name without whitespace (names become JSON keys and column
// labels); parsing is deterministic. docs/fuzzing.md.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "store/store_stats.hpp"

namespace {

void check(const std::vector<kv::drive::StatValue>& values, size_t input_size) {
  if (values.size() > input_size) std::abort();  // every value needs at least one byte
  for (const auto& v : values) {
    if (!std::isfinite(v.value) || v.name.empty()) std::abort();
    for (char c : v.name)
      if (c == ' ' || c == '\r' || c == '\n' || c == '\t' || c == '\0') std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto redis = kv::drive::parse_redis_info(text);
  check(redis, size);
  if (kv::drive::parse_redis_info(text).size() != redis.size()) std::abort();
  auto mc = kv::drive::parse_memcached_stats(text);
  check(mc, size);
  return 0;
}
