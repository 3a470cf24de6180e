// `kvdrive run --processes N`: every process starts each phase at one instant. Before a phase a
// process says "ready T P" (target ordinal, phase ordinal) to the group's parent and waits; once
// every process still running has said it, the parent answers each "go TS" (TS: a wall time
// kGoLeadUs ahead) and each process sleeps until its clock reads TS, so the group's phase
// windows are one window, not N drifting ones. A process that has ended (its pipe closed) is
// not waited for. In a --search group the same lines line up the phases before the steps (the
// load) over the search's pipes (search/search_group.hpp); its steps start on the rate line.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace kv::drive {

// The process's side, on the two descriptors the parent gave it (--phase-barrier IN,OUT).
// Returns false when `stop` was set while waiting (a Ctrl-C: the run ends interrupted). A parent
// that is gone (EOF) lets every later phase start at once, with one warning.
bool wait_phase_barrier(int in_fd, int out_fd, int target_ordinal, int phase_ordinal,
                        const std::atomic<bool>& stop);

// The parent's side: one member per process, fed from the parent's wait loop.
class PhaseBarrierLeader {
 public:
  PhaseBarrierLeader() = default;
  PhaseBarrierLeader(const PhaseBarrierLeader&) = delete;
  PhaseBarrierLeader& operator=(const PhaseBarrierLeader&) = delete;
  ~PhaseBarrierLeader();
  // The parent's ends of a process's pipes: what it reads from, what it writes to. Owned here.
  void add(int from_child, int to_child);
  // Reads what the processes said, waiting up to timeout_ms for it, and releases a phase once
  // every member still there is ready.
  void poll(int timeout_ms);
  bool empty() const { return members_.empty(); }

 private:
  struct Member {
    int from = -1, to = -1;
    std::string pending;  // bytes of a line not yet whole
    bool ready = false;   // said "ready" and waits for its "go"
    bool gone = false;
  };
  void drop(Member& m);
  std::vector<Member> members_;
};

}  // namespace kv::drive
