#include "workload/trace.hpp"

#include <zstd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "workload/key_chooser.hpp"

namespace kv::drive {
namespace {

constexpr std::array<std::string_view, 11> kOpNames = {
    "get", "gets", "set", "add", "replace", "cas", "append", "prepend", "delete", "incr", "decr"};

template <typename T>
bool parse_number(std::string_view text, T& out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && p == text.data() + text.size();
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::string_view trace_op_name(TraceOp op) { return kOpNames.at(static_cast<size_t>(op)); }

bool trace_op_reads(TraceOp op) { return op == TraceOp::get || op == TraceOp::gets; }

std::optional<std::string> parse_trace_line(std::string_view line, TraceRecord& out) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // The last five fields, from the right; the first, from the left; the key between.
  std::array<std::string_view, 5> tail;
  std::string_view rest = line;
  for (size_t i = tail.size(); i-- > 0;) {
    const size_t comma = rest.rfind(',');
    if (comma == std::string_view::npos)
      return "expected 7 comma-separated fields: timestamp,key,key size,value size,client "
             "id,operation,TTL";
    tail[i] = rest.substr(comma + 1);
    rest = rest.substr(0, comma);
  }
  const size_t first = rest.find(',');
  if (first == std::string_view::npos)
    return "expected 7 comma-separated fields: timestamp,key,key size,value size,client "
           "id,operation,TTL";
  if (!parse_number(rest.substr(0, first), out.ts_s) || out.ts_s < 0)
    return "timestamp '" + std::string(rest.substr(0, first)) + "' is not whole seconds >= 0";
  out.key = rest.substr(first + 1);
  if (out.key.empty()) return "the key is empty";
  if (!parse_number(tail[0], out.key_size))
    return "key size '" + std::string(tail[0]) + "' is not a whole number";
  if (!parse_number(tail[1], out.value_size))
    return "value size '" + std::string(tail[1]) + "' is not a whole number";
  if (!parse_number(tail[2], out.client_id))
    return "client id '" + std::string(tail[2]) + "' is not a whole number";
  bool known = false;
  for (size_t i = 0; i < kOpNames.size() && !known; ++i)
    if (tail[3] == kOpNames[i]) {
      out.op = static_cast<TraceOp>(i);
      known = true;
    }
  if (!known)
    return "operation '" + std::string(tail[3]) +
           "' is none of get, gets, set, add, replace, cas, append, prepend, delete, incr, decr";
  if (!parse_number(tail[4], out.ttl_s) || out.ttl_s < 0)
    return "TTL '" + std::string(tail[4]) + "' is not whole seconds >= 0";
  return std::nullopt;
}

struct TraceReader::Source {
  std::FILE* file = nullptr;
  ZSTD_DStream* zstd = nullptr;  // null for a plain file
  std::string in;                // compressed bytes read, not yet decompressed
  ZSTD_inBuffer zin{nullptr, 0, 0};
  ~Source() {
    if (zstd != nullptr) ZSTD_freeDStream(zstd);
    if (file != nullptr) std::fclose(file);
  }
};

TraceReader::TraceReader(const std::string& path) : src_(std::make_unique<Source>()), path_(path) {
  src_->file = std::fopen(path.c_str(), "rb");
  if (src_->file == nullptr) throw TraceError(path + ": cannot open the trace");
  unsigned char magic[4] = {0, 0, 0, 0};
  const size_t got = std::fread(magic, 1, sizeof magic, src_->file);
  std::rewind(src_->file);
  if (got == 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd) {
    src_->zstd = ZSTD_createDStream();
    if (src_->zstd == nullptr) throw TraceError(path + ": cannot start zstd");
    ZSTD_initDStream(src_->zstd);
  }
}

TraceReader::~TraceReader() = default;

bool TraceReader::compressed() const { return src_->zstd != nullptr; }

bool TraceReader::fill() {
  std::array<char, 1 << 16> chunk{};
  if (src_->zstd == nullptr) {
    const size_t n = std::fread(chunk.data(), 1, chunk.size(), src_->file);
    if (n == 0 && std::ferror(src_->file)) throw TraceError(path_ + ": cannot read the trace");
    buf_.append(chunk.data(), n);
    return n > 0;
  }
  for (;;) {
    if (src_->zin.pos == src_->zin.size) {
      src_->in.resize(ZSTD_DStreamInSize());
      const size_t n = std::fread(src_->in.data(), 1, src_->in.size(), src_->file);
      if (n == 0) {
        if (std::ferror(src_->file)) throw TraceError(path_ + ": cannot read the trace");
        return false;
      }
      src_->zin = {src_->in.data(), n, 0};
    }
    ZSTD_outBuffer out{chunk.data(), chunk.size(), 0};
    const size_t rc = ZSTD_decompressStream(src_->zstd, &out, &src_->zin);
    if (ZSTD_isError(rc) != 0)
      throw TraceError(path_ + ": not a readable zstd stream (" + ZSTD_getErrorName(rc) + ")");
    buf_.append(chunk.data(), out.pos);
    if (out.pos > 0) return true;
  }
}

std::optional<TraceRecord> TraceReader::next() {
  for (;;) {
    size_t nl = buf_.find('\n', pos_);
    while (nl == std::string::npos) {
      buf_.erase(0, pos_);
      pos_ = 0;
      const size_t had = buf_.size();
      if (!fill()) break;
      nl = buf_.find('\n', had);
    }
    if (nl == std::string::npos && pos_ == buf_.size()) return std::nullopt;
    const size_t end = nl == std::string::npos ? buf_.size() : nl;
    line_buf_.assign(buf_, pos_, end - pos_);
    pos_ = nl == std::string::npos ? buf_.size() : nl + 1;
    ++line_;
    if (line_buf_.empty() || line_buf_ == "\r") continue;
    TraceRecord r;
    if (auto why = parse_trace_line(line_buf_, r))
      throw TraceError(path_ + ":" + std::to_string(line_) + ": " + *why);
    return r;
  }
}

void write_trace(const TraceSpec& spec, std::ostream& out) {
  if (spec.keys == 0 || spec.rate == 0 || spec.value_min == 0 || spec.value_min > spec.value_max)
    throw std::invalid_argument(
        "write_trace: keys and rate must be >= 1, and 1 <= value_min <= value_max");
  std::mt19937_64 rng(spec.seed);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  std::optional<ZipfSampler> zipf;
  if (spec.zipf > 0) zipf.emplace(spec.keys, spec.zipf);
  std::uniform_int_distribution<uint64_t> uniform(0, spec.keys - 1);
  const double span = std::log(static_cast<double>(spec.value_max) / spec.value_min);
  std::vector<bool> present(spec.cache_aside ? spec.keys : 0);  // --cache-aside: what is set
  uint64_t i = 0;
  const auto line = [&](uint64_t key, std::string_view op) {
    // A key's value size is its own, the same in every request: log-uniform over the range.
    const double v = static_cast<double>(splitmix64(spec.seed ^ key) >> 11) * 0x1.0p-53;
    const auto value = static_cast<uint32_t>(std::lround(spec.value_min * std::exp(v * span)));
    const std::string name = "key:" + std::to_string(key);
    out << i++ / spec.rate << ',' << name << ',' << name.size() << ',' << value << ",1," << op
        << ',' << spec.ttl_s << '\n';
  };
  while (i < spec.requests) {
    const uint64_t key = zipf ? (*zipf)(rng)-1 : uniform(rng);
    const double u = u01(rng);
    const std::string_view op = u < spec.write_fraction                          ? "set"
                                : u < spec.write_fraction + spec.delete_fraction ? "delete"
                                                                                 : "get";
    line(key, op);
    if (!spec.cache_aside) continue;
    if (op == "get" && !present[key] && i < spec.requests) line(key, "set");
    present[key] = op != "delete";
  }
}

OpType replay_op(TraceOp op, bool redis) {
  switch (op) {
    case TraceOp::get:
    case TraceOp::gets:
      return OpType::get;
    case TraceOp::set:
    case TraceOp::cas:
      return OpType::set;
    case TraceOp::add:
      return OpType::add;
    case TraceOp::replace:
      return OpType::replace;
    case TraceOp::append:
      return OpType::append;
    case TraceOp::prepend:
      return redis ? OpType::append : OpType::prepend;
    case TraceOp::del:
      return OpType::del;
    case TraceOp::incr:
      return OpType::incr;
    case TraceOp::decr:
      return OpType::decr;
  }
  return OpType::get;
}

uint64_t trace_key_id(std::string_view key) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, then a finalizer
  for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ULL;
  return splitmix64(h) >> 2;  // the top bits are KeyFormatter's markers (kMissKey, kCounterKey)
}

std::optional<uint64_t> scaled_key(uint64_t key_id, uint64_t ordinal, double scale) {
  constexpr uint64_t kSalt = 0x7363616c65ULL;
  if (scale == 1) return key_id;
  if (scale < 1) {
    const double u = static_cast<double>(splitmix64(key_id ^ kSalt) >> 11) * 0x1.0p-53;
    if (u < scale) return key_id;
    return std::nullopt;
  }
  const uint64_t copy = splitmix64(ordinal ^ kSalt) % static_cast<uint64_t>(scale);
  return copy == 0 ? key_id : splitmix64(key_id + copy * 0x9e3779b97f4a7c15ULL) >> 2;
}

TraceScan scan_trace(const std::string& path, double keys_scale) {
  TraceScan s;
  TraceReader reader(path);
  while (auto r = reader.next()) {
    if (s.records == 0) s.first_ts = r->ts_s;
    s.last_ts = std::max(s.last_ts, r->ts_s);
    if (const auto id = scaled_key(trace_key_id(r->key), s.records, keys_scale)) {
      ++s.requests;
      if (r->op == TraceOp::incr || r->op == TraceOp::decr) s.counters.insert(*id);
      s.ops[static_cast<size_t>(replay_op(r->op, false))] = true;
      if (r->op != TraceOp::get && r->op != TraceOp::gets && r->op != TraceOp::del)
        s.largest_ttl =
            std::max(s.largest_ttl, static_cast<uint32_t>(std::min<int64_t>(r->ttl_s, UINT32_MAX)));
    }
    ++s.records;
  }
  return s;
}

}  // namespace kv::drive
