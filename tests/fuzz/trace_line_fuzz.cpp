// libFuzzer target for one line of a cache trace (driver/workload/trace.hpp parse_trace_line):
// a line from an untrusted file. It never crashes; a refused line says why; a parsed one has a
// non-empty key inside the line, no negative time or TTL, and written out again it parses to
// the same record. docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "workload/trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string line(reinterpret_cast<const char*>(data), size);
  kv::drive::TraceRecord r;
  if (auto why = kv::drive::parse_trace_line(line, r)) {
    if (why->empty()) std::abort();
    return 0;
  }
  if (r.key.empty() || r.key.data() < line.data() ||
      r.key.data() + r.key.size() > line.data() + line.size())
    std::abort();
  if (r.ts_s < 0 || r.ttl_s < 0) std::abort();
  const std::string again =
      std::to_string(r.ts_s) + "," + std::string(r.key) + "," + std::to_string(r.key_size) + "," +
      std::to_string(r.value_size) + "," + std::to_string(r.client_id) + "," +
      std::string(kv::drive::trace_op_name(r.op)) + "," + std::to_string(r.ttl_s);
  kv::drive::TraceRecord s;
  if (kv::drive::parse_trace_line(again, s)) std::abort();
  if (s.ts_s != r.ts_s || s.key != r.key || s.key_size != r.key_size ||
      s.value_size != r.value_size || s.client_id != r.client_id || s.op != r.op ||
      s.ttl_s != r.ttl_s)
    std::abort();
  return 0;
}
