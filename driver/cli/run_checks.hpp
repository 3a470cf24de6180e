// What `kvdrive run` checks of its options before anything starts, beyond their syntax: each
// throws UsageError with one line naming the options and what to do (exit 2, nothing written).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/target_uri.hpp"
#include "workload/scenario.hpp"
#include "workload/workload.hpp"

namespace kv::drive {

// --value-size x --pipeline x --connections x --threads (x --processes) above the machine's
// memory.
void check_bytes_in_flight(const WorkloadSpec& w, int processes);
// A memcached target's --ttl above 30 days (memcached would read it as a Unix time).
void check_memcached_ttl(const std::vector<TargetSpec>& specs, const std::vector<RunStep>& steps);
// --mix prepend, gets or cas against a Redis target (memcached only); --command against
// memcached.
void check_mix_commands(const std::vector<TargetSpec>& specs, const std::vector<RunStep>& steps);
// The file descriptors the run needs: raises the soft limit to them, or refuses above the hard.
void check_descriptors(const std::vector<TargetSpec>& specs, const std::vector<RunStep>& steps);
// --wire-start kernel with a TLS target.
void check_wire_start(const std::vector<TargetSpec>& specs, const std::vector<RunStep>& steps);
// --trace: reads the trace once (every line checked, its requests and ops counted into
// w.trace); a file that cannot be read, a line that does not parse or no request to replay is
// a UsageError naming the file and line.
void scan_replay(WorkloadSpec& w);
// --start-at's value as wall time (µs since the epoch): UTC YYYY-MM-DDTHH:MM:SS[.fff]Z,
// @EPOCH-SECONDS or +DURATION from now_us, in the next 7 days; throws UsageError.
int64_t parse_start_at(const std::string& text, int64_t now_us);

}  // namespace kv::drive
