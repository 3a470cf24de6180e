// FakeStore's insides (fake_store.hpp), shared by its two halves: fake_store.cpp (the server
// thread: the socket, each connection's script applied to its requests, replies written when
// due; the public members) and fake_store_protocol.cpp (requests cut from a connection's input
// and answered in RESP, memcached text and memcached binary, over one key space).
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fake_store.hpp"

namespace kv::test::fake_store_detail {

using Behavior = FakeStore::Behavior;
using Refusal = FakeStore::Refusal;

inline int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Lower case, as the command names are counted (fake_store_protocol.cpp).
std::string lower(std::string_view s);

struct Item {
  std::string value;
  uint32_t flags = 0;
  int64_t expires_us = 0;  // steady clock; 0: never
  uint64_t cas = 0;
};

enum class Wire { resp, text, binary };

// One request cut from a connection's input.
struct Request {
  Wire wire = Wire::text;
  std::vector<std::string_view> args;  // RESP arguments, or the text command line's words
  std::string_view data;               // a text storage command's data block
  const char* header = nullptr;        // binary: the 24-byte header, then its body
  std::string_view extras, key, value;
};

enum class Cut { incomplete, ok, bad };

// Cuts one request off the front of `in` in whichever protocol its first byte says; `used`:
// its length (fake_store_protocol.cpp).
Cut cut_request(std::string_view in, size_t* used, Request* r);
// A memcached binary opcode's name, as its requests are counted.
const char* binary_name(uint8_t op);

struct Reply {
  int64_t due_us;
  std::string bytes;
};

struct Conn {
  int fd = -1;
  int index = 0;
  std::string in;
  std::deque<Reply> pending;  // not yet due (or held by a stall)
  std::string out;            // due, not yet written
  int64_t requests = 0;
  Behavior b;  // as of the last request
  bool stalled = false;
  int64_t stall_until_us = 0;
  uint64_t stalled_in_gen = 0;  // the behavior generation of this connection's stall
  uint64_t stall_release = 0;   // release count when the stall began
  bool closing = false;         // close once pending and out are empty
};

}  // namespace kv::test::fake_store_detail

namespace kv::test {

struct FakeStore::Impl {
  using Conn = fake_store_detail::Conn;
  using Item = fake_store_detail::Item;
  using Request = fake_store_detail::Request;

  mutable std::mutex mu;
  // ---- guarded by mu ----
  std::map<int, Behavior> per_conn;
  Behavior all;
  uint64_t gen = 1;
  uint64_t releases = 0;
  std::vector<ConnectionCounters> counters;
  std::unordered_map<std::string, Item> items;
  uint64_t next_cas = 1;
  int64_t hits = 0, misses = 0;
  int64_t refused_no_memory = 0;  // memcached's store_no_memory
  // ---- the server thread's ----
  std::vector<std::unique_ptr<Conn>> conns;
  int listen_fd = -1;
  int wake_fd = -1;
  int port = 0;
  std::atomic<bool> stop{false};
  std::thread thread;

  void wake() const {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd, &one, sizeof one);
  }

  const Behavior& behavior_of(int index) const {
    auto it = per_conn.find(index);
    return it == per_conn.end() ? all : it->second;
  }

  void count(Conn& c, const std::string& cmd) {
    ++counters[static_cast<size_t>(c.index)].requests[cmd];
  }

  // The key space, and the answers in each protocol (fake_store_protocol.cpp).
  const Item* find(const std::string& key);
  const Item* lookup(const std::string& key);
  void store(std::string_view key, std::string_view value, uint32_t flags, int64_t ttl_us);
  std::string info_text() const;
  std::string resp(Conn& c, const Request& r);
  std::vector<std::pair<std::string, std::string>> stats(const Behavior& behavior) const;
  static int64_t ttl_us_of(int64_t exptime);
  std::string text(Conn& c, const Request& r);
  std::string binary(Conn& c, const Request& r);

  // The server thread, and what it does with a connection's input (fake_store.cpp).
  void serve();
  void on_input(Conn& c, int64_t now);
};

}  // namespace kv::test
