// The workload's options by name ("keys", "value-size", ...): one table shared by the command
// line, config files and scenario files, so each is parsed and checked in one place.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "workload/workload.hpp"

namespace kv::drive {

// The largest --keys: 2^32, the most keys a Redis instance holds (its documented limit); a
// memcached server of that many items needs hundreds of GiB. Beyond it nothing kvdrive sends
// could be served, and key indexes near 2^53 would lose precision in the gaussian and zipf
// choosers (doubles).
inline constexpr uint64_t kMaxKeys = uint64_t{1} << 32;
// The largest --requests: 10^15 (30 years at 1M req/s); counts stay exact in doubles (2^53)
// and in the results file's int64 columns.
inline constexpr uint64_t kMaxRequests = 1'000'000'000'000'000;
// The most keys of one mget (--multi-key-get): 1000 keys of up to 250 bytes make a 250 KB get
// line, which memcached reads in pieces (it allows long get lines, and only those).
inline constexpr uint32_t kMaxMultiKeys = 1000;

struct WorkloadOption {
  const char* name;  // as on the command line, without "--"
  const char* help;
  const char* default_text;  // as --help shows it: "100000", "none: closed loop"
  bool flag;                 // takes no value on the command line ("verify")
};

// Every workload option, in --help order.
const std::vector<WorkloadOption>& workload_options();
// Sets one option from its text. Throws UsageError naming the option and the value
// (or "unknown option" for a name not in workload_options()).
void set_workload_option(WorkloadSpec& w, std::string_view name, std::string_view value);
// Checks how the options combine (threads vs keys, rate vs pipelining, warm-up vs duration:
// the warm-up is within --duration unless `warmup_added`, as in a --search step, where
// --duration is the measured time after it). Throws UsageError.
void check_workload(const WorkloadSpec& w, bool warmup_added = false);
// Shrinks (or grows) key counts, request counts and durations by `factor`, keeping at least
// one key per thread, one request and one second.
void scale_workload(WorkloadSpec& w, double factor);

}  // namespace kv::drive
