#include "store/memcached_client.hpp"

#include <libmemcached/memcached.h>
#include <netinet/in.h>

#include <regex>
#include <string>
#include <vector>

#include "kvbench/protocol.hpp"
#include "store/memcached_probe.hpp"
#include "store/reconnect_policy.hpp"
#include "store/socket_finder.hpp"

namespace kv::drive {
namespace {

struct MemcFree {
  void operator()(memcached_st* m) const noexcept { memcached_free(m); }
};

// Whether a failed request found no server at all (down, or disabled until its retry timeout):
// libmemcached fails those at once, so the client pauses (ReconnectPolicy::store_gone).
bool store_gone(memcached_return_t rc) {
  switch (rc) {
    case MEMCACHED_CONNECTION_FAILURE:
    case MEMCACHED_SERVER_TEMPORARILY_DISABLED:
    case MEMCACHED_SERVER_MARKED_DEAD:
    case MEMCACHED_NO_SERVERS:
    case MEMCACHED_ERRNO:
      return true;
    default:
      return false;
  }
}

// A failed request's status.
OpStatus classify(memcached_return_t rc) {
  return rc == MEMCACHED_TIMEOUT ? OpStatus::timeout : OpStatus::error;
}

}  // namespace

std::string clean_memcached_error(std::string_view text) {
  // "(0x55eb...) A TIMEOUT OCCURRED, time out,  host: h:p -> ./src/libmemcached/io.cc:220"
  static const std::regex pointer(R"(\(0x[0-9a-fA-F]+\)\s*)");
  static const std::regex source(R"(\s*(->\s*)?\S*\.(cc|c|cpp|h|hpp):\d+)");
  static const std::regex spaces(R"(\s{2,})");
  std::string out = std::regex_replace(std::string(text), pointer, "");
  out = std::regex_replace(out, source, "");
  out = std::regex_replace(out, spaces, " ");
  while (!out.empty() && (out.back() == ' ' || out.back() == ',')) out.pop_back();
  while (!out.empty() && out.front() == ' ') out.erase(0, 1);
  return out;
}

namespace {

// The sockets of mc's open connections. libmemcached does not hand out its descriptors, so they
// are found among this process's open files by their local port (which libmemcached does give)
// and the server's port. Costs a directory listing: called after a (re)connect, not per request.
std::vector<int> connection_fds(const memcached_st* mc) {
  std::vector<std::pair<uint16_t, uint16_t>> ends;  // local port, server port
  for (uint32_t i = 0; i < memcached_server_count(mc); ++i) {
    const memcached_instance_st* s = memcached_server_instance_by_position(mc, i);
    if (!s) continue;
    in_port_t local = memcached_server_srcport(s);
    if (local != 0 && local != static_cast<in_port_t>(-1))
      ends.emplace_back(local, memcached_server_port(s));
  }
  return sockets_by_ports(ends);
}

// The end of a multi-get's replies (or of a read that found nothing more to read).
bool is_end(memcached_return_t rc) {
  return rc == MEMCACHED_END || rc == MEMCACHED_NOTFOUND || rc == MEMCACHED_SUCCESS;
}

// Blocking (set / get): one request, one round trip, as libmemcached is built to work.
//
// Pipelined (send_set / send_get, flush, finish_send, receive), the cheapest way found within
// libmemcached 1.1 that still gives every request its own outcome (docs/performance.md):
//  - sets are buffered (MEMCACHED_BEHAVIOR_BUFFER_REQUESTS, replies on) and go out in one write
//    at flush(); finish_send() reads their replies: binary protocol one by one (each set's own
//    status), text protocol all at once (libmemcached 1.1 reads a buffered text reply but keeps
//    only whether the connection delivered it, so a server-side rejection of one set, e.g.
//    "SERVER_ERROR object too large", counts as ok; memcached's own store_too_large /
//    store_no_memory counters, kept in store_stats, show those);
//  - gets go out as one multi-get (memcached_mget) once the sets' replies are in (libmemcached
//    reads, and discards, a connection's outstanding replies before a multi-get, so the sets'
//    replies must be taken first); its replies hold only the hits, in request order, so each get
//    is matched against the next returned key: a match is a hit, anything else a miss.
// A batch that loses its connection fails every request not yet answered (error, or timeout),
// pauses once, and the connection is rebuilt before the next multi-get (reopen_connection).
// A get is a miss only when the server answered the multi-get to its end with nothing for it:
// never when libmemcached recorded an error since the multi-get began (error_during_mget).
class MemcachedClient final : public StoreClient {
 public:
  MemcachedClient(TargetSpec spec, ClientOptions opts) : spec_(std::move(spec)), opts_(opts) {}
  ~MemcachedClient() override {
    if (result_) memcached_result_free(result_);
  }
  MemcachedClient(const MemcachedClient&) = delete;
  MemcachedClient& operator=(const MemcachedClient&) = delete;

  Result<void> connect() override {
    std::unique_ptr<memcached_st, MemcFree> mc(memcached_create(nullptr));
    if (!mc) return Error{"memcached_create failed"};
    auto ms = static_cast<uint64_t>(opts_.timeout_us / 1000);
    memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_TCP_NODELAY, spec_.tcp_nodelay ? 1 : 0);
    memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, spec_.binary_protocol);
    memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_POLL_TIMEOUT, ms);
    memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, ms);
    // A failed server is retried after 1 s rather than dropped from the pool: a benchmark
    // counts the errors of a dead server instead of silently moving its keys elsewhere.
    memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, 1);
    memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS, 0);
    // Past these marks libmemcached reads and throws away outstanding replies while writing
    // (memcached_purge): a pipelined batch must read every reply itself, so never.
    memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_IO_MSG_WATERMARK, UINT32_MAX);
    memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_IO_BYTES_WATERMARK, UINT32_MAX);
    if (spec_.servers.size() > 1) {
      memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_DISTRIBUTION,
                             MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA);
    }
    for (const auto& s : spec_.servers) {
      auto port = static_cast<in_port_t>(s.port);
      memcached_return_t rc = memcached_server_add(mc.get(), s.host.c_str(), port);
      if (rc != MEMCACHED_SUCCESS)
        return Error{"cannot add memcached server " + s.host + ":" + std::to_string(s.port) + ": " +
                     clean_memcached_error(memcached_strerror(mc.get(), rc))};
    }
    // libmemcached connects lazily: ask every server for its version to know they are there.
    memcached_return_t rc = memcached_version(mc.get());
    if (rc != MEMCACHED_SUCCESS) {
      std::string why = clean_memcached_error(memcached_last_error_message(mc.get()));
      if (spec_.binary_protocol &&
          (rc == MEMCACHED_TIMEOUT || memcached_last_error(mc.get()) == MEMCACHED_TIMEOUT))
        why +=
            " (no answer to a binary-protocol request: the server may not speak the binary "
            "protocol; try the target without ?protocol=binary)";
      return Error{"cannot connect to memcached " + spec_.display + ": " + why};
    }
    // The result lives inside this object (not allocated by libmemcached): at the end of a
    // fetch libmemcached frees an allocated result but only resets an embedded one, so it can
    // be reused for every get without a malloc.
    if (result_) memcached_result_free(result_);
    result_ = nullptr;
    sockets_.withdraw();
    mc_ = std::move(mc);
    sockets_.publish(connection_fds(mc_.get()));
    sockets_stale_ = false;
    buffering_ = false;
    result_ = memcached_result_create(mc_.get(), &result_storage_);
    if (!result_) return Error{"memcached_result_create failed"};
    return {};
  }

  OpStatus set(std::string_view key, std::string_view value, uint32_t ttl_s) override {
    if (interrupted()) return OpStatus::interrupted;
    if (buffering_) set_buffering(false);
    memcached_return_t rc =
        memcached_set(mc_.get(), key.data(), key.size(), value.data(), value.size(), ttl_s, 0);
    return rc == MEMCACHED_SUCCESS ? succeeded(OpStatus::ok) : failed(rc);
  }

  OpStatus get(std::string_view key, std::string_view* value) override {
    if (interrupted()) return OpStatus::interrupted;
    // mget + fetch into a reused result: memcached_get would malloc every value.
    const char* keys[] = {key.data()};
    size_t lens[] = {key.size()};
    memcached_return_t rc = memcached_mget(mc_.get(), keys, lens, 1);
    if (rc != MEMCACHED_SUCCESS) return failed(rc);
    if (memcached_return_t err = error_during_mget(); err != MEMCACHED_SUCCESS) {
      lost_connection();
      memcached_quit(mc_.get());  // whatever did go out is not read: a new connection next time
      return failed_as(failure_status(err));
    }
    OpStatus status = OpStatus::miss;
    // Drain to the end marker, as the protocol requires before the next request.
    while (memcached_fetch_result(mc_.get(), result_, &rc) != nullptr) {
      *value = std::string_view(memcached_result_value(result_), memcached_result_length(result_));
      status = OpStatus::hit;
    }
    if (!is_end(rc)) return failed(rc);
    if (status == OpStatus::miss) {
      if (memcached_return_t err = error_during_mget(); err != MEMCACHED_SUCCESS)
        return failed(err);
    }
    return succeeded(status);
  }

  // What the server itself says to "version" (any memcached-protocol server answers it, and
  // not every one is memcached: "memcached protocol: VERSION 1.6.18"); for a server that answers
  // only the binary protocol, the numbers libmemcached parsed from its binary reply.
  std::string server_version() override {
    std::string said =
        text_version_reply(spec_.servers.front(), std::min<int64_t>(opts_.timeout_us, 1'000'000));
    if (!said.empty()) return "memcached protocol: " + said;
    const memcached_instance_st* s = memcached_server_instance_by_position(mc_.get(), 0);
    if (!s || memcached_server_major_version(s) == UINT8_MAX) return "";
    return "memcached protocol (binary), version " +
           std::to_string(memcached_server_major_version(s)) + "." +
           std::to_string(memcached_server_minor_version(s)) + "." +
           std::to_string(memcached_server_micro_version(s));
  }

  std::vector<std::pair<std::string, std::string>> server_config() override {
    return read_memcached_settings(spec_, std::min<int64_t>(opts_.timeout_us, 1'000'000));
  }

  // Replies of a multi-get come back per server: matching them in request order needs one.
  bool supports_pipelining() const override { return spec_.servers.size() == 1; }

  void send_set(std::string_view key, std::string_view value, uint32_t ttl_s) override {
    Entry& e = add_entry(true);
    if (failed_ || e.done) return;
    if (!buffering_) set_buffering(true);
    memcached_return_t rc =
        memcached_set(mc_.get(), key.data(), key.size(), value.data(), value.size(), ttl_s, 0);
    if (rc == MEMCACHED_BUFFERED || rc == MEMCACHED_SUCCESS) {
      ++sets_;
    } else if (memcached_fatal(rc)) {
      fail_batch(rc);  // the connection is gone: nothing queued so far will be answered
    } else {
      e.status = OpStatus::error;  // refused before sending (e.g. a key libmemcached rejects)
      e.done = true;
    }
  }

  void send_get(std::string_view key) override {
    Entry& e = add_entry(false);
    e.key_offset = static_cast<uint32_t>(keys_.size());
    e.key_length = static_cast<uint32_t>(key.size());
    keys_.append(key);
    ++gets_;
  }

  void flush() override {
    if (failed_) return;
    if (sets_ > 0) {
      memcached_return_t rc = memcached_flush_buffers(mc_.get());
      if (rc != MEMCACHED_SUCCESS) fail_batch(rc);
    } else if (gets_ > 0) {
      send_gets();  // nothing to wait for: the gets leave now
    }
  }

  void finish_send() override {
    if (failed_ || sets_ == 0) return;
    read_set_replies();
    if (!failed_ && gets_ > 0) send_gets();
  }

  OpStatus receive(std::string_view* value) override {
    if (next_ >= entries_.size()) return OpStatus::error;  // more receives than requests
    Entry& e = entries_[next_++];
    OpStatus st = e.done ? e.status : (e.is_set ? OpStatus::error : match_get(e, value));
    if (next_ == entries_.size()) end_batch();
    if (st == OpStatus::interrupted && !e.unsent) ++abandoned_;
    return st;
  }

 private:
  struct Entry {
    bool is_set = false;
    bool done = false;    // status is final (set replies, refusals, failed batches)
    bool unsent = false;  // queued after an interrupt: never sent
    OpStatus status = OpStatus::error;
    uint32_t key_offset = 0, key_length = 0;  // a get's key in keys_
  };

  Entry& add_entry(bool is_set) {
    if (next_ == entries_.size() && next_ > 0) reset_batch();
    Entry& e = entries_.emplace_back();
    e.is_set = is_set;
    if (!failed_ && interrupted()) {  // send nothing new: this request never leaves
      e.status = OpStatus::interrupted;
      e.done = e.unsent = true;
      return e;
    }
    if (failed_) {
      e.status = failed_status_;
      e.done = true;
    }
    return e;
  }

  // libmemcached closes the connection when this changes (reopened on the next request).
  void set_buffering(bool on) {
    lost_connection();
    memcached_behavior_set(mc_.get(), MEMCACHED_BEHAVIOR_BUFFER_REQUESTS, on ? 1 : 0);
    buffering_ = on;
  }

  void read_set_replies() {
    if (!spec_.binary_protocol) {
      // Text: libmemcached reads every outstanding reply but reports only the last (and a lost
      // connection); the count of replies read is exact, each one's verdict is not seen.
      memcached_return_t rc;
      memcached_fetch_result(mc_.get(), result_, &rc);
      if (memcached_fatal(rc)) return fail_batch(rc);
      for (Entry& e : entries_) {
        if (e.is_set && !e.done) {
          e.status = OpStatus::ok;
          e.done = true;
        }
      }
      return;
    }
    // Binary: one fetch per set reply; a reply is a result (stored) or the server's refusal.
    for (Entry& e : entries_) {
      if (!e.is_set || e.done) continue;
      memcached_return_t rc;
      if (memcached_fetch_result(mc_.get(), result_, &rc) != nullptr) {
        e.status = OpStatus::ok;
      } else if (memcached_fatal(rc)) {
        return fail_batch(rc);
      } else {
        e.status = OpStatus::error;  // E2BIG, NOT_STORED, ...: the server refused this set
      }
      e.done = true;
    }
  }

  void send_gets() {
    key_ptrs_.clear();
    key_lens_.clear();
    for (const Entry& e : entries_) {
      if (e.is_set || e.done) continue;
      key_ptrs_.push_back(keys_.data() + e.key_offset);
      key_lens_.push_back(e.key_length);
    }
    if (key_ptrs_.empty()) return;
    if (memcached_return_t rc = reopen_connection(); rc != MEMCACHED_SUCCESS) return fail_batch(rc);
    memcached_return_t rc =
        memcached_mget(mc_.get(), key_ptrs_.data(), key_lens_.data(), key_ptrs_.size());
    if (rc != MEMCACHED_SUCCESS) return fail_batch(rc);
    // libmemcached 1.1's multi-get (get.cc) connects key by key: a key whose connect fails (the
    // server still in its retry pause, which ends on a whole second) is skipped, the keys after
    // it go out once a connect succeeds, and the multi-get says SUCCESS. The error it recorded
    // is the only sign: the batch then fails whole (some gets left, some did not; which ones
    // is not known), never "the server had none of them".
    if (memcached_return_t err = error_during_mget(); err != MEMCACHED_SUCCESS)
      return fail_batch(err);
    fetching_ = true;
  }

  // After a lost connection, opens a new one with a request of its own ("version") rather than
  // letting the multi-get connect (which would skip keys, above): either the connection is up
  // before any get leaves, or the batch fails with nothing sent. One round trip per reconnect.
  memcached_return_t reopen_connection() {
    if (!sockets_stale_) return MEMCACHED_SUCCESS;
    memcached_return_t rc = memcached_version(mc_.get());
    if (rc != MEMCACHED_SUCCESS) {
      memcached_return_t last = memcached_last_error(mc_.get());
      return last != MEMCACHED_SUCCESS ? last : rc;
    }
    succeeded(OpStatus::ok);  // connected: its socket is one interrupt() may shut down again
    return MEMCACHED_SUCCESS;
  }

  // The next get of the batch: a hit if the next returned value is its key, else a miss.
  OpStatus match_get(const Entry& e, std::string_view* value) {
    if (fetching_ && !have_result_) fetch_next();
    if (failed_) return failed_status_;
    std::string_view key(keys_.data() + e.key_offset, e.key_length);
    if (have_result_ && std::string_view(memcached_result_key_value(result_),
                                         memcached_result_key_length(result_)) == key) {
      have_result_ = false;
      *value = std::string_view(memcached_result_value(result_), memcached_result_length(result_));
      return OpStatus::hit;
    }
    return OpStatus::miss;
  }

  void fetch_next() {
    memcached_return_t rc;
    if (memcached_fetch_result(mc_.get(), result_, &rc) != nullptr) {
      have_result_ = true;
      return;
    }
    fetching_ = false;
    if (!is_end(rc)) return fail_batch(rc);
    if (memcached_return_t err = error_during_mget(); err != MEMCACHED_SUCCESS) fail_batch(err);
  }

  // libmemcached 1.1's fetch turns a read error (the server gone mid-batch, a timeout, an
  // error line) into NOTFOUND when the multi-get had no hit yet (fetch.cc), and its multi-get
  // skips keys it could not connect for (send_gets): either would count gets the server never
  // answered as misses. Any error recorded since the last memcached_mget (which clears older
  // ones; libmemcached records only failures and CLIENT_ERROR) tells them apart from a real
  // miss: that error, or MEMCACHED_SUCCESS.
  memcached_return_t error_during_mget() const { return memcached_last_error(mc_.get()); }

  // Every request not yet answered fails with the connection's status; libmemcached forgets
  // the connection's outstanding replies and reconnects on the next request.
  void fail_batch(memcached_return_t rc) {
    if (failed_) return;
    failed_ = true;
    failed_status_ = interrupted() ? OpStatus::interrupted
                                   : failure_status(rc);  // pauses once when the server is gone
    for (size_t i = next_; i < entries_.size(); ++i) {
      if (!entries_[i].done) {
        entries_[i].status = failed_status_;
        entries_[i].done = true;
      }
    }
    fetching_ = have_result_ = false;
    lost_connection();
    memcached_quit(mc_.get());
  }

  // All replies taken: a multi-get must still be read to its end before the next request
  // (a value no get matched would be a protocol surprise: the connection is rebuilt).
  void end_batch() {
    if (fetching_ || have_result_) {
      bool stray = have_result_;
      have_result_ = false;
      while (fetching_) {
        fetch_next();
        stray = stray || have_result_;
        have_result_ = false;
      }
      if (stray && !failed_) {
        lost_connection();
        memcached_quit(mc_.get());
      }
    }
    if (!failed_) succeeded(OpStatus::ok);
  }

  // The connection is closed, or about to be (libmemcached reopens it on the next request):
  // its socket is no longer one interrupt() may shut down.
  void lost_connection() {
    if (sockets_stale_) return;
    sockets_.withdraw();
    sockets_stale_ = true;
  }
  // A request that got its answer: the connection is open, so its socket is known again.
  OpStatus succeeded(OpStatus st) {
    if (sockets_stale_) {
      sockets_.publish(connection_fds(mc_.get()));
      sockets_stale_ = false;
    }
    return st;
  }
  // A blocking request that failed: libmemcached may have closed the connection.
  OpStatus failed(memcached_return_t rc) {
    if (memcached_fatal(rc)) lost_connection();
    return failed_as(failure_status(rc));
  }

  // A failed request's status, after the one reconnect policy's pause when the server is gone.
  OpStatus failure_status(memcached_return_t rc) const {
    if (store_gone(rc)) reconnect_.store_gone();
    return classify(rc);
  }

  void reset_batch() {
    entries_.clear();
    keys_.clear();
    next_ = sets_ = gets_ = 0;
    failed_ = fetching_ = have_result_ = false;
  }

  TargetSpec spec_;
  ClientOptions opts_;
  // Only its pause: libmemcached spaces the reconnects (its retry timeout, per server).
  ReconnectPolicy reconnect_{opts_.reconnect_backoff_max_us};
  std::unique_ptr<memcached_st, MemcFree> mc_;
  memcached_result_st result_storage_{};
  memcached_result_st* result_ = nullptr;  // &result_storage_ once created
  bool buffering_ = false;                 // MEMCACHED_BEHAVIOR_BUFFER_REQUESTS is on
  bool sockets_stale_ = true;  // the published sockets may not be the open ones (the connection
                               // may be closed: reopen_connection)

  // The current pipelined batch (capacity kept between batches: no allocation per request).
  std::vector<Entry> entries_;
  std::string keys_;
  std::vector<const char*> key_ptrs_;
  std::vector<size_t> key_lens_;
  size_t next_ = 0;  // next entry to receive
  size_t sets_ = 0, gets_ = 0;
  bool failed_ = false;
  OpStatus failed_status_ = OpStatus::error;
  bool fetching_ = false;     // a multi-get's replies are still coming
  bool have_result_ = false;  // result_ holds a value not yet matched to a get
};

}  // namespace

std::unique_ptr<StoreClient> make_memcached_client(const TargetSpec& spec,
                                                   const ClientOptions& opts) {
  return std::make_unique<MemcachedClient>(spec, opts);
}

}  // namespace kv::drive
