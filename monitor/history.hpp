// kvmon's in-memory history for the TCP link: each tick's Batch encoded once into protocol lines
// (docs/protocol.md) and kept in a ring bounded by age and bytes, so a client that reconnects
// can backfill what it missed and every client shares the same encoded bytes.
// Not thread-safe: the timer's thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kvbench/protocol.hpp"
#include "records.hpp"

namespace kv::mon {

// One tick's lines (proc, host, disk, event ..., then the closing `tick` line).
struct TickEntry {
  int64_t scheduled_ts_us = 0;
  std::shared_ptr<const std::string> lines;
  std::vector<ProcessKey> instances;  // referenced by the lines: announce these first
};

proto::Message instance_message(const InstanceRecord& r);
proto::Message process_message(const ProcessSample& s);
proto::Message host_message(const HostSample& h);
proto::Message disk_message(int64_t ts_us, const DiskStat& d);
proto::Message event_message(const EventRecord& e);
TickEntry encode_tick(const Batch& batch);

struct HistoryLimits {
  int64_t min_age_us = 3'600'000'000;  // keep at least an hour ...
  size_t min_ticks = 3600;             // ... and at least this many ticks ...
  size_t max_bytes = 64u << 20;        // ... unless that would pass this many bytes
};

class HistoryRing {
 public:
  explicit HistoryRing(HistoryLimits limits = {}) : limits_(limits) {}

  // Encodes and keeps the batch; evicts what the limits no longer allow. Returns the new entry
  // (valid until the next add).
  const TickEntry& add(const Batch& batch);
  // Forgets every tick, not the instances (later ticks still refer to them): for a wall clock
  // that went back, after which times would no longer be in order.
  void drop_ticks() {
    ticks_.clear();
    bytes_ = 0;
  }
  // The oldest entry whose scheduled_ts_us > since; nullptr if none.
  const TickEntry* after(int64_t since) const;
  bool empty() const { return ticks_.empty(); }
  int64_t oldest_ts_us() const { return ticks_.empty() ? 0 : ticks_.front().scheduled_ts_us; }
  int64_t newest_ts_us() const { return ticks_.empty() ? 0 : ticks_.back().scheduled_ts_us; }
  size_t size() const { return ticks_.size(); }
  size_t bytes() const { return bytes_; }
  // The encoded `instance` line of a process announced by some kept tick; nullptr if unknown.
  std::shared_ptr<const std::string> instance_line(const ProcessKey& key) const;
  // Every known instance line, oldest first by key.
  std::vector<std::shared_ptr<const std::string>> instance_lines() const;

 private:
  struct Instance {
    std::shared_ptr<const std::string> line;
    int64_t last_ts_us = 0;  // scheduled time of the latest tick referencing it
  };
  void evict();

  HistoryLimits limits_;
  std::deque<TickEntry> ticks_;
  size_t bytes_ = 0;
  std::map<ProcessKey, Instance> instances_;
};

}  // namespace kv::mon
