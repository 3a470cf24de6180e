// Cache traces in the open format of the Twitter production cache traces (Yang et al., OSDI
// '20): one request per line, `timestamp,anonymized key,key size,value size,client id,operation,
// TTL`, timestamps in whole seconds, operation one of get, gets, set, add, replace, cas, append,
// prepend, delete, incr, decr. Read streamed, plain or zstd-compressed (never loaded whole), and
// written by a generator from a workload description, for tests and users without a trace.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>

#include "kvbench/op_type.hpp"

namespace kv::drive {

enum class TraceOp : uint8_t {
  get,
  gets,
  set,
  add,
  replace,
  cas,
  append,
  prepend,
  del,  // "delete"
  incr,
  decr,
};

// The operation's name in the trace ("delete" for del).
std::string_view trace_op_name(TraceOp op);
// True for get and gets: the operations that read (and can miss).
bool trace_op_reads(TraceOp op);

struct TraceRecord {
  int64_t ts_s = 0;      // whole seconds, from the trace's start
  std::string_view key;  // anonymized; valid until the reader's next line
  uint32_t key_size = 0, value_size = 0;
  uint32_t client_id = 0;
  TraceOp op = TraceOp::get;
  int64_t ttl_s = 0;  // 0: no expiry
};

// One line into `out`; nullopt when it parses, else what is wrong with it. The key is taken as
// everything between the first comma and the fifth from the end, so a key holding a comma parses.
std::optional<std::string> parse_trace_line(std::string_view line, TraceRecord& out);

// A trace file that cannot be read, or a line of it that does not parse: "FILE:LINE: why".
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads a trace file line by line, decompressing a zstd file (by its magic number) as it goes.
class TraceReader {
 public:
  explicit TraceReader(const std::string& path);  // throws TraceError
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;
  ~TraceReader();

  // The next request, or nullopt at the end. Blank lines are skipped. Throws TraceError.
  std::optional<TraceRecord> next();
  uint64_t line() const { return line_; }  // the number of the line last read
  bool compressed() const;

 private:
  struct Source;
  bool fill();  // more bytes into buf_; false at the end
  std::unique_ptr<Source> src_;
  std::string path_, buf_, line_buf_;
  size_t pos_ = 0;
  uint64_t line_ = 0;
};

// A synthetic trace: `requests` requests over `keys` keys, a fraction of them writes (set) and
// of deletes, the rest gets; popularity zipf with exponent `zipf` (0: uniform); each key a fixed
// value size drawn from [value_min, value_max] (log-uniform: a long tail); `rate` requests a
// second; the same seed, the same trace.
struct TraceSpec {
  uint64_t requests = 100'000, keys = 10'000;
  double zipf = 1.0;
  double write_fraction = 0.1, delete_fraction = 0.0;
  uint32_t value_min = 100, value_max = 100;
  uint32_t rate = 10'000;
  int64_t ttl_s = 0;
  uint64_t seed = 1;
  // A look-aside cache's client: a get of a key that is not there (never set, or deleted since)
  // is followed by a set of it, as production traces hold them (one of the `requests`).
  bool cache_aside = false;
};

// How a replay (run --trace) sends a record. Operations: gets as get, cas as set (the trace has
// no cas unique), and on Redis prepend as APPEND (`redis`); the rest as themselves. Keys: a
// record's key becomes a number (trace_key_id, below 2^62) written "<prefix><number>", zero-padded
// to the recorded key size; a key that some incr or decr acts on is a counter key
// ("<prefix>~n:<number>") for every request, its writes holding "0". Values: the recorded size,
// at most kTraceMaxValue (memcached's default item limit is 1 MiB with the key).
inline constexpr uint32_t kTraceMaxValue = 1'000'000;
OpType replay_op(TraceOp op, bool redis);
uint64_t trace_key_id(std::string_view key);

// --trace-keys-scale F: below 1, a record is replayed when its key is one of that share of the
// keys (its requests with it, so each key's sequence is whole); an integer F above 1 makes each
// key F keys, record `ordinal` (its place in the file, from 0) going to one of them. Returns the
// key id to replay, or nullopt when the record is left out.
std::optional<uint64_t> scaled_key(uint64_t key_id, uint64_t ordinal, double scale);

// What a replay will send, read once before it starts (every line checked).
struct TraceScan {
  uint64_t records = 0;   // lines, blank ones aside
  uint64_t requests = 0;  // after --trace-keys-scale
  int64_t first_ts = 0, last_ts = 0;
  uint32_t largest_ttl = 0;
  std::array<bool, kOpTypes> ops{};       // the ops it sends (replay_op on memcached)
  std::unordered_set<uint64_t> counters;  // the key ids some incr or decr acts on
};
// Throws TraceError ("FILE:LINE: why") for a file that cannot be read or a line that does not
// parse.
TraceScan scan_trace(const std::string& path, double keys_scale);

// Writes the trace of `spec` to `out`, a line per request. std::invalid_argument for no keys, a
// rate of 0, or a value range that is empty or starts at 0.
void write_trace(const TraceSpec& spec, std::ostream& out);

}  // namespace kv::drive
