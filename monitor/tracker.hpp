// Follows the targets from tick to tick: resolves selectors, samples each live instance, and
// notices exits, restarts and reused pids. Produces a Batch per tick; knows nothing of timers
// or SQLite, so tests drive it over fixture /proc trees. One thread owns a Tracker.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "cgroup.hpp"
#include "procfs.hpp"
#include "records.hpp"
#include "samplers.hpp"
#include "targets.hpp"

namespace kv::mon {

class Tracker {
 public:
  // cgroup: how often a target's cgroup files that change slowly are read (see CgroupCadence).
  Tracker(const ProcFs& fs, std::vector<Selector> selectors, int64_t ticks_per_s,
          std::optional<int64_t> boot_ts_us, PssPolicy pss = {}, CgroupCadence cgroup = {});

  // Samples every live target into `batch` (new instances, samples, events), stamping samples
  // with batch.scheduled_ts_us. Re-resolves absent targets that follow restarts.
  void tick(Batch& batch);
  // The text of /proc/loadavg as the last tick read it (empty if it could not be read), for
  // the host sample of the same tick.
  std::string_view loadavg_text() const { return loadavg_.text(); }
  // Readable when a watched cgroup events file changed (-1: none can be watched); then
  // on_cgroup_notify() appends the events, stamped with the time they were read.
  int cgroup_notify_fd() const { return cgroups_.notify_fd(); }
  void on_cgroup_notify(std::vector<EventRecord>& events) { cgroups_.on_notify(events); }
  // --psi-trigger cgroup:...: set on each target's cgroup (CgroupSampler::set_psi_triggers).
  void set_cgroup_psi_triggers(std::vector<PsiTriggerSpec> specs) {
    cgroups_.set_psi_triggers(std::move(specs));
  }
  std::vector<CgroupSampler::PsiTriggerView> cgroup_psi_triggers() const {
    return cgroups_.psi_triggers();
  }
  uint64_t cgroup_psi_generation() const { return cgroups_.psi_generation(); }
  // The cgroup directories of a followed process (for tests and logs); empty if none.
  std::string cgroup_of(const ProcessKey& key) const { return cgroups_.describe(key); }

 private:
  struct Target {
    Selector selector;
    std::string name;  // selector.text(), made once: a tick builds no string for it
    std::vector<ProcessKey> live;
    bool ever_found = false;
    bool finished = false;  // a --pid target that exited
    bool waiting_logged = false;
    size_t most_live = 0;  // the most processes it named at once
  };
  // Samples the fork children of live targets: known ones until they exit, new ones as
  // instances whose parent is the target.
  void sample_children(Batch& batch);
  void sample_live(Target& t, Batch& batch);
  void resolve_absent(Target& t, Batch& batch);
  // `target`: the target it is sampled for (its cgroup is read too); nullptr for fork children.
  void add_sample(const ProcessKey& key, Batch& batch, bool* gone, const Target* target = nullptr);
  InstanceRecord instance_record(const ProcessInfo& info, const std::string& selector,
                                 int64_t ts_us) const;

  const ProcFs& fs_;
  ProcessSampler sampler_;
  CgroupSampler cgroups_;
  std::vector<Target> targets_;
  int64_t ticks_per_s_;
  std::optional<int64_t> boot_ts_us_;
  std::set<ProcessKey> recorded_;  // instances already in the database
  // This tick's sampled processes (one named by two selectors is sampled once) and the live
  // targets whose children were looked at: a handful each, kept between ticks so a tick
  // allocates no node for them.
  std::vector<ProcessKey> sampled_, parents_;
  struct Child {
    ProcessKey parent;
    std::string selector;  // "child:" + the parent's selector
  };
  std::map<ProcessKey, Child> children_;
  std::map<ProcessKey, ChildrenWatch> child_watches_;  // of live targets, kept open
  // /proc/loadavg's last pid: while it stays the same nothing has forked, and the children of
  // targets already looked at are not read again.
  OpenFile loadavg_;
  std::optional<int64_t> last_pid_;
};

}  // namespace kv::mon
