// A FIFO ring that grows (doubling) only when full, so that once it has the size a run needs
// nothing is allocated per element: a connection's full-window spans (loop/event_user.hpp) and
// a replay's records per stream (trace_feed.hpp).
#pragma once

#include <cstddef>
#include <vector>

namespace kv::drive {

template <typename T>
struct GrowRing {
  std::vector<T> buf = std::vector<T>(8);
  size_t head = 0, count = 0;
  bool empty() const noexcept { return count == 0; }
  const T& front() const noexcept { return buf[head]; }
  void pop_front() noexcept {
    head = (head + 1) % buf.size();
    --count;
  }
  void push_back(const T& v) {
    if (count == buf.size()) {  // full: unroll into a ring twice the size
      std::vector<T> grown(buf.size() * 2);
      for (size_t i = 0; i < count; ++i) grown[i] = buf[(head + i) % buf.size()];
      buf.swap(grown);
      head = 0;
    }
    buf[(head + count++) % buf.size()] = v;
  }
};

}  // namespace kv::drive
