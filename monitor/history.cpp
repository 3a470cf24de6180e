#include "history.hpp"

#include <algorithm>

#include "kvbench/samples.hpp"

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

// The fields after the identity and times come from the sample's field table
// (kvbench/samples.hpp), in its order.
Message process_message(const ProcessSample& s) {
  Message m(kProcessTable.verb);
  m.add("pid", static_cast<int64_t>(s.key.pid)).add("start_ticks", s.key.start_ticks);
  m.add("ts_us", s.ts_us).add("scheduled_ts_us", s.scheduled_ts_us);
  add_fields(m, kProcessTable, s);
  return m;
}

Message host_message(const HostSample& h) {
  Message m(kHostTable.verb);
  m.add("ts_us", h.ts_us).add("scheduled_ts_us", h.scheduled_ts_us);
  add_fields(m, kHostTable, h);
  return m;
}

Message disk_message(int64_t ts_us, const DiskStat& d) {
  Message m(kDiskTable.verb);
  m.add("ts_us", ts_us);
  add_fields(m, kDiskTable, d);
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
    for (const DiskStat& d : batch.host->disks)
      lines += proto::encode(disk_message(batch.host->ts_us, d));
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
