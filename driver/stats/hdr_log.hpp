// HdrHistogram interval logs (`kvdrive run --hdr-log PREFIX`), so HdrHistogram's plotter and
// log processors (HistogramLogProcessor, HdrHistogramVisualizer) read kvdrive's latencies.
//
// The text format of HdrHistogram's HistogramLogWriter, version 1.3: comment lines
// "#[Histogram log format version 1.3]", "#[StartTime: S (seconds since epoch), DATE]",
// "#[BaseTime: S (seconds since epoch)]", the CSV header line, then one line per interval:
// "Tag=OP,START,LENGTH,MAX,HISTOGRAM" — START relative to BaseTime and LENGTH in seconds, MAX
// in milliseconds (the readers' default unit ratio of 10^6 for nanosecond values), HISTOGRAM
// the interval's histogram in the V2 compressed encoding (big-endian cookie 0x1c849314,
// length, zlib deflate of: cookie 0x1c849313, payload length, normalizing offset 0,
// significant digits, lowest and highest trackable value, conversion ratio 1.0, then the
// counts as ZigZag LEB128 with runs of zeros as negative counts), base64.
//
// LatencyHistogram's buckets are exactly an HdrHistogram's with lowest trackable value 1 ns,
// highest 2^36 - 1 ns and 2 significant digits (256 unit buckets, then 128 sub-buckets per
// power of two): the counts are copied index for index, nothing is re-binned.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "kvbench/histogram.hpp"

namespace kv::drive {

constexpr int32_t kHdrSignificantDigits = 2;
constexpr int64_t kHdrLowest = 1, kHdrHighest = LatencyHistogram::kMaxTrackableNs;

// `h` in the V2 compressed encoding, base64 (no line breaks).
std::string hdr_compressed_base64(const LatencyHistogram& h);

// One interval log file. Not thread-safe. Throws std::runtime_error naming the file when it
// cannot be opened or written.
class HdrLogWriter {
 public:
  // Creates (truncates) `path` and writes the header; times are relative to `base_ts_us`.
  HdrLogWriter(const std::string& path, int64_t base_ts_us);
  // A comment line ("#" + text).
  void comment(const std::string& text);
  // One interval of `tag` (no commas or spaces): [ts_us, ts_us + interval_us).
  void interval(const std::string& tag, int64_t ts_us, int64_t interval_us,
                const LatencyHistogram& h);
  const std::string& path() const { return path_; }

 private:
  void check();
  std::string path_;
  std::ofstream out_;
  int64_t base_ts_us_;
};

}  // namespace kv::drive
