// What kvdrive sends: the workload's parameters, the keys and the values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kv::drive {

enum class PhaseKind { load, read };
const char* phase_kind_name(PhaseKind k);

struct WorkloadSpec {
  uint64_t keys = 100'000;          // keys 0 .. keys-1
  std::string key_prefix = "kv:";
  uint64_t value_size = 100;        // bytes
  int threads = 4;                  // one connection each
  uint32_t ttl_s = 0;               // 0: no expiry
  std::vector<PhaseKind> phases = {PhaseKind::load, PhaseKind::read};
  // The parameters as a JSON object, as stored in runs.parameters.
  std::string to_json() const;
};

// Formats "<prefix><index>" into an internal buffer: no allocation per key.
class KeyFormatter {
 public:
  explicit KeyFormatter(std::string_view prefix);
  // Valid until the next call.
  std::string_view format(uint64_t index);

 private:
  std::string buf_;
  size_t prefix_len_;
};

// Incompressible value bytes: a random table generated once; a key's value is a slice of it
// starting at a key-derived offset, so values differ between keys and can be re-derived.
class ValueTable {
 public:
  ValueTable(uint64_t max_value_size, uint64_t seed);
  std::string_view value_for(uint64_t key_index, uint64_t size) const;

 private:
  std::string bytes_;
  uint64_t max_value_size_;
};

}  // namespace kv::drive
