#include "store/cluster_topology.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "store/error_text.hpp"
#include "store/resp_codec.hpp"
#include "store/sync_connection.hpp"

namespace kv::drive::store {
namespace {

std::string name_of(const HostPort& s) { return s.host + ":" + std::to_string(s.port); }

std::vector<SlotRange> ask_one(const HostPort& node, const TargetSpec& spec, const TlsContext* tls,
                               int64_t timeout_us) {
  SyncConnection c(node, tls, timeout_us);
  if (!spec.password.empty()) {
    std::string auth;
    resp::append_auth(auth, spec.user, spec.password);
    std::string r = c.request_resp(auth, timeout_us);
    if (r.empty() || r[0] == '-') {
      // The store's whole message, less anything that echoes the password.
      throw std::runtime_error("AUTH failed: " + (r.empty()
                                                      ? std::string("no answer")
                                                      : shown_error(r.substr(1), spec.password)));
    }
  }
  std::string cmd;
  resp::append_array_header(cmd, 2);
  resp::append_bulk(cmd, "CLUSTER");
  resp::append_bulk(cmd, "SLOTS");
  return parse_cluster_slots(c.request_resp(cmd, timeout_us), node.host);
}

}  // namespace

std::vector<SlotRange> fetch_cluster_slots(const std::vector<HostPort>& nodes,
                                           const TargetSpec& spec, const TlsContext* tls,
                                           int64_t timeout_us) {
  std::string failures;
  for (const auto& node : nodes) {
    try {
      auto ranges = ask_one(node, spec, tls, timeout_us);
      if (!ranges.empty()) return ranges;
      failures += "; " + name_of(node) + ": no slot assigned";
    } catch (const std::exception& e) {
      failures += "; " + name_of(node) + ": " + e.what();
    }
  }
  throw std::runtime_error(
      "cannot read the cluster's slots" +
      (failures.empty() ? std::string(": no node to ask") : " (" + failures.substr(2) + ")"));
}

void refresh_slot_map(SlotMap& map, const TargetSpec& spec, const TlsContext* tls,
                      int64_t timeout_us) {
  std::vector<HostPort> nodes = map.nodes();
  for (const auto& s : spec.servers) {
    bool known = std::any_of(nodes.begin(), nodes.end(), [&](const HostPort& n) {
      return n.host == s.host && n.port == s.port;
    });
    if (!known) nodes.push_back(s);
  }
  map.assign(fetch_cluster_slots(nodes, spec, tls, timeout_us));
}

SlotRefresh::~SlotRefresh() {
  if (pending_.valid()) pending_.wait();
}

void SlotRefresh::start(std::vector<HostPort> nodes, const TargetSpec& spec, const TlsContext* tls,
                        int64_t timeout_us) {
  pending_ = std::async(std::launch::async, [nodes = std::move(nodes), spec, tls, timeout_us] {
    return fetch_cluster_slots(nodes, spec, tls, timeout_us);
  });
}

std::optional<Result<std::vector<SlotRange>>> SlotRefresh::take() {
  if (!pending_.valid() || pending_.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    return std::nullopt;
  try {
    return Result<std::vector<SlotRange>>(pending_.get());
  } catch (const std::exception& e) {
    return Result<std::vector<SlotRange>>(Error{e.what()});
  }
}

std::vector<HostPort> cluster_masters(const std::vector<SlotRange>& ranges) {
  std::vector<const SlotRange*> sorted;
  for (const auto& r : ranges) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(),
            [](const SlotRange* a, const SlotRange* b) { return a->first < b->first; });
  std::vector<HostPort> out;
  for (const SlotRange* r : sorted) {
    bool seen = std::any_of(out.begin(), out.end(), [&](const HostPort& n) {
      return n.host == r->master.address.host && n.port == r->master.address.port;
    });
    if (!seen) out.push_back(r->master.address);
  }
  return out;
}

}  // namespace kv::drive::store
