// An exact LRU cache simulation, a list per cache size, for checking miss-ratio curves
// (stats/miss_ratio_curve) against: demand-filled, writes bring objects in, deletes take them out.
#pragma once

#include <cstdint>
#include <iterator>
#include <list>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "stats/miss_ratio_curve.hpp"
#include "workload/trace.hpp"

namespace kv::test {

struct Request {
  std::string key;
  uint32_t size;
  kv::drive::CacheAccess kind;
};

// The requests of a trace's text, each object's size its key's plus its value's.
inline std::vector<Request> requests_of_trace(const std::string& text) {
  std::istringstream in(text);
  std::vector<Request> out;
  for (std::string line; std::getline(in, line);) {
    kv::drive::TraceRecord r;
    if (auto why = kv::drive::parse_trace_line(line, r))
      throw std::runtime_error("requests_of_trace: '" + line + "': " + *why);
    out.push_back({std::string(r.key), r.key_size + r.value_size,
                   kv::drive::trace_op_reads(r.op)   ? kv::drive::CacheAccess::read
                   : r.op == kv::drive::TraceOp::del ? kv::drive::CacheAccess::remove
                                                     : kv::drive::CacheAccess::write});
  }
  return out;
}

// An LRU cache of `capacity` objects (by_bytes false) or bytes, demand-filled: its miss ratio
// of the reads.
inline double exact_miss_ratio(const std::vector<Request>& requests, uint64_t capacity,
                               bool by_bytes) {
  std::list<std::pair<std::string, uint64_t>> lru;  // most recent first
  std::unordered_map<std::string, decltype(lru)::iterator> where;
  uint64_t used = 0, reads = 0, misses = 0;
  const auto drop = [&](decltype(lru)::iterator it) {
    used -= it->second;
    where.erase(it->first);
    lru.erase(it);
  };
  for (const Request& q : requests) {
    const uint64_t size = by_bytes ? q.size : 1;
    const auto found = where.find(q.key);
    if (q.kind == kv::drive::CacheAccess::read) {
      ++reads;
      misses += found == where.end();
    }
    if (found != where.end()) drop(found->second);
    if (q.kind == kv::drive::CacheAccess::remove || size > capacity) continue;
    lru.emplace_front(q.key, size);
    where[q.key] = lru.begin();
    used += size;
    while (used > capacity) drop(std::prev(lru.end()));
  }
  return reads ? static_cast<double>(misses) / static_cast<double>(reads) : 1.0;
}

}  // namespace kv::test
