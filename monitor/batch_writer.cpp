#include "batch_writer.hpp"

#include <algorithm>

#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"
#include "kvbench/units.hpp"

namespace kv::mon {

namespace {

std::chrono::microseconds flush_period(int64_t interval_us, size_t max_queued, int64_t wanted_us) {
  int64_t half_queue_us = interval_us * static_cast<int64_t>(std::max<size_t>(max_queued / 2, 1));
  return std::chrono::microseconds(std::max(interval_us, std::min(wanted_us, half_queue_us)));
}

}  // namespace

BatchWriter::BatchWriter(std::unique_ptr<SqliteSink> sink, size_t max_queued,
                         int64_t flush_period_us)
    : sink_(std::move(sink)),
      max_queued_(max_queued < 1 ? 1 : max_queued),
      flush_period_(flush_period(sink_->interval_us(), max_queued_, flush_period_us)) {
  thread_ = std::thread([this] { run(); });
}

BatchWriter::~BatchWriter() {
  if (thread_.joinable()) close("interrupted");
}

Batch BatchWriter::fresh() {
  std::lock_guard lock(mutex_);
  if (spent_.empty()) return Batch{};
  Batch b = std::move(spent_.back());
  spent_.pop_back();
  return b;
}

void BatchWriter::recycle(std::vector<Batch>& batches) {
  std::lock_guard lock(mutex_);
  for (Batch& b : batches) {
    if (spent_.size() >= kSpentKept) break;
    b.clear();
    spent_.push_back(std::move(b));
  }
  batches.clear();
}

void BatchWriter::push(Batch batch) {
  const int64_t interval_us = sink_->interval_us();
  if (last_scheduled_ts_us_ > 0 && interval_us > 0 &&
      batch.scheduled_ts_us - last_scheduled_ts_us_ > interval_us) {
    int64_t skipped = (batch.scheduled_ts_us - last_scheduled_ts_us_) / interval_us - 1;
    batch.events.push_back(EventRecord{now_ts_us(), "ticks_skipped",
                                       std::to_string(skipped) +
                                           " tick(s) skipped: sampling overran its interval of " +
                                           format_duration_us(interval_us),
                                       std::nullopt});
  }
  last_scheduled_ts_us_ = batch.scheduled_ts_us;
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() < max_queued_) {
      queue_.push_back(std::move(batch));
    } else {
      // Drop the samples but keep what later rows refer to (instances) and what happened.
      Batch& last = queue_.back();
      for (auto& r : batch.new_instances) last.new_instances.push_back(std::move(r));
      for (auto& e : batch.events) last.events.push_back(std::move(e));
      if (dropped_unreported_++ == 0) {
        log_warn() << "the results file is not keeping up: dropping samples";
      }
      ++dropped_total_;
    }
    wake = queue_.size() * 2 >= max_queued_;  // else the writer wakes at its flush period
  }
  if (wake) ready_.notify_one();
}

int64_t BatchWriter::dropped_ticks() const {
  std::lock_guard lock(mutex_);
  return dropped_total_;
}

void BatchWriter::close(const std::string& wanted) {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  ready_.notify_one();
  thread_.join();
  std::string status = wanted;
  if (lost_.ticks > 0) {  // the last writes failed: one more try to say so
    std::vector<Batch> last(1);
    last[0].scheduled_ts_us = lost_.last_due_ts_us;
    write_or_count(last);
  }
  if (lost_total_ticks_ > 0 && status == "completed") {
    status = "incomplete";
    log_warn() << lost_total_ticks_ << " tick(s) of samples were lost to failed writes: the "
               << "session is marked incomplete (see its samples_lost events)";
  }
  try {
    sink_->finish(status, now_ts_us());
  } catch (const std::exception& e) {
    log_error() << "could not mark the session " << status << ": " << e.what();
  }
}

void BatchWriter::check_file(std::vector<Batch>& batches) {
  std::optional<std::string> gone = sink_->file_gone();
  if (!gone && !reopen_failed_logged_) return;
  const int64_t now = now_ts_us();
  if (gone && !reopen_failed_logged_) {
    log_warn() << "the results file " << sink_->path() << " was " << *gone
               << " while kvmon was writing it: creating a new one at that path (a new "
               << "session); what was written before is not in it";
  }
  try {
    sink_->reopen(now);
  } catch (const std::exception& e) {
    if (!reopen_failed_logged_) {
      log_error() << "cannot create the results file " << sink_->path() << " again: " << e.what()
                  << "; samples are lost until it can be (tried once per flush)";
      reopen_failed_logged_ = true;
    }
    return;
  }
  reopen_failed_logged_ = false;
  if (batches.empty()) batches.emplace_back().scheduled_ts_us = now;
  batches.front().events.push_back(
      EventRecord{now, "results_file_replaced",
                  "the results file " + sink_->path() + " was " + gone.value_or("deleted") +
                      " under kvmon and created anew at " + format_ts_us(now) +
                      ": this session's samples before then went to the old file and are not here",
                  std::nullopt});
}

// Writes the batches in one transaction, first saying what earlier failures lost; on failure
// counts them as lost. Writer thread only (and close(), after the join).
void BatchWriter::write_or_count(std::vector<Batch>& batches) {
  if (lost_.ticks > 0) {
    batches.front().events.push_back(
        EventRecord{now_ts_us(), "samples_lost",
                    std::to_string(lost_.ticks) + " tick(s) of samples lost, due from " +
                        format_ts_us(lost_.first_due_ts_us) + " to " +
                        format_ts_us(lost_.last_due_ts_us) + " (" + std::to_string(lost_.rows) +
                        " rows): the results file could not be " + "written: " + lost_.error,
                    std::nullopt});
  }
  try {
    sink_->write(std::span<const Batch>(batches));
    if (lost_.ticks > 0) {
      log_info() << "the results file is written again; " << lost_.ticks
                 << " tick(s) were lost (a samples_lost event says which)";
      lost_ = Lost{};
    }
  } catch (const std::exception& e) {
    if (lost_.ticks > 0) batches.front().events.pop_back();  // it goes in the next try
    int64_t ticks = 0, rows = 0;
    for (const Batch& b : batches) {
      if (b.processes.empty() && !b.host && b.events.empty() && b.new_instances.empty()) continue;
      ++ticks;
      rows += static_cast<int64_t>(b.processes.size() + b.events.size()) + (b.host ? 1 : 0) +
              (b.host ? static_cast<int64_t>(b.host->disks.size()) : 0);
    }
    if (ticks == 0) return;
    if (lost_.ticks == 0) {
      log_error() << "could not store " << ticks << " tick(s) due from "
                  << format_ts_us(batches.front().scheduled_ts_us) << ": " << e.what()
                  << " (later failures are counted and reported when writing works again)";
      lost_.first_due_ts_us = batches.front().scheduled_ts_us;
    }
    lost_.ticks += ticks;
    lost_.rows += rows;
    lost_.last_due_ts_us = batches.back().scheduled_ts_us;
    lost_.error = e.what();
    lost_total_ticks_ += ticks;
  }
}

void BatchWriter::run() {
  auto next_flush = std::chrono::steady_clock::now() + flush_period_;
  std::vector<Batch> batches;
  for (;;) {
    batches.clear();
    {
      std::unique_lock lock(mutex_);
      ready_.wait_until(lock, next_flush,
                        [&] { return closing_ || queue_.size() * 2 >= max_queued_; });
      if (closing_ && queue_.empty()) return;  // drained
      for (Batch& b : queue_) batches.push_back(std::move(b));
      queue_.clear();
      if (dropped_unreported_ > 0 && !batches.empty()) {
        batches.front().events.push_back(
            EventRecord{now_ts_us(), "samples_dropped",
                        std::to_string(dropped_unreported_) +
                            " tick(s) of samples dropped: the results file was busy or slow and " +
                            std::to_string(max_queued_) + " ticks were already waiting",
                        std::nullopt});
        dropped_unreported_ = 0;
      }
    }
    next_flush += flush_period_;
    auto now = std::chrono::steady_clock::now();
    if (next_flush < now) next_flush = now + flush_period_;
    check_file(batches);  // at most once per flush: one stat(2)
    if (batches.empty()) continue;
    write_or_count(batches);
    recycle(batches);
  }
}

}  // namespace kv::mon
