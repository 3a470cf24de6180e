// One connection of the event engine (loop/event_worker.hpp) to one server, owned by one User
// (loop/event_user.hpp): its output buffer (the codecs write commands straight into it), its
// queue of requests in flight (Flight, in send order), its reply decoder, the per-request
// timeout, connect / reconnect with backoff. Its bytes move through a Transport
// (loop/transport.hpp): a socket, plain or TLS, or a test's scripted store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/loop/codec.hpp"
#include "engine/loop/transport.hpp"
#include "engine/request_stream.hpp"
#include "stats/interval_stats.hpp"
#include "store/codec_common.hpp"

namespace kv::drive {
class EventClient;
}

namespace kv::drive::loop {

namespace st = store;

class Worker;
struct User;

// What a request expects back, kept per socket in send order.
struct Flight {
  User* user = nullptr;  // nullptr: a handshake command (AUTH / SELECT)
  Pending p{};
  st::Op op = st::Op::other;
  uint64_t start = 0;   // where its bytes begin in the socket's output stream
  uint64_t end = 0;     // where they end: it has left once the socket took that many bytes
  int64_t sent_ns = 0;  // when the send call that took its last byte began; 0: not yet
  // --wire-start kernel: the bytes written when that call returned, the key of its transmit
  // stamp, which replaces sent_ns once read (read_tx_stamps)
  uint64_t sent_through = 0;
  uint8_t redirects = 0;     // Redis Cluster: MOVED / ASK followed so far
  bool kernel_sent = false;  // sent_ns is the kernel's transmit stamp (--wire-start kernel)
};

// One connection to one server, owned by one User; what touches the socket is its Transport's.
// Its definitions: event_link.cpp (the requests' way out, their replies' way in),
// link_connect.cpp (connect, failure, timeouts, hand-back), link_stamps.cpp (when each request
// left).
class Link final : private TransportEvents {
 public:
  enum class State { up, connecting, down };

  Link(Worker& w, EventClient& c, size_t server, size_t depth);
  void adopt(int fd);
  // Appends the request to the output buffer (flushed once the current handler is done).
  void send(User* u, const Pending& p, std::string_view key, std::string_view value,
            uint8_t redirects = 0);
  // A Redis Cluster redirect to this link's node: sends the request (after ASKING when
  // `asking`) now, or once connected (connecting at once when down); fails it when the node
  // is down and not to be retried yet, or its connect fails.
  void resend(User* u, const Pending& p, bool asking, uint8_t redirects, int64_t now);
  void flush();
  void start_connect(int64_t now);
  void check(int64_t now);  // timeouts
  // Whether check() has anything to look at: a request in flight, or a connect under way. Only
  // such links are on the worker's watch list (Worker::tick), so an idle connection costs nothing
  // between its requests.
  bool needs_check() const noexcept {
    return state_ == State::connecting || (state_ == State::up && !fifo_.empty());
  }
  // Ctrl-C: every request in flight is given up; the socket is closed.
  void interrupt();
  // The phase is over: hands a clean socket back to the client (else closes it).
  void release();

  State state() const noexcept { return state_; }
  int64_t retry_at() const noexcept { return retry_at_; }
  size_t server() const noexcept { return server_; }
  // A memcached pool or a Redis Cluster: the link is one of several servers' (each backs off on
  // its own, User::to_pool).
  bool in_pool() const noexcept;
  // A new request that waits for this link's connect (started now if it is down), in flight.
  void park(User* u, const Pending& p, int64_t now);
  void wait_for_connect(User* u) { waiting_.push_back(u); }

 private:
  // A memcached pool: one of this server's requests (or probes) in pool_server_seconds.
  void count(PoolCount c);
  // TransportEvents: what the transport tells the link.
  void on_connected(int64_t now) override;
  void on_connect_failed(int64_t now) override { connect_failed(now); }
  bool on_bytes(std::string_view bytes, int64_t read_ns, int64_t arrived_ns) override {
    return decode(bytes, read_ns, arrived_ns);
  }
  void on_written(size_t n, int64_t at) override {
    written_bytes_ += n;
    mark_sent(at);
  }
  void on_drained() override { flush(); }
  void on_failed(int64_t now) override { fail(OpStatus::error, now); }
  void on_tx_stamps() override { read_tx_stamps(); }
  // Decodes what one read returned: `now` when it returned, `arrived` the kernel's receive
  // stamp of its last segment (loop/tcp_transport.hpp; 0: unknown). False: the link failed.
  bool decode(std::string_view bytes, int64_t now, int64_t arrived);
  bool complete(st::Verdict v, std::string_view value, int64_t now, int64_t arrived);
  // The requests whose last byte the socket has taken (written_bytes_) were sent at `at`: when
  // the send call that took it began (its kernel path, on loopback the store's receipt too,
  // is the wire's; a write finished by Asio later: when its handler ran).
  void mark_sent(int64_t at);
  // --wire-start kernel: asks the transport for transmit stamps once connected (keys count from
  // written_bytes_), and reads those queued into the requests they belong to.
  void enable_tx_stamps();
  void read_tx_stamps();
  // Removes the oldest request in flight.
  Flight pop_flight();
  st::Verdict out_of_step(size_t buffered, st::Verdict v) const;
  void connect_failed(int64_t now);
  void fail(OpStatus status, int64_t now);
  void close_socket();
  // writes=split: out_ in pieces, one send call per piece (splits_); what the socket does not
  // take goes out as in flush.
  void flush_split();
  void mark_dirty();
  void watch();  // onto the worker's watch list, once
  void append_asking(int64_t queued_ns);
  // A redirected request waiting for this link's connect.
  struct Parked {
    User* user;
    Pending p;
    bool asking;
    uint8_t redirects;
  };
  void send_parked(const Parked& r);

  Worker& w_;
  EventClient& client_;
  size_t server_;
  Codec codec_;
  std::unique_ptr<Transport> t_;
  State state_ = State::down;
  int64_t retry_at_ = 0;
  int64_t backoff_ns_ = 0;
  int64_t connect_started_ = 0;
  bool split_;                   // ?writes=split (plain TCP)
  std::deque<uint64_t> splits_;  // stream offsets where a set's value begins (writes=split)
  std::string out_;
  bool dirty_ = false;
  bool watched_ = false;  // on the worker's watch list
  // Bytes ever appended to out_ / written to the socket: a request whose first byte is below
  // written_bytes_ reached the store (in part at least).
  uint64_t queued_bytes_ = 0, written_bytes_ = 0;
  st::ExpectFifo<Flight> fifo_;
  size_t sent_marked_ = 0;  // the oldest this many requests in flight have their sent_ns
  uint64_t tx_base_ = 0;    // written_bytes_ when transmit stamps were asked for
  size_t tx_marked_ = 0;    // the oldest this many sent requests had their stamp (or none came)
  std::vector<User*> waiting_, waking_;
  std::vector<Parked> parked_, parking_;

  friend class Worker;
};

}  // namespace kv::drive::loop
