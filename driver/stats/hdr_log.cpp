// HdrHistogram interval logs: see hdr_log.hpp.
#include "stats/hdr_log.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace kv::drive {
namespace {

constexpr uint32_t kEncodingCookie = 0x1c849303 | 0x10;
constexpr uint32_t kCompressedCookie = 0x1c849304 | 0x10;

void put32(std::string& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xff));
}
void put64(std::string& out, uint64_t v) {
  for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xff));
}

// ZigZag, then LEB128 of at most 9 bytes (the 9th carries 8 bits), as HdrHistogram writes it.
void put_zigzag(std::string& out, int64_t v) {
  uint64_t u = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  for (int i = 0; i < 8; ++i) {
    if ((u >> 7) == 0) {
      out.push_back(static_cast<char>(u));
      return;
    }
    out.push_back(static_cast<char>((u & 0x7f) | 0x80));
    u >>= 7;
  }
  out.push_back(static_cast<char>(u & 0xff));
}

std::string base64(const std::string& in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t n = (static_cast<uint8_t>(in[i]) << 16) |
                       (static_cast<uint8_t>(in[i + 1]) << 8) | static_cast<uint8_t>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kAlphabet[(n >> s) & 63]);
  }
  if (i < in.size()) {
    uint32_t n = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<uint8_t>(in[i + 1]) << 8;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

}  // namespace

std::string hdr_compressed_base64(const LatencyHistogram& h) {
  // Counts up to the bucket of the largest value (HdrHistogram's countsLimit).
  int limit = 0;
  for (int i = LatencyHistogram::kBuckets - 1; i >= 0; --i)
    if (h.bucket_count(i) != 0) {
      limit = i + 1;
      break;
    }
  std::string payload;
  for (int i = 0; i < limit;) {
    const uint64_t c = h.bucket_count(i++);
    if (c != 0) {
      put_zigzag(payload, static_cast<int64_t>(c));
      continue;
    }
    int64_t zeros = 1;
    while (i < limit && h.bucket_count(i) == 0) ++zeros, ++i;
    put_zigzag(payload, zeros > 1 ? -zeros : 0);
  }
  std::string inner;
  put32(inner, kEncodingCookie);
  put32(inner, static_cast<uint32_t>(payload.size()));
  put32(inner, 0);  // normalizing index offset
  put32(inner, static_cast<uint32_t>(kHdrSignificantDigits));
  put64(inner, static_cast<uint64_t>(kHdrLowest));
  put64(inner, static_cast<uint64_t>(kHdrHighest));
  double ratio = 1.0;
  uint64_t bits = 0;
  std::memcpy(&bits, &ratio, sizeof bits);
  put64(inner, bits);
  inner += payload;

  uLongf size = compressBound(static_cast<uLong>(inner.size()));
  std::string deflated(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(deflated.data()), &size,
                reinterpret_cast<const Bytef*>(inner.data()), static_cast<uLong>(inner.size()),
                Z_DEFAULT_COMPRESSION) != Z_OK)
    throw std::runtime_error("zlib could not compress a histogram");
  deflated.resize(size);
  std::string outer;
  put32(outer, kCompressedCookie);
  put32(outer, static_cast<uint32_t>(deflated.size()));
  outer += deflated;
  return base64(outer);
}

HdrLogWriter::HdrLogWriter(const std::string& path, int64_t base_ts_us)
    : path_(path), base_ts_us_(base_ts_us) {
  // Created here, never replaced: the command line checked that no such file existed, but a
  // later target's file is made when it starts, and something may have made it meanwhile.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::runtime_error("--hdr-log: cannot create '" + path + "': " + std::strerror(errno));
  ::close(fd);
  out_.open(path, std::ios::out | std::ios::trunc);
  if (!out_) throw std::runtime_error("--hdr-log: cannot create '" + path + "'");
  char date[64] = "";
  const time_t t = static_cast<time_t>(base_ts_us / 1'000'000);
  tm utc{};
  if (gmtime_r(&t, &utc)) std::strftime(date, sizeof date, "%a %b %d %H:%M:%S UTC %Y", &utc);
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.3f", static_cast<double>(base_ts_us) / 1e6);
  out_ << "#[Logged with kvdrive: latencies in nanoseconds, one interval per second and op]\n"
       << "#[Histogram log format version 1.3]\n"
       << "#[StartTime: " << secs << " (seconds since epoch), " << date << "]\n"
       << "#[BaseTime: " << secs << " (seconds since epoch)]\n"
       << "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_"
          "Histogram\"\n";
  check();
}

void HdrLogWriter::comment(const std::string& text) {
  out_ << "#" << text << "\n";
  check();
}

void HdrLogWriter::interval(const std::string& tag, int64_t ts_us, int64_t interval_us,
                            const LatencyHistogram& h) {
  char head[160];
  std::snprintf(head, sizeof head, "Tag=%s,%.3f,%.3f,%.3f,", tag.c_str(),
                static_cast<double>(ts_us - base_ts_us_) / 1e6,
                static_cast<double>(interval_us) / 1e6, static_cast<double>(h.max_ns()) / 1e6);
  out_ << head << hdr_compressed_base64(h) << "\n";
  out_.flush();
  check();
}

void HdrLogWriter::check() {
  if (!out_) throw std::runtime_error("--hdr-log: cannot write '" + path_ + "'");
}

}  // namespace kv::drive
