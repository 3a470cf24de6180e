#include "engine/loop/event_user.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

#include "engine/loop/event_client.hpp"
#include "engine/loop/event_link.hpp"
#include "engine/loop/event_loop.hpp"

namespace kv::drive::loop {

void User::finish() {
  if (finished) return;
  finished = true;
  --worker.unfinished;
}

void User::drop_due(int64_t now) {
  if (finished) return;
  const WorkerContext& ctx = worker.ctx;
  if (open_loop && !ctx.stop.load(std::memory_order_relaxed)) {
    const int64_t due_by = std::min(worker.end_ns, now);
    std::array<uint64_t, kOpTypes> dropped{};
    if (worker.feed) worker.feed->drop_due(local, due_by - ctx.start_ns, dropped);
    for (; !worker.feed && next < share && schedule.at(next) < due_by; ++next) {
      OpType op = OpType::get;
      uint64_t key = 0;
      if (!picker.pick(next, &op, &key)) break;
      ++dropped[static_cast<size_t>(op)];
    }
    for (OpType op : kAllOps)
      if (dropped[static_cast<size_t>(op)] > 0)
        ctx.slot.add_dropped(op, dropped[static_cast<size_t>(op)]);
  }
  finish();
}

void User::backfill(uint64_t key) {
  if (finished || backfill_count == backfills.size()) return;  // nothing more leaves
  backfills[(backfill_head + backfill_count++) % backfills.size()] = key;
}

void User::remember_cas(uint64_t key, uint64_t unique) {
  if (uniques.empty()) return;
  uniques[(unique_head + unique_count) % uniques.size()] = {key, unique};
  if (unique_count < uniques.size())
    ++unique_count;
  else
    unique_head = (unique_head + 1) % uniques.size();  // the oldest overwritten
}

void User::take_cas(Pending& p) {
  p.cas = kNoCasUnique;
  if (unique_count == 0) return;
  const CasUnique& newest = uniques[(unique_head + --unique_count) % uniques.size()];
  p.key = newest.key;
  p.cas = newest.unique;
}

void User::refill(int64_t now) {
  const WorkerContext& ctx = worker.ctx;
  const WorkloadSpec& w = ctx.workload;
  while (!finished && !has_held && inflight < static_cast<size_t>(w.pipeline)) {
    Pending p{};
    if (backfill_count > 0 && !worker.stopping(now)) {
      // A cache client's set after its get missed: now, ahead of the stream's next request,
      // outside its count and schedule (latency from now: it was never due).
      p.op = OpType::backfill;
      p.key = backfills[backfill_head];
      backfill_head = (backfill_head + 1) % backfills.size();
      --backfill_count;
      p.queued_ns = worker.now();
    } else if (!(worker.feed ? pick_traced(now, p) : pick_scheduled(now, p))) {
      return;
    }
    if (!send_picked(p)) return;
  }
}

bool User::pick_scheduled(int64_t& now, Pending& p) {
  if (next >= share) {
    finish();
    return false;
  }
  if (held_back(now)) return false;
  const int64_t intended = schedule.at(next);
  if (!due(intended, now)) return false;
  if (!picker.pick(next, &p.op, &p.key)) {
    finish();
    return false;
  }
  ++next;
  queue(intended, now, p);
  return true;
}

bool User::pick_traced(int64_t& now, Pending& p) {
  TraceFeed& feed = *worker.feed;
  if (held_back(now)) return false;
  const TraceItem* item = nullptr;
  switch (feed.peek(local, now - worker.ctx.start_ns, &item)) {
    case TraceFeed::Next::end:
      finish();
      return false;
    case TraceFeed::Next::later:  // recorded: the next second's read; fast: others send first
      worker.schedule_wake(
          this, feed.recorded() ? worker.ctx.start_ns + feed.read_next_at() : now + kTraceRetryNs);
      return false;
    case TraceFeed::Next::item:
      break;
  }
  const int64_t intended = open_loop ? worker.ctx.start_ns + item->due_ns : 0;
  if (!due(intended, now)) return false;
  p.op = item->op;
  p.key = item->key;
  p.value_size = item->value_size;
  p.ttl_s = item->ttl_s;
  p.key_size = std::max<uint8_t>(item->key_size, 1);
  feed.pop(local);
  queue(intended, now, p);
  return true;
}

bool User::held_back(int64_t now) {
  if (worker.stopping(now)) {
    drop_due(now);
    return true;
  }
  if (now < pause_until) {
    worker.schedule_wake(this, pause_until);
    return true;
  }
  return false;
}

bool User::due(int64_t intended, int64_t& now) {
  if (open_loop) return wait_until(intended, now);
  if (now < worker.end_ns) return true;
  finish();
  return false;
}

bool User::wait_until(int64_t intended, int64_t& now) {
  if (intended >= worker.end_ns) {
    worker.waits_for_end = true;
    finish();
    return false;
  }
  if (intended > now) {
    now = worker.now();
    if (intended > now) {
      worker.schedule_wake(this, intended);
      return false;
    }
  }
  return true;
}

void User::queue(int64_t intended, int64_t now, Pending& p) {
  p.intended_ns = intended;
  p.queued_ns = intended != 0 ? worker.now() : now;
  if (intended != 0 && intended < p.queued_ns)
    p.queue_ns = std::min(full_since(intended), p.queued_ns - intended);
}

bool User::send_picked(Pending& p) {
  if (p.op == OpType::cas) take_cas(p);
  if (p.key_size == 0) {  // not a replay's: the workload's size and TTL for the key
    const WorkerContext& ctx = worker.ctx;
    p.value_size =
        static_cast<uint32_t>(ctx.workload.values_of(ctx.plan.kind, p.op).size_for(p.key));
    p.ttl_s = worker.ctx.workload.ttl.ttl_for(p.key);
  }
  std::string_view key = keys.format(p.key, p.key_size);
  const std::string_view value = value_of(worker.ctx, p);
  Link& l = worker.router ? *link_to_node(p.op != OpType::get ? worker.router->node_for(key)
                                                              : worker.router->node_for_read(key))
                          : *links[place(key, p.queued_ns)];
  if (p.op == OpType::mget || p.op == OpType::mset)
    key = request_keys(p);  // and its bytes_out
  else
    p.bytes_out = key.size() + value.size();
  if (l.state() != Link::State::up && l.in_pool()) {
    to_pool(l, p);
    return true;
  }
  return dispatch(l, p, key, value);
}

bool User::dispatch(Link& l, const Pending& p, std::string_view key, std::string_view value) {
  switch (l.state()) {
    case Link::State::up:
      l.send(this, p, key, value);
      ++inflight;
      ++worker.busy;
      if (open_loop && inflight == static_cast<size_t>(worker.ctx.workload.pipeline))
        full_start = p.queued_ns;
      return true;
    case Link::State::down:
      if (p.queued_ns < l.retry_at()) {
        // Its server is down and not to be retried yet: the request fails at once, and the
        // next one waits 10 ms (a dead store is not spun on).
        record_reply(worker.ctx, p, OpStatus::error, {}, p.queued_ns);
        pause_until = p.queued_ns + kFailPauseNs;
        return true;
      }
      hold(l, p);
      l.start_connect(p.queued_ns);
      return false;
    case Link::State::connecting:
      hold(l, p);
      return false;
  }
  return true;
}

void User::hold(Link& l, const Pending& p) {
  // Nothing else is sent while it is held: requests due meanwhile wait for the store (its
  // connection), as behind a full window.
  if (open_loop && full_start < 0) full_start = p.queued_ns;
  has_held = true;
  held = p;
  held_link = &l;
  ++worker.busy;
  l.wait_for_connect(this);
}

void User::to_pool(Link& l, const Pending& p) {
  const int64_t now = p.queued_ns;
  Worker::PoolServer& s = worker.pool_server(l.server());
  if (s.backoff_ns == 0) {  // it answered its last connect: this link reconnects
    ++inflight;
    ++worker.busy;
    if (open_loop && inflight == static_cast<size_t>(worker.ctx.workload.pipeline))
      full_start = now;
    l.park(this, p, now);
    return;
  }
  probe(l, now);
  record_reply(worker.ctx, p, OpStatus::error, {}, now);
  worker.ctx.slot.add_pool(l.server(), PoolCount::failed_fast);
  if (inflight == 0 && !any_link_up()) pause_until = now + kFailPauseNs;  // no live member
}

void User::probe(Link& l, int64_t now) {
  Worker::PoolServer& s = worker.pool_server(l.server());
  if (s.probing || now < s.retry_at || l.state() != Link::State::down) return;
  s.probing = true;  // the probe: no request waits on it
  worker.ctx.slot.add_pool(l.server(), PoolCount::probes);
  l.start_connect(now);
}

size_t User::place(std::string_view key, int64_t now) {
  const size_t home = client.server_for(key);
  if (!worker.ejected(home)) return home;
  probe(*links[home], now);  // nothing is sent to it: the probes alone look for it
  const size_t to = worker.live_server_for(key);
  if (to == SIZE_MAX) return home;  // every server is ejected: its requests fail at once
  worker.ctx.slot.add_pool(to, PoolCount::rehashed);
  return to;
}

bool User::any_link_up() const {
  return std::any_of(links.begin(), links.end(),
                     [](const Link* l) { return l->state() == Link::State::up; });
}

int64_t User::full_since(int64_t intended) {
  while (!full_spans.empty() && full_spans.front().end <= intended) {
    full_before = full_spans.front().cum_end;
    full_spans.pop_front();
  }
  int64_t at_intended = full_before;  // full time up to `intended`
  if (!full_spans.empty() && full_spans.front().start < intended)
    at_intended = full_spans.front().cum_end - (full_spans.front().end - intended);
  return full_total - at_intended;
}

void User::done(int64_t now, int64_t freed_at) {
  close_full(freed_at != 0 ? freed_at : now);
  --inflight;
  --worker.busy;
  refill(now);
}

void User::send_held(int64_t now) {
  has_held = false;
  if (worker.ctx.stop.load(std::memory_order_relaxed)) {  // Ctrl-C came first: never sent
    close_full(now);
    --worker.busy;
    return;
  }
  const std::string_view key = request_keys(held);
  const std::string_view value = value_of(worker.ctx, held);
  held_link->send(this, held, key, value);
  ++inflight;  // busy was counted when it was held
  // The window stays full (its span, opened by hold(), goes on) or has room again.
  if (!open_loop) return;
  if (inflight < static_cast<size_t>(worker.ctx.workload.pipeline))
    close_full(now);
  else if (full_start < 0)
    full_start = now;
}

void User::close_full(int64_t end) {
  if (full_start < 0) return;
  end = std::max(end, full_start);
  full_total += end - full_start;
  full_spans.push_back(FullSpan{full_start, end, full_total});
  full_start = -1;
}

std::string_view User::request_keys(Pending& p) {
  const std::string_view first = keys.format(p.key, p.key_size);
  if (p.op != OpType::mget && p.op != OpType::mset) return first;
  const WorkerContext& ctx = worker.ctx;
  const bool set = p.op == OpType::mset;
  const ValueSizes& sizes = ctx.workload.values_of(ctx.plan.kind, p.op);
  p.bytes_out = 0;  // its keys and (an mset's) values, not the spaces between the keys
  const auto add_value = [&](uint64_t key) {
    if (!set) return;
    multi_values.push_back(ctx.values.value_for(key, sizes.size_for(key)));
    p.bytes_out += multi_values.back().size();
  };
  const uint32_t want = ctx.workload.multi_key_get;
  multi_keys.assign(first);
  multi_values.clear();
  add_value(p.key);
  const bool pool = client.servers() > 1;
  const size_t home = pool ? client.server_for(multi_keys) : 0;
  uint32_t n = 1;
  for (uint32_t draws = 0; n < want && draws < want * kMultiKeyDraws; ++draws) {
    const uint64_t key = set ? picker.next_set_key() : picker.next_get_key();
    const std::string_view k = keys.format(key);
    if (pool && client.server_for(k) != home) continue;
    multi_keys += ' ';
    multi_keys += k;
    add_value(key);
    ++n;
  }
  p.key_count = static_cast<uint16_t>(n);
  p.bytes_out += multi_keys.size() - (n - 1);
  return multi_keys;
}

Link* User::link_to_node(int node) {
  if (node < 0) return links[0];  // a slot without a master: its node's error says so
  const auto i = static_cast<size_t>(node);
  if (i < node_links.size() && node_links[i]) return node_links[i];
  const size_t server = client.server_index(worker.router->nodes()[i]);
  while (links.size() <= server) links.push_back(worker.add_link(client, links.size()));
  if (node_links.size() <= i) node_links.resize(i + 1, nullptr);
  node_links[i] = links[server];
  return links[server];
}

void User::redirect(const Pending& p, int node, bool asking, uint8_t redirects, int64_t now) {
  worker.ctx.slot.add_redirect(asking);
  if (worker.ctx.stop.load(std::memory_order_relaxed)) {  // Ctrl-C: not sent again
    --inflight;
    --worker.busy;
    return;
  }
  if (redirects >= kMaxRedirects) {
    record_reply(worker.ctx, p, OpStatus::error, {}, now);
    done(now);
    return;
  }
  link_to_node(node)->resend(this, p, asking, static_cast<uint8_t>(redirects + 1), now);
}

void User::fail_held(int64_t now) {
  close_full(now);
  has_held = false;
  --worker.busy;
  record_reply(worker.ctx, held, OpStatus::error, {}, now);
  pause_until = now + kFailPauseNs;
}

}  // namespace kv::drive::loop
