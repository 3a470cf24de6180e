// The verdicts of sets a pipelined memcached text-protocol phase cannot see, checked from
// outside the phase.
#pragma once

#include <cstdint>
#include <string>

#include "engine/phase_runner.hpp"
#include "kvbench/sqlite.hpp"
#include "results/results_writer.hpp"
#include "store/memcached_probe.hpp"
#include "store/target_uri.hpp"
#include "workload/workload.hpp"

namespace kv::drive {

// A pipelined memcached text-protocol phase does not see each set's verdict: libmemcached reads
// a batch's set replies but keeps only the last, so a set the server refused (out of memory,
// too large, read-only, masked command) counts as ok. Until the request engine reads every
// reply, such a phase is checked from outside: the server's own counters (cmd_set,
// store_no_memory, store_too_large) before and after, exact when kvdrive was its only writer;
// for a server without them, a load phase's keys are read back in a sample. What is found is a
// warning and a `set_verdicts_unseen` event.
class UnseenSetCheck {
 public:
  // Reads the counters before the phase when the phase is one that needs checking (never when
  // reads_every_reply: the event-loop engine judges each set's own reply).
  UnseenSetCheck(const TargetSpec& spec, const WorkloadSpec& w, PhaseKind kind, int64_t timeout_us,
                 bool reads_every_reply = false);

  // What to say once the phase has sent `sent` sets (empty: nothing found, or not checked).
  // *refused_exactly: how many of them the server refused, when its counters say so exactly.
  std::string after(const std::string& label, uint64_t sent, uint64_t abandoned,
                    uint64_t* refused_exactly);

 private:
  const TargetSpec& spec_;
  const WorkloadSpec& w_;
  PhaseKind kind_;
  int64_t timeout_us_;
  bool active_ = false;
  MemcachedSetCounters before_;
  bool have_before_ = false;
};

// After a phase that was not interrupted: asks `check` about the phase's sets (their figures
// read from its rows), warns and writes a `set_verdicts_unseen` event when it found something.
// When every set counted ok was refused, each second's sets become errors, exactly (a partial
// refusal cannot be placed in its seconds, and is left to the event), and a phase left with no
// ok request at all fails as the collector would have said.
void record_unseen_sets(UnseenSetCheck& check, Database& db, ResultsWriter& writer, int64_t run_id,
                        int64_t phase_id, const std::string& label, uint64_t abandoned,
                        PhaseResult& result);

}  // namespace kv::drive
