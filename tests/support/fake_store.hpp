// A scriptable key-value server for tests: the timing and failure cases real servers cannot be
// told to produce (a late reply, one stalled connection, a refused set, garbage, a close in the
// middle of a reply).
//
// Contract:
// - Listens on 127.0.0.1, on a free port, from construction; serves any number of connections
//   on one thread (poll); the destructor closes everything and joins that thread.
// - Speaks, on the same port, whatever each request is: memcached binary (first byte 0x80),
//   RESP (first byte '*', as hiredis sends), else memcached text.
//   RESP: PING, AUTH (accepts any password), SELECT, INFO [section] (redis_version, used_memory,
//   keyspace, commandstats: enough for kvdrive's version check and store-stats poller),
//   SET key value [EX s | PX ms], GET, DEL, CONFIG GET (an empty list); anything else: -ERR.
//   memcached text: version, set (noreply honoured; refusals are sent anyway, as memcached's
//   errors are), get/gets (several keys), delete, stats (cmd_get, cmd_set, get_hits,
//   store_no_memory = out-of-memory refusals, ...), quit; anything else: ERROR.
//   memcached binary: GET/GETQ/GETK/GETKQ, SET/SETQ, DELETE, NOOP, VERSION, STAT, QUIT/QUITQ
//   (the opcodes libmemcached 1.1 uses); anything else: status 0x0081 (unknown command).
//   One key space for all protocols; expiry times are honoured.
// - Scripted per connection (0-based, in accept order) or for all connections without their
//   own script, through Behavior (see there). A behavior is read when a request arrives, so a
//   change applies to the requests that arrive after it.
// - Counters: requests per command per connection (a multi-key get counts each key, like
//   memcached's cmd_get), bytes in and out, connections accepted. Command names are lower case:
//   RESP and text commands by name ("get", "set", "info"), binary ones by opcode name ("getkq",
//   "setq", "noop").
// - Thread-safety: every public member may be called from any thread at any time.
// - Errors: the constructor throws std::runtime_error if it cannot listen; a connection that
//   sends something unparseable gets an error reply and is closed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kv::test {

class FakeStore {
 public:
  // How a refused set is answered.
  //   out_of_memory: RESP "-OOM ...", text "SERVER_ERROR out of memory storing object",
  //                  binary status 0x0082 (ENOMEM).
  //   read_only:     RESP "-READONLY ...", text "NOT_STORED", binary status 0x0005 (not stored).
  enum class Refusal { none, out_of_memory, read_only };

  // A connection's script. Request counts are per connection and include every request
  // (handshake ones such as INFO or version too). -1 means "never".
  struct Behavior {
    int64_t delay_us = 0;               // each reply leaves this long after its request arrived
    int64_t stall_after_requests = -1;  // replies to later requests (and any not yet sent) are
    int64_t stall_us = 0;               // held this long, 0: until release_stalls(); once per
                                        // connection and set_behavior() call
    Refusal refuse_sets = Refusal::none;
    int64_t garbage_after_requests = -1;   // replies to later requests are garbage bytes
    int64_t close_after_requests = -1;     // the connection is closed (after the replies before
                                           // it went out) when request N+1 arrives, unanswered
    int64_t close_after_reply_bytes = -1;  // closed once this many reply bytes went out in all:
                                           // a reply cut in the middle
    bool text_only = false;                // memcached binary requests are read and never answered
    bool garbage_spares_version = false;   // a memcached "version" is answered anyway (what
                                           // libmemcached's connect asks), garbage or not
    std::string version;                   // memcached's VERSION reply; empty: "1.6.18"
    bool set_counters = true;  // false: memcached stats without cmd_set, store_too_large and
                               // store_no_memory (a memcached-protocol server that is not one)
  };

  struct ConnectionCounters {
    std::map<std::string, int64_t> requests;  // command → requests received
    int64_t bytes_in = 0;
    int64_t bytes_out = 0;
    bool open = true;
  };

  FakeStore();
  ~FakeStore();
  FakeStore(const FakeStore&) = delete;
  FakeStore& operator=(const FakeStore&) = delete;

  int port() const;
  std::string redis_uri() const;      // redis://127.0.0.1:PORT
  std::string memcached_uri() const;  // memcached://127.0.0.1:PORT

  // The script of connection `index` (0-based, in accept order; also for connections not yet
  // made), or of every connection that has none of its own.
  void set_behavior(int index, const Behavior& b);
  void set_behavior_all(const Behavior& b);
  // Ends every stall in progress (their held replies go out); new stalls may start.
  void release_stalls();

  // Counters, summed over all connections, or of one (0 for an index never accepted).
  int64_t requests(const std::string& command) const;
  int64_t requests(int index, const std::string& command) const;
  std::vector<ConnectionCounters> connections() const;
  int connections_accepted() const;
  // The stored value of `key`, if set and not expired.
  std::optional<std::string> value(const std::string& key) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kv::test
