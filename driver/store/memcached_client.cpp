#include "store/memcached_client.hpp"

#include <dirent.h>
#include <libmemcached/memcached.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "kvbench/clock.hpp"
#include "kvbench/protocol.hpp"
#include "store/store_stats.hpp"

namespace kv::drive {
namespace {

struct MemcFree {
  void operator()(memcached_st* m) const noexcept { memcached_free(m); }
};

// A failed request's status. When no server answered at all (down, or disabled until its
// retry timeout), pause 10 ms: libmemcached fails those at once, and a worker must not spin.
OpStatus classify(memcached_return_t rc) {
  switch (rc) {
    case MEMCACHED_TIMEOUT:
      return OpStatus::timeout;
    case MEMCACHED_CONNECTION_FAILURE:
    case MEMCACHED_SERVER_TEMPORARILY_DISABLED:
    case MEMCACHED_SERVER_MARKED_DEAD:
    case MEMCACHED_NO_SERVERS:
    case MEMCACHED_ERRNO: {
      timespec pause{0, 10'000'000};
      nanosleep(&pause, nullptr);
      return OpStatus::error;
    }
    default:
      return OpStatus::error;
  }
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

// Sends `request` over a new text-protocol connection and returns the reply once `done` says
// it is whole (given all that arrived so far); empty if the server did not answer within
// timeout_us, could not be reached, or sent more than 1 MiB.
template <typename Done>
std::string text_request(const HostPort& server, std::string_view request, int64_t timeout_us,
                         Done done) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(server.host.c_str(), std::to_string(server.port).c_str(), &hints, &found) != 0)
    return "";
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(found, freeaddrinfo);
  int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return "";
  std::unique_ptr<int, void (*)(int*)> closer(&fd, [](int* f) { ::close(*f); });
  const int64_t deadline = steady_us() + timeout_us;
  auto wait = [&](short events) {
    int64_t left = deadline - steady_us();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    return ::poll(&p, 1, static_cast<int>((left + 999) / 1000)) == 1;
  };
  if (::connect(fd, found->ai_addr, found->ai_addrlen) != 0 && errno != EINPROGRESS) return "";
  size_t sent = 0;
  while (sent < request.size()) {
    if (!wait(POLLOUT)) return "";
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return "";
    sent += static_cast<size_t>(n);
  }
  std::string reply;
  for (;;) {
    if (done(std::string_view(reply))) return reply;
    if (reply.size() > (1u << 20) || !wait(POLLIN)) return "";
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return "";
    reply.append(buf, static_cast<size_t>(n));
  }
}

// The first line a memcached-protocol server sends back to a text "version" request, as it
// sent it ("VERSION 1.6.18", only printable bytes kept); empty if it answered nothing within
// timeout_us (a server that speaks only the binary protocol) or could not be reached.
std::string text_version_reply(const HostPort& server, int64_t timeout_us) {
  std::string reply = text_request(server, "version\r\n", timeout_us, [](std::string_view r) {
    return r.find('\n') != std::string_view::npos;
  });
  reply.resize(std::min(reply.find_first_of("\r\n"), reply.size()));
  std::string shown;
  for (char c : reply) shown += (c >= ' ' && c < 0x7f) ? c : '?';
  return shown;
}

// The sockets of mc's open connections. libmemcached does not hand out its descriptors, so they
// are found among this process's open files by their local port (which libmemcached does give)
// and the server's port. Costs a directory listing: called after a (re)connect, not per request.
std::vector<int> connection_fds(const memcached_st* mc) {
  std::vector<std::pair<in_port_t, in_port_t>> ends;  // local port, server port
  for (uint32_t i = 0; i < memcached_server_count(mc); ++i) {
    const memcached_instance_st* s = memcached_server_instance_by_position(mc, i);
    if (!s) continue;
    in_port_t local = memcached_server_srcport(s);
    if (local != 0 && local != static_cast<in_port_t>(-1))
      ends.emplace_back(local, memcached_server_port(s));
  }
  std::vector<int> fds;
  if (ends.empty()) return fds;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return fds;
  auto port_of = [](const sockaddr_storage& a) -> in_port_t {
    if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
    if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
    return 0;
  };
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    int fd = std::atoi(e->d_name);
    sockaddr_storage local{}, peer{};
    socklen_t ll = sizeof local, pl = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll) != 0 ||
        getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0)
      continue;
    for (auto [l, p] : ends) {
      if (port_of(local) == l && port_of(peer) == p) fds.push_back(fd);
    }
  }
  closedir(dir);
  return fds;
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
      return failed_as(classify(err));
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
                                   : classify(rc);  // pauses 10 ms once when the server is gone
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
    return failed_as(classify(rc));
  }

  void reset_batch() {
    entries_.clear();
    keys_.clear();
    next_ = sets_ = gets_ = 0;
    failed_ = fetching_ = have_result_ = false;
  }

  TargetSpec spec_;
  ClientOptions opts_;
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

std::optional<MemcachedSetCounters> read_set_counters(const TargetSpec& spec, int64_t timeout_us) {
  std::string reply = text_request(
      spec.servers.front(), "stats\r\n", timeout_us,
      [](std::string_view r) { return r.ends_with("END\r\n") || r.ends_with("ERROR\r\n"); });
  if (reply.empty()) return std::nullopt;
  MemcachedSetCounters c;
  bool any = false;
  for (const StatValue& v : parse_memcached_stats(reply)) {
    auto n = static_cast<int64_t>(v.value);
    if (v.name == "cmd_set") c.cmd_set = n, any = true;
    if (v.name == "store_too_large") c.too_large = n, any = true;
    if (v.name == "store_no_memory") c.no_memory = n, any = true;
  }
  if (!any) return std::nullopt;
  return c;
}

std::optional<SampleCheck> sample_keys_present(const TargetSpec& spec,
                                               const std::vector<std::string>& keys,
                                               int64_t timeout_us) {
  if (keys.empty()) return std::nullopt;
  const uint64_t samples = keys.size();
  std::string request = "get";
  for (const std::string& key : keys) {
    request += ' ';
    request += key;
  }
  request += "\r\n";
  // "VALUE <key> <flags> <bytes>\r\n<data>\r\n" per hit, then "END\r\n": whole once END is
  // reached walking the values by their lengths (a value may hold any bytes).
  uint64_t present = 0;
  bool ok = false;
  auto walk = [&](std::string_view r) {
    present = 0;
    size_t pos = 0;
    for (;;) {
      size_t nl = r.find("\r\n", pos);
      if (nl == std::string_view::npos) return false;
      std::string_view line = r.substr(pos, nl - pos);
      if (line == "END") return ok = true;
      if (!line.starts_with("VALUE ")) return true;  // an error line: whole, not ok
      size_t sp = line.rfind(' ');
      uint64_t bytes = std::strtoull(std::string(line.substr(sp + 1)).c_str(), nullptr, 10);
      pos = nl + 2 + bytes + 2;
      if (pos > r.size()) return false;
      ++present;
    }
  };
  std::string reply = text_request(spec.servers.front(), request, timeout_us, walk);
  if (reply.empty() || !ok) return std::nullopt;
  return SampleCheck{samples, present};
}

}  // namespace kv::drive
