// What kvdrive sends: the workload's parameters (phases, keys, value sizes, rates), how keys
// and values are chosen, and the parsers for their command-line forms.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "kvbench/op_type.hpp"

namespace kv::drive {

// load: every key set once, in order. read: gets. mixed: sets and gets at a ratio. trace: the
// requests of a trace file (--trace), the one phase of a replay.
enum class PhaseKind { load, read, mixed, trace };
const char* phase_kind_name(PhaseKind k);
// "load,read,mixed" → kinds. Throws UsageError naming the bad element.
std::vector<PhaseKind> parse_phases(std::string_view text);

// How read and mixed phases pick keys from 0..keys-1 (load always goes in order).
struct KeyPattern {
  enum class Kind { sequential, uniform, gaussian, zipf, hotset } kind = Kind::sequential;
  double zipf_exponent = 0.99;       // zipf only
  double gaussian_stddev = 1.0 / 6;  // gaussian only: as a fraction of the key count
  // hotset only: `hot_share` of the requests go to the first `hot_fraction` of the keys (uniform
  // within them), the rest to the others (uniform)
  double hot_fraction = 0.01, hot_share = 0.9;
};
// "sequential", "uniform", "gaussian", "zipf", "zipf:1.2", "hotset:0.01:0.9" (1 % of the keys
// take 90 % of the requests). Throws UsageError.
KeyPattern parse_key_pattern(std::string_view text);
std::string key_pattern_name(const KeyPattern& p);

// --command TEMPLATE (memtier_benchmark's spelling): a Redis command of the user's, sent with
// its placeholders filled in for each request: __key__ (the request's key) and __data__ (the
// key's value). Each command is an op of its own (kvbench/op_type.hpp command0..), named after
// its command word, with its share of a mixed phase (--command-ratio) and its own key pattern
// (--command-key-pattern). Parsed by workload/command_template.hpp.
struct CommandTemplate {
  // One argument: literal text with placeholders anywhere in it ("user:__key__").
  struct Part {
    enum class Kind : uint8_t { text, key, data } kind;
    std::string text;  // kind text only
  };
  using Arg = std::vector<Part>;

  std::string text;       // as given
  std::string name;       // its rows' op: the command word in lower case, made unique in the run
  std::vector<Arg> args;  // the command word first
  uint32_t weight = 1;    // --command-ratio
  KeyPattern pattern;     // --command-key-pattern, else the workload's --key-pattern
  bool pattern_given = false;
  bool uses_key = false;   // some argument holds __key__
  bool uses_data = false;  // some argument holds __data__
};

// Value sizes: fixed ("100"), a uniform range ("100-1000") or weighted sizes
// ("1K:60,10K:30,100K:10"). A key's size is a function of the key, so a get knows what a set
// of that key wrote (verification) and every set of a key writes the same bytes.
struct ValueSizes {
  struct Weighted {
    uint64_t size;
    uint32_t weight;
  };
  uint64_t min = 100;
  uint64_t max = 100;
  std::vector<Weighted> weighted;  // non-empty: weighted mode
  uint64_t total_weight = 0;       // sum of the weights
  uint64_t size_for(uint64_t key_index) const;
  uint64_t largest() const;
  std::string describe() const;
};
// Throws UsageError naming the input. Sizes from 1 byte to 64 MiB.
ValueSizes parse_value_sizes(std::string_view text);
// Key sizes (--key-size), in the same forms: 1 to 250 bytes (memcached's limit), each key's a
// function of the key as a value's size is.
inline constexpr uint64_t kMaxKeySize = 250;
ValueSizes parse_key_sizes(std::string_view text);

// Expiry of what is written (--ttl): one duration, or weighted ("60s:40,300s:30,1h:30"), each
// key's a function of the key (so every write of a key sets the same expiry).
struct Ttls {
  struct Weighted {
    uint32_t ttl_s;  // 0: no expiry
    uint32_t weight;
  };
  uint32_t single_s = 0;           // weighted empty: every key's (0: none)
  std::vector<Weighted> weighted;  // non-empty: weighted mode
  uint64_t total_weight = 0;
  uint32_t ttl_for(uint64_t key_index) const noexcept;
  uint32_t largest() const noexcept;
  bool any() const noexcept { return largest() > 0; }
  // Some key never expires (a touch of it would make it so: see check_workload).
  bool some_never() const noexcept;
  std::string describe() const;  // "3600", "60:40,300:30,3600:30" (seconds)
};

// One operation of a mixed phase's mix and its weight: of every sum-of-weights requests of the
// phase, `weight` are this op (by the request's place in the phase: the counts are exact).
struct MixEntry {
  OpType op;
  uint32_t weight;
  bool operator==(const MixEntry& o) const { return op == o.op && weight == o.weight; }
};
// "get:60,set:20,delete:10,incr:10" → its entries, in that order. Weights are whole numbers up
// to 1000000, each op at most once, not all 0. Throws UsageError naming the bad element.
std::vector<MixEntry> parse_mix(std::string_view text);
std::string mix_text(const std::vector<MixEntry>& mix);

// --mix-key-pattern "delete=uniform;get=zipf:1.2", --mix-value-size "append=16;set=1K:60,10K:40":
// ops of a mix (each once; backfill and mget never: a backfill's value is its get's key's, an
// mget's keys are its get's) with a key pattern or value sizes of their own (value sizes only
// for an op that sends a value). Throws UsageError naming the bad element.
std::array<std::optional<KeyPattern>, kBuiltinOps> parse_mix_patterns(std::string_view text);
std::array<std::optional<ValueSizes>, kBuiltinOps> parse_mix_values(std::string_view text);
// "delete=uniform;get=zipf:1.2" back (in op order); empty when none.
std::string mix_patterns_text(const std::array<std::optional<KeyPattern>, kBuiltinOps>& p);
std::string mix_values_text(const std::array<std::optional<ValueSizes>, kBuiltinOps>& v);

// --trace: a cache trace replayed (workload/trace.hpp has the format; engine/trace_feed.hpp how
// its requests are spread over the connections and timed).
struct TraceReplay {
  std::string path;       // empty: no replay
  double speed = 1;       // recorded timing: the trace's time divided by this
  bool fast = false;      // --trace-timing fast: closed loop, as fast as the window allows
  double keys_scale = 1;  // below 1: that share of the keys (and their requests); above, an
                          // integer: that many copies of each key, a request going to one
  // What a scan of the file found before the run (scan_trace): the requests it replays and the
  // ops it sends.
  uint64_t requests = 0;
  int64_t span_s = 0;  // from its first timestamp to its last, plus the last second
  std::array<bool, kOpTypes> ops{};
  uint32_t largest_ttl = 0;
  // The keys some incr or decr acts on: every request of such a key goes to its counter key,
  // whose writes hold "0" (a number, as an application's counter does).
  std::shared_ptr<const std::unordered_set<uint64_t>> counters;
  bool on() const { return !path.empty(); }
};

// --io: epoll (the ready list: a send and a receive call per socket) or uring (io_uring: one
// ring per thread, multishot receives, a loop pass's sends in one call); automatic: uring where
// the kernel can, epoll otherwise.
enum class IoMode : uint8_t { automatic, epoll, uring };
const char* io_mode_name(IoMode m) noexcept;

// --connections per thread: the event engine holds up to kMaxEventConnections (one fd each:
// ulimit -n must allow them).
inline constexpr int kMaxEventConnections = 100000;

struct WorkloadSpec {
  uint64_t keys = 100'000;  // keys 0 .. keys-1
  std::string key_prefix = "kv:";
  ValueSizes values;
  int threads = 4;
  int connections = 1;                // per thread
  int pipeline = 1;                   // requests in flight per connection
  Ttls ttl;                           // --ttl; none: no expiry
  ValueSizes key_sizes{0, 0, {}, 0};  // --key-size; max 0: each key as long as it is
  std::vector<PhaseKind> phases = {PhaseKind::load, PhaseKind::read};
  bool phases_given = false;  // --phases was given (a replay's one phase is trace)
  TraceReplay trace;          // --trace
  KeyPattern pattern;         // read and mixed phases
  uint64_t requests = 0;      // read / mixed: requests per phase; 0 = keys
  int64_t duration_us = 0;    // read / mixed: phase length; 0 = end by requests
  uint32_t ratio_sets = 1;    // mixed: sets : gets (--ratio; --mix set:S,get:G)
  uint32_t ratio_gets = 10;
  bool ratio_given = false;   // --ratio was given (it and --mix exclude each other)
  std::vector<MixEntry> mix;  // --mix; empty: set and get at --ratio
  // --command: op command0 + i is commands[i], in mixed phases at its --command-ratio beside
  // --mix or --ratio (set and get at the default ratio only when neither is given: memtier's
  // meaning, where --command replaces them)
  std::vector<CommandTemplate> commands;
  double hit_rate = 1.0;  // read / mixed: fraction of gets aimed at written keys
  // --mix-key-pattern, --mix-value-size: a mixed phase's op with a key pattern or value sizes of
  // its own (by built-in op; an mget's are its get's); else --key-pattern and --value-size
  std::array<std::optional<KeyPattern>, kBuiltinOps> mix_patterns;
  std::array<std::optional<ValueSizes>, kBuiltinOps> mix_values;
  // --multi-key-get N (memtier's spelling): every get of read and mixed phases is an mget of N
  // keys, each chosen as a get's (pattern, hit rate); 0: one key per get
  uint32_t multi_key_get = 0;
  // --cache-aside: a get that misses is followed, on its connection, by a set of its key (a
  // backfill, its own op), as a cache client fills its cache
  bool cache_aside = false;
  bool verify = false;        // compare every value read with what was written
  double rate = 0;            // requests/s over all threads; 0 = as fast as possible
  double spin_budget = 0.10;  // rate mode: spin for send times, a share of one core per thread
  // --pace-granularity: rate mode (and a trace at its timing): send times rounded up to the next
  // multiple of this, so a thread wakes once per step for every request due in it; 0: each
  // request at its own time. The wait is slip, in each request's client-send part.
  int64_t pace_granularity_us = 0;
  // --wire-start kernel: each request's wire part starts at the kernel's transmit stamp of its
  // send (plain TCP) instead of at the send call's start
  bool wire_start_kernel = false;
  // --io: how plain-TCP bytes move (engine/io_mode.hpp). automatic is settled before the run
  // (resolve_io in run/run.hpp): uring where this kernel can and nothing needs epoll
  IoMode io = IoMode::automatic;
  int64_t warmup_us = 0;  // leading time of each phase left out of summaries
  uint64_t seed = 1;
  int process_index = 0;  // --processes: this process's place; its workers take the
  int process_count = 1;  // shares after those of the processes before it
  // --segment I/N: this host's share of a run split over N hosts. `threads` is then the
  // segment's share of the run's --threads (worker_total); its workers are numbered from
  // worker_first among worker_total, so keys, requests, rate shares and seeds are the whole
  // run's. worker_total 0: not segmented.
  int worker_first = 0;
  int worker_total = 0;

  // The parameters as a JSON object, as stored in runs.parameters.
  std::string to_json() const;
  // The value sizes of a request of `op` in a phase of `kind`: its --mix-value-size in a mixed
  // phase, else --value-size.
  const ValueSizes& values_of(PhaseKind kind, OpType op) const noexcept {
    const auto i = static_cast<size_t>(op);
    return kind == PhaseKind::mixed && i < kBuiltinOps && mix_values[i] ? *mix_values[i] : values;
  }
  // The largest value any request sends.
  uint64_t largest_value() const;
  // The op of a get: mget with --multi-key-get, else get.
  OpType get_op() const noexcept { return multi_key_get > 0 ? OpType::mget : OpType::get; }
  // Mixed phases' ops: --mix, or set and get at --ratio (get as get_op()), then the --commands.
  std::vector<MixEntry> op_mix() const;
  // A phase of `kind` sends `op`: load sets, read gets, mixed the mix's ops of weight > 0;
  // with --cache-aside, a phase that gets also backfills.
  bool phase_sends(PhaseKind kind, OpType op) const;
  bool has_mixed_phase() const;
  // A mixed phase sends incr or decr: their counter keys exist (a load phase sets them to 0).
  bool uses_counters() const;
};

// A key index with this bit set names a key of the miss key space (hit-rate control):
// "<prefix>~miss:<index>", a key no run writes (written keys are "<prefix><digits>"), so a
// store holding an earlier run's keys (any number of them, any prefix without "~miss:") still
// misses exactly where it should.
constexpr uint64_t kMissKey = uint64_t{1} << 63;
constexpr std::string_view kMissMarker = "~miss:";
// A key index with this bit set names a counter key (incr, decr): "<prefix>~n:<index>",
// holding a decimal number, apart from the keys that hold values.
constexpr uint64_t kCounterKey = uint64_t{1} << 62;
constexpr std::string_view kCounterMarker = "~n:";

// Formats "<prefix><index>" (or, for index | kMissKey, "<prefix>~miss:<index>"; for
// index | kCounterKey, "<prefix>~n:<index>") into an
// internal buffer: no allocation per key.
class KeyFormatter {
 public:
  explicit KeyFormatter(std::string_view prefix);
  // With --key-size: the number is padded with leading zeros to make the key its size (a key
  // longer than its size keeps its length). Distinct indexes still give distinct keys.
  KeyFormatter(std::string_view prefix, const ValueSizes& sizes);
  // Valid until the next call. `size` above 0: pad to that size instead (a replay's recorded
  // key size).
  std::string_view format(uint64_t index, size_t size = 0);

 private:
  std::string buf_;
  size_t prefix_len_;
  const ValueSizes* sizes_ = nullptr;
};

// Incompressible value bytes: a random table generated once; a key's value is a slice of it
// starting at a key-derived offset, so values differ between keys and can be re-derived.
class ValueTable {
 public:
  ValueTable(uint64_t max_value_size, uint64_t seed);
  std::string_view value_for(uint64_t key_index, uint64_t size) const;

 private:
  std::string bytes_;
};

}  // namespace kv::drive
