#include "engine/trace_feed.hpp"

#include <algorithm>

namespace kv::drive {

TraceFeed::TraceFeed(const TraceReplay& spec, uint64_t first, size_t streams, uint64_t stream_count,
                     uint64_t limit, bool redis)
    : spec_(spec),
      reader_(spec.path),
      first_(first),
      stream_count_(std::max<uint64_t>(stream_count, 1)),
      limit_(limit),
      redis_(redis),
      queues_(streams) {}

bool TraceFeed::next_record() {
  if (limit_ > 0 && kept_ >= limit_) return false;
  try {
    const auto r = reader_.next();
    if (!r) return false;
    rec_ = *r;
  } catch (const TraceError& e) {
    error_ = e.what();
    return false;
  }
  rec_id_ = trace_key_id(rec_.key);
  rec_ordinal_ = ordinal_++;
  return true;
}

std::optional<std::pair<size_t, TraceItem>> TraceFeed::item_of_record() {
  const std::optional<uint64_t> id = scaled_key(rec_id_, rec_ordinal_, spec_.keys_scale);
  if (!id) return std::nullopt;
  ++kept_;
  const uint64_t stream = *id % stream_count_;
  if (stream < first_ || stream - first_ >= queues_.size()) return std::nullopt;
  TraceItem t;
  t.op = replay_op(rec_.op, redis_);
  const bool counter = op_on_counter(t.op) || (spec_.counters && spec_.counters->count(*id) > 0);
  t.key = counter ? *id | kCounterKey : *id;
  t.value_size = std::min(rec_.value_size, kTraceMaxValue);
  t.ttl_s = static_cast<uint32_t>(std::min<int64_t>(rec_.ttl_s, UINT32_MAX));
  t.key_size = static_cast<uint8_t>(std::min<uint64_t>(rec_.key_size, kMaxKeySize));
  return std::make_pair(static_cast<size_t>(stream - first_), t);
}

void TraceFeed::push(size_t s, const TraceItem& t) {
  queues_[s].push_back(t);
  ++buffered_;
}

bool TraceFeed::read_second() {
  if (ended_) return false;
  if (!have_rec_ && !next_record()) {
    ended_ = true;
    return false;
  }
  if (second_ < 0) ts0_ = rec_.ts_s;
  second_ = std::max(second_, rec_.ts_s);
  pending_.clear();
  size_t n = 0;  // the second's records, every one of the trace's
  for (;;) {
    if (auto it = item_of_record()) pending_.push_back({it->first, n, it->second});
    ++n;
    if (!next_record()) {
      have_rec_ = false;
      ended_ = true;
      break;
    }
    if (rec_.ts_s > second_) {
      have_rec_ = true;  // the next second's first
      break;
    }
  }
  const double second_ns = static_cast<double>(second_ - ts0_) * 1e9;
  for (auto& p : pending_) {
    p.item.due_ns = static_cast<int64_t>(
        (second_ns + 1e9 * static_cast<double>(p.place) / static_cast<double>(n)) / spec_.speed);
    push(p.stream, p.item);
  }
  return true;
}

bool TraceFeed::read_one() {
  if (ended_) return false;
  if (!next_record()) {
    ended_ = true;
    return false;
  }
  if (auto it = item_of_record()) push(it->first, it->second);
  return true;
}

int64_t TraceFeed::read_next_at() const {
  if (!have_rec_) return ended_ ? INT64_MAX : 0;  // at the start: now
  const double start_ns = static_cast<double>(rec_.ts_s - ts0_) * 1e9 / spec_.speed;
  return static_cast<int64_t>(start_ns) - kLookaheadNs;
}

TraceFeed::Next TraceFeed::peek(size_t s, int64_t elapsed_ns, const TraceItem** item) {
  GrowRing<TraceItem>& q = queues_[s];
  if (spec_.fast) {
    while (q.empty() && buffered_ < kMaxBuffered && read_one()) {
    }
  } else {
    while (q.empty() && read_next_at() <= elapsed_ns && read_second()) {
    }
  }
  if (!q.empty()) {
    *item = &q.front();
    return Next::item;
  }
  return ended_ ? Next::end : Next::later;
}

void TraceFeed::pop(size_t s) {
  queues_[s].pop_front();
  --buffered_;
}

void TraceFeed::drop_due(size_t s, int64_t by_ns, std::array<uint64_t, kOpTypes>& out) {
  // Every second that begins before `by_ns` read, so that no request due by then is missed.
  while (!spec_.fast && read_next_at() + kLookaheadNs < by_ns && read_second()) {
  }
  GrowRing<TraceItem>& q = queues_[s];
  while (!q.empty() && q.front().due_ns < by_ns) {
    ++out[static_cast<size_t>(q.front().op)];
    pop(s);
  }
}

}  // namespace kv::drive
