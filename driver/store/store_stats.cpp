#include "store/store_stats.hpp"

#include <chrono>
#include <exception>
#include <utility>

#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"
#include "kvbench/result.hpp"
#include "kvbench/usage_error.hpp"
#include "store/stats_sources.hpp"

namespace kv::drive {
namespace {

Result<Values> poll_guarded(StatsSource& src, int64_t timeout_us) {
  try {
    return src.poll(timeout_us);
  } catch (const std::exception& e) {
    return Error{e.what()};
  } catch (...) {
    return Error{"unknown exception"};
  }
}

// Polls every server; a sample if at least one answered. Logs each outage's start and end.
std::optional<StoreStatsSample> poll_all(std::vector<StatsServer>& servers, int64_t interval_us,
                                         int64_t timeout_us) {
  std::optional<StoreStatsSample> sample;
  for (auto& s : servers) {
    Result<Values> r = poll_guarded(*s.source, timeout_us);
    if (!r.ok()) {
      if (!s.down)
        log_warn() << "store stats: cannot poll " << s.label << ": " << r.error().message
                   << " (retrying every " << interval_us / 1000 << " ms; logged once per outage)";
      s.down = true;
      continue;
    }
    if (s.down) log_info() << "store stats: " << s.label << " answers again";
    s.down = false;
    if (!sample) sample.emplace();
    sample->ts_us = now_ts_us();
    for (auto& v : r.value())
      sample->values.push_back({s.prefix.empty() ? std::move(v.name) : s.prefix + v.name, v.value});
  }
  return sample;
}

}  // namespace

StoreStatsPoller::StoreStatsPoller(TargetSpec target, int64_t interval_us, int64_t timeout_us)
    : target_(std::move(target)), interval_us_(interval_us), timeout_us_(timeout_us) {
  if (target_.servers.empty())
    throw UsageError("store stats: target " + target_.display + " has no server");
  if (interval_us_ <= 0 || timeout_us_ <= 0)
    throw UsageError("store stats: interval and timeout must be positive");
}

StoreStatsPoller::~StoreStatsPoller() { stop(); }

void StoreStatsPoller::start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread(&StoreStatsPoller::run, this);
}

void StoreStatsPoller::stop(bool last_poll) {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    last_poll_ = last_poll;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<StoreStatsSample> StoreStatsPoller::drain() {
  std::lock_guard lock(mu_);
  std::vector<StoreStatsSample> out(std::make_move_iterator(queue_.begin()),
                                    std::make_move_iterator(queue_.end()));
  queue_.clear();
  return out;
}

std::optional<double> StoreStatsPoller::latest(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = latest_.find(name);
  if (it == latest_.end()) return std::nullopt;
  return it->second;
}

void StoreStatsPoller::publish(StoreStatsSample sample) {
  bool warn = false;
  {
    std::lock_guard lock(mu_);
    for (const auto& v : sample.values) latest_[v.name] = v.value;
    queue_.push_back(std::move(sample));
    if (queue_.size() > kMaxQueued) {
      queue_.pop_front();
      warn = !std::exchange(dropped_warned_, true);
    }
  }
  if (warn)
    log_warn() << "store stats: " << target_.display << ": more than " << kMaxQueued
               << " samples not drained; dropping the oldest";
}

void StoreStatsPoller::run() {
  using Clock = std::chrono::steady_clock;
  const auto interval = std::chrono::microseconds(interval_us_);
  try {
    std::vector<StatsServer> servers = make_stats_servers(target_, timeout_us_);
    auto next = Clock::now();
    std::unique_lock lock(mu_);
    while (!stopping_) {
      lock.unlock();
      if (auto sample = poll_all(servers, interval_us_, timeout_us_)) publish(std::move(*sample));
      lock.lock();
      // Absolute deadlines; ticks missed by a slow poll are skipped rather than run back to back.
      next += interval;
      auto now = Clock::now();
      if (next <= now) next += ((now - next) / interval + 1) * interval;
      wake_.wait_until(lock, next, [this] { return stopping_; });
    }
    // One last poll, so the samples cover the end of what was measured (a short phase may end
    // between two ticks).
    bool last = last_poll_;
    lock.unlock();
    if (!last) return;
    if (auto sample = poll_all(servers, interval_us_, timeout_us_)) publish(std::move(*sample));
  } catch (const std::exception& e) {
    log_error() << "store stats: " << target_.display << ": poller stopped: " << e.what();
  } catch (...) {
    log_error() << "store stats: " << target_.display << ": poller stopped";
  }
}

}  // namespace kv::drive
