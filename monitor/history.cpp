#include "history.hpp"

#include <algorithm>

namespace kv::mon {

using proto::Message;

Message instance_message(const InstanceRecord& r) {
  Message m("instance");
  m.add("pid", static_cast<int64_t>(r.key.pid)).add("start_ticks", r.key.start_ticks);
  if (r.parent) {
    m.add("parent_pid", static_cast<int64_t>(r.parent->pid));
    m.add("parent_start_ticks", r.parent->start_ticks);
  }
  m.add("started_ts_us", r.started_ts_us).add("name", r.name).add("command_line", r.command_line);
  m.add("selector", r.selector).add("first_seen_ts_us", r.first_seen_ts_us);
  return m;
}

Message process_message(const ProcessSample& s) {
  Message m("proc");
  m.add("pid", static_cast<int64_t>(s.key.pid)).add("start_ticks", s.key.start_ticks);
  m.add("ts_us", s.ts_us).add("scheduled_ts_us", s.scheduled_ts_us);
  m.add("rss_kib", s.rss_kib).add("rss_anon_kib", s.rss_anon_kib);
  m.add("rss_file_kib", s.rss_file_kib).add("rss_shmem_kib", s.rss_shmem_kib);
  m.add("swap_kib", s.swap_kib).add("vsize_kib", s.vsize_kib);
  m.add("cpu_user_us", s.cpu_user_us).add("cpu_system_us", s.cpu_system_us);
  m.add("threads", s.threads).add("fds", s.fds);
  m.add("io_read_bytes", s.io_read_bytes).add("io_write_bytes", s.io_write_bytes);
  m.add("minor_faults", s.minor_faults).add("major_faults", s.major_faults);
  m.add("ctx_voluntary", s.ctx_voluntary).add("ctx_involuntary", s.ctx_involuntary);
  m.add("pss_kib", s.pss_kib);
  return m;
}

Message host_message(const HostSample& h) {
  Message m("host");
  m.add("ts_us", h.ts_us).add("scheduled_ts_us", h.scheduled_ts_us);
  m.add("load1", h.load1).add("load5", h.load5).add("load15", h.load15);
  m.add("mem_total_kib", h.mem_total_kib).add("mem_available_kib", h.mem_available_kib);
  m.add("swap_total_kib", h.swap_total_kib).add("swap_free_kib", h.swap_free_kib);
  m.add("pswpin", h.pswpin).add("pswpout", h.pswpout).add("pgmajfault", h.pgmajfault);
  m.add("cpu_user_ticks", h.cpu_user_ticks).add("cpu_system_ticks", h.cpu_system_ticks);
  m.add("cpu_iowait_ticks", h.cpu_iowait_ticks).add("cpu_steal_ticks", h.cpu_steal_ticks);
  m.add("cpu_idle_ticks", h.cpu_idle_ticks);
  m.add("psi_memory_some_avg10", h.psi_memory_some_avg10);
  m.add("psi_memory_full_avg10", h.psi_memory_full_avg10);
  m.add("psi_io_some_avg10", h.psi_io_some_avg10).add("psi_io_full_avg10", h.psi_io_full_avg10);
  m.add("psi_cpu_some_avg10", h.psi_cpu_some_avg10);
  return m;
}

Message disk_message(int64_t ts_us, const DiskStat& d) {
  Message m("disk");
  m.add("ts_us", ts_us).add("device", d.device).add("reads", d.reads).add("writes", d.writes);
  m.add("sectors_read", d.sectors_read).add("sectors_written", d.sectors_written);
  m.add("io_ms", d.io_ms);
  return m;
}

Message event_message(const EventRecord& e) {
  Message m("event");
  m.add("ts_us", e.ts_us).add("kind", e.kind).add("msg", e.message);
  if (e.instance) {
    m.add("pid", static_cast<int64_t>(e.instance->pid)).add("start_ticks", e.instance->start_ticks);
  }
  return m;
}

TickEntry encode_tick(const Batch& batch) {
  TickEntry entry;
  entry.scheduled_ts_us = batch.scheduled_ts_us;
  std::string lines;
  for (const ProcessSample& s : batch.processes) {
    lines += proto::encode(process_message(s));
    entry.instances.push_back(s.key);
  }
  if (batch.host) {
    lines += proto::encode(host_message(*batch.host));
    for (const DiskStat& d : batch.host->disks) lines += proto::encode(disk_message(batch.host->ts_us, d));
  }
  for (const EventRecord& e : batch.events) {
    lines += proto::encode(event_message(e));
    if (e.instance) entry.instances.push_back(*e.instance);
  }
  lines += proto::encode(Message("tick").add("scheduled_ts_us", batch.scheduled_ts_us));
  std::sort(entry.instances.begin(), entry.instances.end());
  entry.instances.erase(std::unique(entry.instances.begin(), entry.instances.end()),
                        entry.instances.end());
  // Built by appending, so its capacity can be up to twice its size: the ring keeps an hour of
  // these, so give the slack back (at 1 Hz: 1.77 KiB a tick held instead of 1.1 KiB).
  lines.shrink_to_fit();
  entry.lines = std::make_shared<const std::string>(std::move(lines));
  return entry;
}

const TickEntry& HistoryRing::add(const Batch& batch) {
  for (const InstanceRecord& r : batch.new_instances) {
    Instance& inst = instances_[r.key];
    inst.line = std::make_shared<const std::string>(proto::encode(instance_message(r)));
    inst.last_ts_us = batch.scheduled_ts_us;
  }
  TickEntry entry = encode_tick(batch);
  for (const ProcessKey& key : entry.instances) instances_[key].last_ts_us = entry.scheduled_ts_us;
  bytes_ += entry.lines->size();
  ticks_.push_back(std::move(entry));
  evict();
  return ticks_.back();
}

void HistoryRing::evict() {
  // The newest tick is always kept, whatever its size.
  while (ticks_.size() > 1) {
    const TickEntry& old = ticks_.front();
    bool over_bytes = bytes_ > limits_.max_bytes;
    bool expendable = ticks_.size() > limits_.min_ticks &&
                      old.scheduled_ts_us < newest_ts_us() - limits_.min_age_us;
    if (!over_bytes && !expendable) break;
    bytes_ -= old.lines->size();
    ticks_.pop_front();
  }
  int64_t oldest = oldest_ts_us();
  std::erase_if(instances_, [&](const auto& kv) { return kv.second.last_ts_us < oldest; });
}

const TickEntry* HistoryRing::after(int64_t since) const {
  auto it = std::upper_bound(ticks_.begin(), ticks_.end(), since,
                             [](int64_t ts, const TickEntry& e) { return ts < e.scheduled_ts_us; });
  return it == ticks_.end() ? nullptr : &*it;
}

std::shared_ptr<const std::string> HistoryRing::instance_line(const ProcessKey& key) const {
  auto it = instances_.find(key);
  return it == instances_.end() ? nullptr : it->second.line;
}

std::vector<std::shared_ptr<const std::string>> HistoryRing::instance_lines() const {
  std::vector<std::shared_ptr<const std::string>> out;
  for (const auto& [key, inst] : instances_) {
    if (inst.line) out.push_back(inst.line);
  }
  return out;
}

}  // namespace kv::mon
