// Keeps SQLite off the timer's path: the sampling thread hands each tick's Batch to a bounded
// queue, and a writer thread that owns the SqliteSink stores them. When the database is slow or
// locked and the queue is full, the tick's samples are dropped (instances and events are kept)
// and a 'samples_dropped' event says how many ticks were lost.
//
// The writer wakes once per flush period, not per tick, and stores everything queued in one
// transaction (fewer wake-ups and page writes: a commit costs more than a tick's sampling);
// the period is the one asked for, but at most half the queue's worth of ticks. A batch due more
// than one interval after the previous one (the timer overran and skipped ticks) gets a
// 'ticks_skipped' event whose message starts with the number of ticks skipped.
//
// A write that fails (a full disk, an I/O error) loses its ticks: they are counted, and the
// first write that works again carries a 'samples_lost' event (message: the number of ticks,
// the span they were due in, the rows, the error); the session then ends 'incomplete' instead
// of 'completed'. Once per flush the writer checks that the results file's path still names
// the file it has open: a file deleted or replaced under kvmon is said in one log line and the
// file at the path is (re)created with a new session row, whose first rows include a
// 'results_file_replaced' event saying from when data is missing there.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "records.hpp"
#include "sqlite_sink.hpp"

namespace kv::mon {

class BatchWriter {
 public:
  // Takes the sink (its session row already written) and starts the writer thread, which
  // commits every `flush_period_us`.
  BatchWriter(std::unique_ptr<SqliteSink> sink, size_t max_queued, int64_t flush_period_us);
  // Closes with status 'interrupted' if close() was not called.
  ~BatchWriter();
  BatchWriter(const BatchWriter&) = delete;
  BatchWriter& operator=(const BatchWriter&) = delete;

  // An empty Batch for the next tick: one the writer has stored, cleared, its vectors' capacity
  // kept, so a tick allocates nothing for them (a new one while none is spent). Thread-safe.
  Batch fresh();
  // Never blocks on the database. Thread-safe.
  void push(Batch batch);
  // Writes everything queued, ends the session with `status`, joins the thread. Call once.
  void close(const std::string& status);
  int64_t dropped_ticks() const;

 private:
  void run();
  // What was lost to failed writes since the last write that worked.
  struct Lost {
    int64_t ticks = 0, rows = 0;
    int64_t first_due_ts_us = 0, last_due_ts_us = 0;
    std::string error;
  };
  void check_file(std::vector<Batch>& batches);
  void write_or_count(std::vector<Batch>& batches);
  // Hands the stored batches back to fresh(), cleared (at most kSpentKept of them).
  void recycle(std::vector<Batch>& batches);
  static constexpr size_t kSpentKept = 64;

  std::unique_ptr<SqliteSink> sink_;
  size_t max_queued_;
  std::chrono::microseconds flush_period_;
  int64_t last_scheduled_ts_us_ = 0;  // of the previous push (timer's thread only)
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  // A vector, not a deque: its capacity stays, where a deque of Batch (one per node) allocated
  // a node per tick.
  std::vector<Batch> queue_;
  std::vector<Batch> spent_;  // stored, cleared, waiting for fresh()
  int64_t dropped_unreported_ = 0;
  int64_t dropped_total_ = 0;
  bool closing_ = false;
  // The writer thread's own state (read by close() after the join).
  Lost lost_;
  int64_t lost_total_ticks_ = 0;  // reported or not, over the session
  bool reopen_failed_logged_ = false;
  std::thread thread_;
};

}  // namespace kv::mon
