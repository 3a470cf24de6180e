#include "tracker.hpp"

#include <algorithm>

#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"

namespace kv::mon {

Tracker::Tracker(const ProcFs& fs, std::vector<Selector> selectors, int64_t ticks_per_s,
                 std::optional<int64_t> boot_ts_us, PssPolicy pss, CgroupCadence cgroup)
    : fs_(fs),
      sampler_(fs, ticks_per_s, pss),
      cgroups_(fs, cgroup),
      ticks_per_s_(ticks_per_s),
      boot_ts_us_(boot_ts_us),
      loadavg_(fs.open("loadavg")) {
  for (Selector& s : selectors) {
    std::string name = s.text();
    targets_.push_back(Target{std::move(s), std::move(name), {}, false, false, false});
  }
}

namespace {
bool contains(const std::vector<ProcessKey>& keys, const ProcessKey& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}
}  // namespace

void Tracker::tick(Batch& batch) {
  sampled_.clear();
  for (Target& t : targets_) {
    sample_live(t, batch);
    // Absent, or one of several processes it named has gone (e.g. one of two redis-servers
    // restarting): look for it again every tick until all are back.
    if (!t.finished && (t.live.empty() || t.live.size() < t.most_live)) {
      resolve_absent(t, batch);
    }
  }
  sample_children(batch);
  cgroups_.retain(sampled_);
  sampler_.retain(sampled_);  // close what was kept open for processes not sampled any more
}

void Tracker::sample_children(Batch& batch) {
  for (auto it = children_.begin(); it != children_.end();) {
    bool gone = false;
    add_sample(it->first, batch, &gone);
    if (!gone) {
      ++it;
      continue;
    }
    std::string msg =
        it->second.selector + ": process " + std::to_string(it->first.pid) + " exited";
    log_debug() << msg;
    batch.events.push_back(EventRecord{now_ts_us(), "child_exited", msg, it->first});
    it = children_.erase(it);
  }
  // Nothing forked since the last look (the last pid handed out is the same): only targets
  // not looked at yet need their children read. Read before looking, so a fork in between is
  // seen now or next tick.
  std::optional<int64_t> last_pid;
  if (loadavg_.read()) last_pid = parse_loadavg_last_pid(loadavg_.text());
  const bool forked = !last_pid || last_pid != last_pid_;
  last_pid_ = last_pid;
  parents_.clear();
  for (const Target& t : targets_) {
    for (const ProcessKey& parent : t.live) {
      if (!contains(parents_, parent)) parents_.push_back(parent);
      auto watch = child_watches_.find(parent);
      if (watch != child_watches_.end() && !forked) continue;
      if (watch == child_watches_.end()) {
        auto dir = fs_.open_pid(parent.pid);
        if (!dir) continue;
        watch = child_watches_.emplace(parent, ChildrenWatch(std::move(*dir))).first;
      }
      for (pid_t pid : watch->second.read()) {
        auto info = read_process_info(fs_, pid);
        if (!info || info.value().ppid != parent.pid || children_.count(info.value().key) ||
            recorded_.count(info.value().key)) {
          continue;  // gone, re-parented, already followed, or itself a target
        }
        std::string selector = "child:" + t.name;
        int64_t ts = now_ts_us();
        InstanceRecord rec = instance_record(info.value(), selector, ts);
        rec.parent = parent;
        batch.new_instances.push_back(std::move(rec));
        recorded_.insert(info.value().key);
        std::string msg = selector + ": process " + std::to_string(pid) + " (" + info.value().comm +
                          ") forked by " + std::to_string(parent.pid);
        log_debug() << msg;
        batch.events.push_back(EventRecord{ts, "child_started", msg, info.value().key});
        bool gone = false;
        add_sample(info.value().key, batch, &gone);
        if (!gone) children_.emplace(info.value().key, Child{parent, selector});
      }
    }
  }
  std::erase_if(child_watches_, [&](const auto& w) { return !contains(parents_, w.first); });
}

void Tracker::add_sample(const ProcessKey& key, Batch& batch, bool* gone, const Target* target) {
  *gone = false;
  if (contains(sampled_, key)) return;
  auto s = sampler_.sample(key);
  if (!s) {
    *gone = true;
    return;
  }
  s.value().scheduled_ts_us = batch.scheduled_ts_us;
  if (target) {  // fork children share their parent's cgroup: read it once
    cgroups_.sample(key, target->name, s.value(), batch.events);
  }
  batch.processes.push_back(std::move(s).value());
  sampled_.push_back(key);
}

void Tracker::sample_live(Target& t, Batch& batch) {
  for (auto it = t.live.begin(); it != t.live.end();) {
    bool gone = false;
    add_sample(*it, batch, &gone, &t);
    if (!gone) {
      ++it;
      continue;
    }
    std::string msg = t.name + ": process " + std::to_string(it->pid) + " exited";
    std::string cause = cgroups_.exit_cause(*it, batch.events);
    if (!cause.empty()) msg += ": " + cause;
    log_info() << msg;
    batch.events.push_back(EventRecord{now_ts_us(), "target_exited", msg, *it});
    it = t.live.erase(it);
    if (t.live.empty() && !t.selector.follows_restarts()) {
      t.finished = true;
      log_info() << t.name << ": not followed further (--pid targets are not re-resolved)";
    }
  }
}

void Tracker::resolve_absent(Target& t, Batch& batch) {
  std::vector<ProcessInfo> found = resolve(fs_, t.selector);
  std::erase_if(found, [&](const ProcessInfo& info) {  // already followed
    return std::find(t.live.begin(), t.live.end(), info.key) != t.live.end() ||
           children_.count(info.key);
  });
  if (found.empty()) {
    if (!t.live.empty()) return;  // the others are still running
    if (!t.waiting_logged) {
      log_info() << t.name << ": no such process yet; waiting for it";
      t.waiting_logged = true;
    }
    if (!t.selector.follows_restarts()) t.finished = true;  // a --pid that never existed
    return;
  }
  t.waiting_logged = false;
  int64_t ts = now_ts_us();
  bool any = false;
  for (const ProcessInfo& info : found) {
    // Sampled before anything is said of it: one that is already gone (exited since the scan)
    // is no find and no restart. The sample sits before the instance row in the batch; the
    // sink writes instances first.
    bool gone = false;
    const size_t events_before = batch.events.size();
    add_sample(info.key, batch, &gone, &t);
    if (gone) continue;
    any = true;
    t.live.push_back(info.key);
    if (!recorded_.count(info.key)) {
      batch.new_instances.push_back(instance_record(info, t.name, ts));
      recorded_.insert(info.key);
    }
    const char* kind = t.ever_found ? "target_restarted" : "target_found";
    std::string msg = t.name + ": process " + std::to_string(info.key.pid) +
                      (t.ever_found ? " (re)started" : " found") + " (" + info.comm + ")";
    log_info() << msg;
    batch.events.push_back(EventRecord{ts, kind, msg, info.key});
    // said before what the sample found (its cgroup)
    std::rotate(batch.events.begin() + static_cast<ptrdiff_t>(events_before),
                batch.events.end() - 1, batch.events.end());
  }
  if (!any) {
    if (!t.selector.follows_restarts() && t.live.empty()) t.finished = true;
    return;
  }
  t.ever_found = true;
  t.most_live = std::max(t.most_live, t.live.size());
}

InstanceRecord Tracker::instance_record(const ProcessInfo& info, const std::string& selector,
                                        int64_t ts_us) const {
  InstanceRecord r;
  r.key = info.key;
  r.name = info.comm;
  r.command_line = sampler_.command_line(info.key.pid);
  r.selector = selector;
  r.first_seen_ts_us = ts_us;
  OptInt since_boot_us = ticks_to_us(info.key.start_ticks, ticks_per_s_);
  int64_t started = 0;
  if (boot_ts_us_ && since_boot_us &&
      !__builtin_add_overflow(*boot_ts_us_, *since_boot_us, &started)) {
    r.started_ts_us = started;
  }
  return r;
}

}  // namespace kv::mon
