#include "kvbench/clock.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

namespace kv {
namespace {
int64_t read_clock(clockid_t id, int64_t div) {
  timespec ts{};
  clock_gettime(id, &ts);
  return (static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec) / div;
}
}  // namespace

int64_t now_ts_us() { return read_clock(CLOCK_REALTIME, 1000); }

void sleep_until_ts_us(int64_t ts_us) {
  for (int64_t left = ts_us - now_ts_us(); left > 0; left = ts_us - now_ts_us())
    std::this_thread::sleep_for(
        std::chrono::microseconds(left > 2'000 ? std::min<int64_t>(left - 1'000, 100'000) : 100));
}
int64_t steady_us() { return read_clock(CLOCK_MONOTONIC, 1000); }
int64_t steady_ns() { return read_clock(CLOCK_MONOTONIC, 1); }

std::string format_ts_us(int64_t ts_us) {
  time_t secs = static_cast<time_t>(ts_us / 1'000'000);
  tm t{};
  gmtime_r(&secs, &t);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", t.tm_year + 1900,
                t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                static_cast<int>((ts_us % 1'000'000) / 1000));
  return buf;
}

}  // namespace kv
