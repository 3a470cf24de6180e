// The event engine's transport seam: a Link (loop/event_link.hpp) keeps the requests' bookkeeping
// (what is in flight, timeouts, redirects, backoff, when each request left) and moves bytes
// through a Transport: connect, write, bytes read with the time they arrived, close, hand back.
// TcpTransport and TlsTransport (loop/socket_transport.hpp) are the sockets; a test's transport
// scripts a store in process (tests/driver/fake_transport.hpp).
//
// Shaped for readiness- and completion-based I/O alike: the link never waits on a socket. It
// hands bytes to write() and learns what left through on_written, and replies come to it as
// on_bytes whenever the transport has read them (a readiness transport when the socket was
// readable, a completion transport when its read completed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace kv::drive {
class LoopWaiter;
struct SocketAddress;
namespace store {
class TlsSession;
}
}  // namespace kv::drive

namespace kv::drive::loop {

// What a transport tells its link, always from the worker's loop (never from inside a call
// the link made, except on_written from write()). A handler may close the transport
// (Link::fail): after on_bytes returned false, or after on_failed / on_connect_failed, the
// transport does nothing more with what it was doing.
class TransportEvents {
 public:
  virtual void on_connected(int64_t now) = 0;       // the connect (and a TLS handshake) is done
  virtual void on_connect_failed(int64_t now) = 0;  // refused, unreachable, a handshake refused
  // `bytes` were read at `read_ns` (the steady clock); `arrived_ns`: when the kernel received
  // the last segment among them (0: unknown). False: the link closed the transport.
  virtual bool on_bytes(std::string_view bytes, int64_t read_ns, int64_t arrived_ns) = 0;
  // `n` more bytes left through a send call that began at `at` (n may be 0).
  virtual void on_written(size_t n, int64_t at) = 0;
  virtual void on_drained() = 0;            // what write() could not send at once has gone out
  virtual void on_failed(int64_t now) = 0;  // the connection failed or the server closed it
  // --wire-start kernel: transmit stamps may be waiting (Transport::read_tx_stamp); called
  // before each read.
  virtual void on_tx_stamps() = 0;

 protected:
  ~TransportEvents() = default;
};

// A connection handed back at a phase's end (fd -1: none), with its TLS session (null: plain).
struct Handoff {
  int fd = -1;
  std::unique_ptr<store::TlsSession> tls;
};

// One transmit stamp (--wire-start kernel): see loop/tcp_transport.hpp's read_tx_stamp.
enum class TxRead { stamp, other, empty };

class Transport {
 public:
  virtual ~Transport() = default;
  // A connection EventClient opened (and its TLS session, null for plain TCP), now this
  // transport's; false when it cannot be used (it is closed).
  virtual bool adopt(int fd, std::unique_ptr<store::TlsSession> tls) = 0;
  // Connects (and handshakes) a closed transport (Link::start_connect closes it first); the
  // outcome comes as on_connected or on_connect_failed, from the loop even when it is known at
  // once.
  virtual void connect(const SocketAddress& to, bool nodelay) = 0;
  // Reads until closed: each read's bytes come as on_bytes.
  virtual void start_reading() = 0;
  // Sends `bytes` (connected, not writing()): what leaves at once is reported (on_written)
  // before it returns, the rest is copied and sent as the socket drains (on_written, then
  // on_drained). `now_only`: send only what leaves at once, keep nothing; the return is then
  // how many bytes left. Else it is bytes.size(). -1: the connection failed (the link fails).
  virtual ptrdiff_t write(std::string_view bytes, bool now_only) = 0;
  virtual bool writing() const = 0;  // a write is still under way
  // Drops the connection and anything under way: no event comes after it.
  virtual void close() = 0;
  // Hands the connection back (shut down first when `shutdown`: a FIN after what was
  // written), then is closed.
  virtual Handoff release(bool shutdown) = 0;
  // --wire-start kernel: asks for transmit stamps (false: not available, e.g. TLS), and reads
  // one (a key: the bytes written through that send call since they were asked for, minus 1).
  virtual bool enable_tx_stamps() { return false; }
  virtual TxRead read_tx_stamp(uint32_t* /*key*/, int64_t* /*sent_ns*/) { return TxRead::empty; }
};

// Makes the transports of a client's links in place of sockets (EventClient::set_transports):
// a test's scripted store. `loop` is the worker's waiter, for the transport's timed events.
class TransportFactory {
 public:
  virtual ~TransportFactory() = default;
  virtual std::unique_ptr<Transport> make(size_t server, TransportEvents& events,
                                          LoopWaiter& loop) = 0;
};

}  // namespace kv::drive::loop
