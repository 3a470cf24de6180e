// The io_uring transport (--io uring): plain TCP through one ring per worker thread instead of
// the ready list's epoll and a send and a receive call per socket.
//
// - Receives: one multishot recvmsg per socket, into the worker's provided buffers (a buffer
//   ring, registered with io_uring_register_buf_ring: liburing 2.3 has no setup helper). Each
//   completion carries its payload and, in its control part, the kernel's receive stamp
//   (SCM_TIMESTAMPING, as TcpTransport's recvmsg), so the latency split is the same on both.
// - Sends: a link's write is one send queued on the ring; every send queued during a loop pass
//   leaves in one io_uring_enter at the pass's end (Worker::flush_dirty), whose start is each
//   request's send time. A link writes again when its send completed (on_drained).
// - Registered files: each socket takes the slot of its transport's number in the ring's file
//   table (registered on first use, as large as RLIMIT_NOFILE allows, at most 65,536), so a send
//   or a receive skips the descriptor lookup and its reference count; a socket past the table,
//   or a kernel that refuses it, uses its plain descriptor.
// - The worker waits as before, on Asio: the ring's descriptor is readable while completions wait,
//   and the loop also reaps before it sleeps (UringLoop::pending), so none is missed.
//
// TLS stays on epoll (TlsTransport); --wire-start kernel needs epoll (its transmit stamps are
// read with recvmsg(MSG_ERRQUEUE)). Internal to engine/loop/.
#pragma once

#include <liburing.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/loop/socket_transport.hpp"

namespace kv::drive::loop {

class UringTransport;

// Why this kernel cannot run the io_uring transport ("" when it can): a ring, a registered
// buffer ring and a multishot recvmsg on a socket pair, each tried.
std::string uring_refusal();

class UringLoop {
 public:
  // `sockets`: how many this worker's links may open at once (its buffers are sized by it).
  explicit UringLoop(asio::io_context& io, size_t sockets = 0);
  ~UringLoop();
  UringLoop(const UringLoop&) = delete;
  UringLoop& operator=(const UringLoop&) = delete;
  bool ok() const noexcept { return ok_; }  // false: no ring (the worker uses epoll)
  const std::string& error() const noexcept { return error_; }

  // A transport's number on this ring (its completions name it); transports live as long as the
  // worker.
  uint32_t enroll(UringTransport* t);
  // Queues a multishot recvmsg / a send (submitted by submit()); `tag` is the transport's number
  // and the socket's generation.
  // `fd` is a slot of the file table where `fixed` (see fix()), else a descriptor.
  void recv(uint64_t tag, int fd, bool fixed);
  void send(uint64_t tag, int fd, bool fixed, const char* data, size_t len, UringTransport* t);
  // Puts descriptor `fd` in slot `id` of the ring's file table (made on the first call); false
  // where there is no such slot or the kernel refuses (then the descriptor is used).
  bool fix(uint32_t id, int fd);
  void unfix(uint32_t id);         // empties the slot: the table lets go of its socket
  void cancel(uint64_t tag_kind);  // the receive or the send of that tag
  // Submits what was queued: the start of this call is the send time of every send in it. A
  // socket whose receive ran out of buffers is armed again here, at most buffers() of them a
  // submit, the longest waiting first (starve()).
  void submit();
  // `t`'s receive ended for want of a free buffer (every one held by replies not yet reaped):
  // it waits to be armed again by a submit, so that thousands of readable sockets do not all
  // take a buffer each and end again with -ENOBUFS, pass after pass.
  void starve(UringTransport* t);
  // How many receives ended for want of a buffer, since the ring was made.
  uint64_t starved_total() const noexcept { return starved_total_; }
  // Completions are waiting (or the kernel holds some to flush), or sockets wait to be armed
  // again: reap() and submit before sleeping.
  bool pending() const noexcept;
  // Hands every waiting completion to its transport; true when there was one.
  bool reap();
  // A release: waits (up to 1 s) until neither a receive nor a send of `t` is in the kernel,
  // handling only `t`'s completions (the others wait for the next reap).
  void settle(UringTransport& t);

  // Provided buffers: a completion's buffer, and its return to the ring.
  char* buffer(uint32_t id) noexcept { return bufs_.get() + size_t{id} * buffer_bytes_; }
  void recycle(uint32_t id) noexcept;
  const msghdr& recv_shape() const noexcept { return shape_; }

  // The provided buffers: one per socket the worker may have (a power of two, 256 to 16,384),
  // 16 KiB each (header, stamp and up to ~16 KB of replies) while that is at most 32 MiB, then
  // smaller, down to 2 KiB (a reply larger than a buffer comes as several completions). Fewer
  // buffers than readable sockets ends the receive of the sockets past them (-ENOBUFS).
  static constexpr uint32_t kMinBuffers = 256, kMaxBuffers = 16384;
  static constexpr size_t kBufferBudget = size_t{32} << 20;
  static constexpr size_t kMaxBufferBytes = 16384, kMinBufferBytes = 2048;
  uint32_t buffers() const noexcept { return buffers_; }
  static constexpr uint64_t kKindRecv = 0, kKindSend = 1, kKindCancel = 2;

 private:
  struct Done {  // a completion set aside by settle()
    uint64_t data;
    int32_t res;
    uint32_t flags;
  };
  void arm();
  void dispatch(uint64_t data, int32_t res, uint32_t flags);
  // A completion's share of the bookkeeping: what the kernel still holds, the buffer back.
  void account(uint64_t data, uint32_t flags) noexcept;
  io_uring_sqe* next_sqe();

  io_uring ring_{};
  bool made_ = false;  // ring_ was set up
  bool ok_ = false;
  std::string error_;
  uint32_t buffers_ = kMinBuffers;
  size_t buffer_bytes_ = kMaxBufferBytes;
  std::unique_ptr<char[]> bufs_;
  io_uring_buf_ring* br_ = nullptr;  // page-aligned (freed with free())
  msghdr shape_{};                   // recvmsg's shape: no name, room for the receive stamp
  std::unique_ptr<asio::posix::stream_descriptor> wake_;  // the ring's descriptor, on Asio
  bool armed_ = false;
  std::vector<UringTransport*> transports_;
  std::vector<UringTransport*> unsent_;  // sends queued since the last submit
  std::vector<Done> later_;              // settle()'s set-aside completions
  struct Starved {
    UringTransport* t;
    uint32_t gen;
  };
  std::vector<Starved> starved_;  // receives to arm again, in the order they ran out
  uint64_t starved_total_ = 0;
  bool rearming_ = false;
  uint64_t in_kernel_ = 0;  // receives armed and sends under way, every transport
  int fixed_slots_ = -1;    // the file table's size (0: none), -1: not made yet
};

class UringTransport final : public SocketTransport {
 public:
  UringTransport(SocketLoop loop, TransportEvents& events, UringLoop& ring);
  void start_reading() override;
  ptrdiff_t write(std::string_view bytes, bool now_only) override;
  void close() override;
  Handoff release(bool shutdown) override;

  // UringLoop's: a receive / send completion of the socket generation `gen`.
  void on_recv(uint32_t gen, int32_t res, uint32_t flags);
  void on_send(uint32_t gen, int32_t res);
  void sent_at(int64_t at) noexcept { send_at_ = at; }
  uint32_t id() const noexcept { return id_; }
  uint32_t gen32() const noexcept { return static_cast<uint32_t>(gen_) & 0x3fffffffU; }
  bool in_kernel() const noexcept { return recv_armed_ || send_armed_; }
  // settle(): a completion of the current socket while it is handed back.
  void settled(bool recv, int32_t res, uint32_t flags);
  // starve()'s turn: arms the receive again if the socket of generation `gen` still wants one.
  void rearm(uint32_t gen);

 private:
  void on_open() override;
  uint64_t tag() const noexcept { return uint64_t{id_} << 32 | uint64_t{gen32()} << 2; }
  void arm_recv();
  void send_rest();
  bool fixed();  // the socket is in its slot of the ring's file table (put there if not)
  void unfix();  // out of it, before the descriptor closes or is handed on

  UringLoop& ring_;
  uint32_t id_;
  bool recv_armed_ = false;  // a multishot recvmsg of the current socket is in the kernel
  bool send_armed_ = false;  // a send of sending_[sent_..] is
  bool stray_ = false;       // bytes came while it was handed back: not handed on
  bool fixed_ = false;       // the socket is in slot id_ of the ring's file table
  size_t sent_ = 0;
  int64_t send_at_ = 0;
  // Sends of a closed socket still in the kernel, each with its generation: their bytes stay
  // alive until their completion comes.
  std::vector<std::pair<uint32_t, std::string>> orphans_;
};

}  // namespace kv::drive::loop
