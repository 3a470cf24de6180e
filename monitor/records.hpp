// Plain structs that cross module boundaries: what the samplers produce and the sink stores,
// one Batch per tick. Every std::optional that is empty is stored as NULL. The samples
// themselves (ProcessSample, HostSample, DiskStat) and their columns are in kvbench/samples.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvbench/samples.hpp"

namespace kv::mon {

// A process seen for the first time: becomes a process_instances row.
struct InstanceRecord {
  ProcessKey key;
  std::optional<ProcessKey> parent;  // set for fork children of a target
  OptInt started_ts_us;
  std::string name;
  std::string command_line;
  std::string selector;
  int64_t first_seen_ts_us = 0;
};

struct EventRecord {
  int64_t ts_us = 0;
  std::string kind;  // target_found, target_exited, target_restarted, samples_dropped, ...
  std::string message;
  std::optional<ProcessKey> instance;
};

// Everything one tick produced, written in one transaction.
struct Batch {
  int64_t scheduled_ts_us = 0;
  std::vector<InstanceRecord> new_instances;
  std::vector<ProcessSample> processes;
  std::optional<HostSample> host;
  std::vector<EventRecord> events;

  // Empty again, its vectors' capacity kept (the writer hands stored batches back for reuse).
  void clear() {
    scheduled_ts_us = 0;
    new_instances.clear();
    processes.clear();
    host.reset();
    events.clear();
  }
};

}  // namespace kv::mon
