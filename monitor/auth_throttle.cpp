#include "auth_throttle.hpp"

#include <algorithm>

#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"

namespace kv::mon {
namespace {

constexpr int kFreeAuthFailures = 3;
constexpr int64_t kAuthBackoffFirstUs = 1'000'000;
constexpr int64_t kAuthBackoffMaxUs = 60'000'000;
constexpr int64_t kAuthForgetUs = 600'000'000;
constexpr int64_t kAuthLogPeriodUs = 10'000'000;
constexpr size_t kMaxAuthAddresses = 4096;

}  // namespace

bool AuthThrottle::blocked(const std::string& address, int64_t* wait_us) {
  auto it = records_.find(address);
  if (it == records_.end()) return false;
  const int64_t now = steady_us();
  if (now >= it->second.blocked_until_us) return false;
  *wait_us = it->second.blocked_until_us - now;
  ++it->second.unlogged_refusals;
  summarize(address, it->second, now);
  return true;
}

void AuthThrottle::failed(const std::string& address, const std::string& peer) {
  const int64_t now = steady_us();
  if (records_.size() >= kMaxAuthAddresses && !records_.count(address)) log_summaries(true);
  Record& r = records_[address];
  if (r.failures > 0 && now - r.last_failure_us > kAuthForgetUs) r.failures = 0;
  ++r.failures;
  r.last_failure_us = now;
  if (r.failures > kFreeAuthFailures) {
    int shift = std::min(r.failures - kFreeAuthFailures - 1, 6);
    r.blocked_until_us = now + std::min(kAuthBackoffFirstUs << shift, kAuthBackoffMaxUs);
  }
  if (r.last_log_us == 0) {  // the first of a series: said at once, with the port
    log_warn() << who_ << " " << peer << ": wrong or missing token (further failed attempts from "
               << address << " are counted, one line per " << kAuthLogPeriodUs / 1'000'000 << " s)";
    r.last_log_us = now;
    return;
  }
  ++r.unlogged_failures;
  summarize(address, r, now);
}

void AuthThrottle::succeeded(const std::string& address) {
  auto it = records_.find(address);
  if (it == records_.end()) return;
  if (it->second.last_early_us == 0) {
    records_.erase(it);
    return;
  }
  it->second.failures = 0;
  it->second.blocked_until_us = 0;
}

void AuthThrottle::refused(const std::string& address, const std::string& peer,
                           const std::string& why) {
  const int64_t now = steady_us();
  if (records_.size() >= kMaxAuthAddresses && !records_.count(address)) log_summaries(true);
  Record& r = records_[address];
  r.last_early_us = now;
  if (r.last_log_us == 0) {
    log_warn() << who_ << " " << peer << " refused: " << why << " (further refusals from "
               << address << " are counted, one line per " << kAuthLogPeriodUs / 1'000'000 << " s)";
    r.last_log_us = now;
    return;
  }
  ++r.unlogged_early;
  summarize(address, r, now);
}

void AuthThrottle::summarize(const std::string& address, Record& r, int64_t now) {
  if (r.unlogged_failures + r.unlogged_refusals + r.unlogged_early == 0 ||
      now - r.last_log_us < kAuthLogPeriodUs) {
    return;
  }
  if (r.unlogged_early > 0) {
    log_warn() << who_ << "s from " << address << ": " << r.unlogged_early
               << " more refused in the last " << (now - r.last_log_us + 500'000) / 1'000'000
               << " s";
    r.unlogged_early = 0;
    if (r.unlogged_failures + r.unlogged_refusals == 0) {
      r.last_log_us = now;
      return;
    }
  }
  log_warn() << who_ << "s from " << address << ": " << r.unlogged_failures
             << " wrong or missing tokens and " << r.unlogged_refusals
             << " attempts refused unchecked in the last "
             << (now - r.last_log_us + 500'000) / 1'000'000 << " s (" << r.failures
             << " failures in a row; shut out for "
             << std::max<int64_t>(0, r.blocked_until_us - now) / 1000 << " ms after the last)";
  r.unlogged_failures = r.unlogged_refusals = 0;
  r.last_log_us = now;
}

void AuthThrottle::log_summaries(bool all) {
  const int64_t now = steady_us();
  for (auto it = records_.begin(); it != records_.end();) {
    Record& r = it->second;
    if (all) r.last_log_us = std::min(r.last_log_us, now - kAuthLogPeriodUs);
    summarize(it->first, r, now);
    bool quiet = now - r.last_failure_us > kAuthForgetUs && now >= r.blocked_until_us &&
                 now - r.last_early_us > kAuthLogPeriodUs && r.unlogged_early == 0;
    if (quiet || (all && now >= r.blocked_until_us)) {
      it = records_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace kv::mon
