#include "store/cluster.hpp"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <charconv>
#include <memory>
#include <stdexcept>

#include "store/hiredis_ptr.hpp"

namespace kv::drive::store {
namespace {

// The table of the CRC16 Redis uses for slots (CCITT / XMODEM), built at compile time.
constexpr std::array<uint16_t, 256> make_crc16_table() {
  std::array<uint16_t, 256> t{};
  for (int i = 0; i < 256; ++i) {
    uint16_t c = static_cast<uint16_t>(i << 8);
    for (int b = 0; b < 8; ++b)
      c = static_cast<uint16_t>((c & 0x8000) ? (c << 1) ^ 0x1021 : c << 1);
    t[static_cast<size_t>(i)] = c;
  }
  return t;
}
constexpr std::array<uint16_t, 256> kCrc16 = make_crc16_table();

[[noreturn]] void bad_shape(const std::string& why) {
  throw std::runtime_error("CLUSTER SLOTS reply: " + why);
}

ClusterNode parse_node(const redisReply* n, const std::string& default_host) {
  // [host, port, id?, ...]
  if (n->type != REDIS_REPLY_ARRAY || n->elements < 2 ||
      n->element[0]->type != REDIS_REPLY_STRING || n->element[1]->type != REDIS_REPLY_INTEGER)
    bad_shape("a node is not [host, port, ...]");
  ClusterNode node;
  node.address.host.assign(n->element[0]->str, n->element[0]->len);
  if (node.address.host.empty() || node.address.host == "?") node.address.host = default_host;
  long long port = n->element[1]->integer;
  if (port < 1 || port > 65535) bad_shape("port " + std::to_string(port) + " out of range");
  node.address.port = static_cast<int>(port);
  if (n->elements >= 3 && n->element[2]->type == REDIS_REPLY_STRING)
    node.id.assign(n->element[2]->str, n->element[2]->len);
  return node;
}

bool parse_int(std::string_view s, int* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

uint16_t crc16_xmodem(std::string_view bytes) {
  uint16_t crc = 0;
  for (unsigned char c : bytes)
    crc = static_cast<uint16_t>((crc << 8) ^ kCrc16[((crc >> 8) ^ c) & 0xff]);
  return crc;
}

int key_hash_slot(std::string_view key) {
  if (auto open = key.find('{'); open != std::string_view::npos) {
    auto close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1)
      key = key.substr(open + 1, close - open - 1);
  }
  return crc16_xmodem(key) & (kClusterSlots - 1);
}

std::vector<SlotRange> parse_cluster_slots(std::string_view reply,
                                           const std::string& default_host) {
  RedisReaderPtr reader(redisReaderCreate());
  if (!reader) throw std::bad_alloc();
  void* raw = nullptr;
  if (redisReaderFeed(reader.get(), reply.data(), reply.size()) != REDIS_OK ||
      redisReaderGetReply(reader.get(), &raw) != REDIS_OK)
    bad_shape(std::string("not RESP (") + reader->errstr + ")");
  if (!raw) bad_shape("incomplete");
  std::unique_ptr<void, RedisReplyFree> owned(raw);
  const auto* r = static_cast<const redisReply*>(raw);
  if (r->type == REDIS_REPLY_ERROR) throw std::runtime_error(std::string(r->str, r->len));
  if (r->type != REDIS_REPLY_ARRAY) bad_shape("not an array");
  std::vector<SlotRange> out;
  for (size_t i = 0; i < r->elements; ++i) {
    const redisReply* e = r->element[i];
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
        e->element[0]->type != REDIS_REPLY_INTEGER || e->element[1]->type != REDIS_REPLY_INTEGER)
      bad_shape("a range is not [first, last, master, replicas...]");
    SlotRange range;
    long long first = e->element[0]->integer, last = e->element[1]->integer;
    if (first < 0 || last >= kClusterSlots || first > last)
      bad_shape("slots " + std::to_string(first) + "-" + std::to_string(last) + " out of range");
    range.first = static_cast<int>(first);
    range.last = static_cast<int>(last);
    range.master = parse_node(e->element[2], default_host);
    for (size_t k = 3; k < e->elements; ++k)
      range.replicas.push_back(parse_node(e->element[k], default_host));
    out.push_back(std::move(range));
  }
  return out;
}

std::optional<Redirect> parse_redirect(std::string_view text) {
  Redirect r;
  if (text.rfind("MOVED ", 0) == 0) {
    r.kind = Redirect::Kind::moved;
    text.remove_prefix(6);
  } else if (text.rfind("ASK ", 0) == 0) {
    r.kind = Redirect::Kind::ask;
    text.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon <= space + 1) return std::nullopt;
  if (!parse_int(text.substr(0, space), &r.slot) || r.slot < 0 || r.slot >= kClusterSlots)
    return std::nullopt;
  if (!parse_int(text.substr(colon + 1), &r.to.port) || r.to.port < 1 || r.to.port > 65535)
    return std::nullopt;
  r.to.host = std::string(text.substr(space + 1, colon - space - 1));
  if (r.to.host.size() > 2 && r.to.host.front() == '[' && r.to.host.back() == ']')
    r.to.host = r.to.host.substr(1, r.to.host.size() - 2);
  return r;
}

int SlotMap::node_index(const HostPort& address) {
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].host == address.host && nodes_[i].port == address.port)
      return static_cast<int>(i);
  nodes_.push_back(address);
  return static_cast<int>(nodes_.size() - 1);
}

void SlotMap::assign(const std::vector<SlotRange>& ranges) {
  owner_.fill(kNone);
  reader_.fill(kNone);
  for (const auto& r : ranges) {
    auto idx = static_cast<int16_t>(node_index(r.master.address));
    std::vector<int16_t> replicas;
    if (replica_reads_)
      for (const ClusterNode& n : r.replicas)
        replicas.push_back(static_cast<int16_t>(node_index(n.address)));
    for (int s = r.first; s <= r.last; ++s) {
      owner_[static_cast<size_t>(s)] = idx;
      // The master's replicas share its slots, slot by slot.
      reader_[static_cast<size_t>(s)] =
          replicas.empty() ? idx : replicas[static_cast<size_t>(s) % replicas.size()];
    }
  }
}

int SlotMap::move_slot(int slot, const HostPort& to) {
  int idx = node_index(to);
  owner_[static_cast<size_t>(slot)] = static_cast<int16_t>(idx);
  reader_[static_cast<size_t>(slot)] = static_cast<int16_t>(idx);  // its replicas: at a refresh
  return idx;
}

ClusterRouter::Action ClusterRouter::on_error(std::string_view error_text) {
  auto r = parse_redirect(error_text);
  if (!r) return {};
  if (r->kind == Redirect::Kind::ask) {
    ++asked_;
    return {Action::Kind::retry_asking, map_.node_index(r->to)};
  }
  ++moved_;
  needs_refresh_ = true;
  if (refresh_started_) moved_since_start_.emplace_back(r->slot, r->to);
  return {Action::Kind::retry, map_.move_slot(r->slot, r->to)};
}

bool ClusterRouter::refresh_due(int64_t now_ns, int64_t min_interval_ns) {
  if (!needs_refresh_) return false;
  if (refresh_started_ && now_ns - refresh_started_ns_ < min_interval_ns) return false;
  refresh_started_ = true;
  refresh_started_ns_ = now_ns;
  moved_since_start_.clear();
  return true;
}

void ClusterRouter::replace(const std::vector<SlotRange>& ranges) {
  map_.assign(ranges);
  for (const auto& [slot, to] : moved_since_start_) map_.move_slot(slot, to);
  needs_refresh_ = !moved_since_start_.empty();
  moved_since_start_.clear();
}

int SlotMap::slots_read_by_masters() const {
  int n = 0;
  for (size_t s = 0; s < owner_.size(); ++s) n += owner_[s] != kNone && reader_[s] == owner_[s];
  return n;
}

int SlotMap::covered_slots() const {
  int n = 0;
  for (int16_t o : owner_) n += o != kNone;
  return n;
}

}  // namespace kv::drive::store
