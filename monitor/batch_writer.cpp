#include "batch_writer.hpp"

#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"

namespace kv::mon {

BatchWriter::BatchWriter(std::unique_ptr<SqliteSink> sink, size_t max_queued)
    : sink_(std::move(sink)), max_queued_(max_queued < 1 ? 1 : max_queued) {
  thread_ = std::thread([this] { run(); });
}

BatchWriter::~BatchWriter() {
  if (thread_.joinable()) close("interrupted");
}

void BatchWriter::push(Batch batch) {
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
  }
  ready_.notify_one();
}

int64_t BatchWriter::dropped_ticks() const {
  std::lock_guard lock(mutex_);
  return dropped_total_;
}

void BatchWriter::close(const std::string& status) {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  ready_.notify_one();
  thread_.join();
  try {
    sink_->finish(status, now_ts_us());
  } catch (const std::exception& e) {
    log_error() << "could not mark the session " << status << ": " << e.what();
  }
}

void BatchWriter::run() {
  for (;;) {
    Batch batch;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return !queue_.empty() || closing_; });
      if (queue_.empty()) return;  // closing and drained
      batch = std::move(queue_.front());
      queue_.pop_front();
      if (dropped_unreported_ > 0) {
        batch.events.push_back(EventRecord{
            now_ts_us(), "samples_dropped",
            std::to_string(dropped_unreported_) +
                " tick(s) of samples dropped: the results file was busy or slow and " +
                std::to_string(max_queued_) + " ticks were already waiting",
            std::nullopt});
        dropped_unreported_ = 0;
      }
    }
    try {
      sink_->write(batch);
    } catch (const std::exception& e) {
      log_error() << "could not store the sample due at " << format_ts_us(batch.scheduled_ts_us)
                  << ": " << e.what();
    }
  }
}

}  // namespace kv::mon
