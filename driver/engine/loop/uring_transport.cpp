#include "engine/loop/uring_transport.hpp"

#include <linux/errqueue.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "engine/io_mode.hpp"
#include "engine/loop/tcp_transport.hpp"
#include "kvbench/clock.hpp"

namespace kv::drive::loop {
namespace {

constexpr unsigned kRingEntries = 4096;  // a loop pass's sends and re-arms, and more
constexpr uint16_t kGroup = 0;           // the provided buffers' group
constexpr size_t kControlBytes = CMSG_SPACE(sizeof(scm_timestamping));
constexpr uint32_t kGenMask = 0x3fffffffU;
constexpr int64_t kSettleNs = 1'000'000'000;
constexpr rlim_t kMaxFixedFiles = 65536;  // the kernel's table: 8 bytes a slot

// A completion's user data: the transport's number, its socket's generation, the kind.
uint32_t id_of(uint64_t data) noexcept { return static_cast<uint32_t>(data >> 32); }
uint32_t gen_of(uint64_t data) noexcept { return static_cast<uint32_t>(data >> 2) & kGenMask; }
uint64_t kind_of(uint64_t data) noexcept { return data & 3U; }
bool more(uint32_t flags) noexcept { return (flags & IORING_CQE_F_MORE) != 0; }

// Completions handed back without an interrupt (the thread's next system call or wake-up runs
// them; flagged so that liburing's peek asks for them): plain where the kernel refuses that.
// `cq_entries` (0: the kernel's default, twice `entries`): room for a reap's completions, a
// receive per buffer and a send per socket (a full queue ends multishot receives).
int init_ring(io_uring* ring, unsigned entries, unsigned cq_entries = 0) {
  io_uring_params p{};
  p.flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
  if (cq_entries > 2 * entries) {
    p.flags |= IORING_SETUP_CQSIZE;
    p.cq_entries = cq_entries;
  }
  int r = io_uring_queue_init_params(entries, ring, &p);
  if (r == -EINVAL) {
    p = io_uring_params{};
    r = io_uring_queue_init_params(entries, ring, &p);
  }
  return r;
}

std::string failed(const char* what, int neg_errno) {
  return std::string(what) + ": " + std::strerror(-neg_errno);
}

}  // namespace

// --- the probe ---------------------------------------------------------------------------------

std::string uring_refusal() {
  asio::io_context io;
  UringLoop ring(io);
  if (!ring.ok()) return ring.error();
  // A multishot recvmsg (Linux 6.0) on a socket pair: one byte written, one completion back.
  std::array<int, 2> sv{};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv.data()) != 0)
    return failed("socketpair", -errno);
  io_uring probe{};
  std::string why;
  if (const int r = init_ring(&probe, 4); r < 0) {
    why = failed("io_uring_queue_init", r);
  } else {
    // Its own ring, without the buffers: the kernel refuses the multishot flag (EINVAL) before
    // it looks for a buffer (ENOBUFS) where it does not know it.
    msghdr m{};
    io_uring_sqe* s = io_uring_get_sqe(&probe);
    io_uring_prep_recvmsg_multishot(s, sv[0], &m, 0);
    io_uring_sqe_set_flags(s, IOSQE_BUFFER_SELECT);
    s->buf_group = 7;
    io_uring_cqe* c = nullptr;
    __kernel_timespec ts{1, 0};
    int r2 = 0;
    if (::write(sv[1], "x", 1) != 1) {
      r2 = -errno;
    } else {
      io_uring_submit(&probe);
      r2 = io_uring_wait_cqe_timeout(&probe, &c, &ts);
    }
    if (r2 < 0)
      why = failed("a multishot recvmsg", r2);
    else if (c->res == -EINVAL)
      why = "this kernel has no multishot recvmsg (Linux 6.0 or later)";
    io_uring_queue_exit(&probe);
  }
  ::close(sv[0]);
  ::close(sv[1]);
  return why;
}

// --- UringLoop ---------------------------------------------------------------------------------

UringLoop::UringLoop(asio::io_context& io, size_t sockets) {
  while (buffers_ < kMaxBuffers && buffers_ < sockets) buffers_ *= 2;
  buffer_bytes_ = std::clamp(kBufferBudget / buffers_, kMinBufferBytes, kMaxBufferBytes);
  if (const int r = init_ring(&ring_, kRingEntries, 2 * buffers_); r < 0) {
    error_ = failed("io_uring_queue_init", r);
    return;
  }
  made_ = true;
  void* mem = nullptr;
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  if (::posix_memalign(&mem, page, buffers_ * sizeof(io_uring_buf)) != 0) {
    error_ = "no memory for the buffer ring";
    return;
  }
  br_ = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_ring_init(br_);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<uint64_t>(br_);
  reg.ring_entries = buffers_;
  reg.bgid = kGroup;
  if (const int r = io_uring_register_buf_ring(&ring_, &reg, 0); r < 0) {
    error_ = failed("io_uring_register_buf_ring", r);
    return;
  }
  bufs_ = std::make_unique_for_overwrite<char[]>(size_t{buffers_} * buffer_bytes_);
  for (uint32_t i = 0; i < buffers_; ++i)
    io_uring_buf_ring_add(br_, buffer(i), static_cast<unsigned>(buffer_bytes_),
                          static_cast<uint16_t>(i), io_uring_buf_ring_mask(buffers_),
                          static_cast<int>(i));
  io_uring_buf_ring_advance(br_, static_cast<int>(buffers_));
  shape_.msg_controllen = kControlBytes;
  // Asio watches a copy of the ring's descriptor (it closes what it holds).
  const int fd = ::dup(ring_.ring_fd);
  if (fd < 0) {
    error_ = failed("dup", -errno);
    return;
  }
  error_code ec;
  wake_ = std::make_unique<asio::posix::stream_descriptor>(io);
  wake_->assign(fd, ec);
  if (ec) {
    ::close(fd);
    error_ = "the ring's descriptor: " + ec.message();
    return;
  }
  ok_ = true;
  arm();
}

UringLoop::~UringLoop() {
  if (wake_) {
    error_code ec;
    wake_->close(ec);
  }
  if (made_) {
    // What the kernel still holds reads or writes the transports' memory: cancelled and waited
    // for (up to a second) before the ring and the buffers go.
    for (const Done& d : later_) account(d.data, d.flags);
    later_.clear();
    if (in_kernel_ > 0) {
      if (io_uring_sqe* s = next_sqe()) {
        io_uring_prep_cancel64(s, 0, IORING_ASYNC_CANCEL_ANY);
        io_uring_sqe_set_data64(s, kKindCancel);
      }
      io_uring_submit(&ring_);
    }
    const int64_t give_up = steady_ns() + kSettleNs;
    while (in_kernel_ > 0 && steady_ns() < give_up) {
      io_uring_cqe* c = nullptr;
      __kernel_timespec ts{0, 50'000'000};
      if (io_uring_wait_cqe_timeout(&ring_, &c, &ts) != 0 || c == nullptr) continue;
      account(c->user_data, c->flags);
      io_uring_cqe_seen(&ring_, c);
    }
    io_uring_queue_exit(&ring_);
  }
  std::free(br_);  // NOLINT(cppcoreguidelines-no-malloc): posix_memalign's
}

uint32_t UringLoop::enroll(UringTransport* t) {
  transports_.push_back(t);
  return static_cast<uint32_t>(transports_.size() - 1);
}

io_uring_sqe* UringLoop::next_sqe() {
  io_uring_sqe* s = io_uring_get_sqe(&ring_);
  if (s != nullptr) return s;
  submit();  // the queue is full: what is in it goes now
  return io_uring_get_sqe(&ring_);
}

bool UringLoop::fix(uint32_t id, int fd) {
  if (fixed_slots_ < 0) {
    // The kernel refuses a table larger than the descriptor limit (EMFILE).
    rlimit lim{};
    rlim_t slots = kMaxFixedFiles;
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < slots) slots = lim.rlim_cur;
    fixed_slots_ = io_uring_register_files_sparse(&ring_, static_cast<unsigned>(slots)) == 0
                       ? static_cast<int>(slots)
                       : 0;
  }
  if (id >= static_cast<uint32_t>(fixed_slots_)) return false;
  if (io_uring_register_files_update(&ring_, id, &fd, 1) == 1) return true;
  fixed_slots_ = 0;  // refused once: plain descriptors from now on
  return false;
}

void UringLoop::unfix(uint32_t id) {
  int none = -1;
  io_uring_register_files_update(&ring_, id, &none, 1);
}

void UringLoop::recv(uint64_t tag, int fd, bool fixed) {
  io_uring_sqe* s = next_sqe();
  if (s == nullptr) {  // cannot happen after a submit: failed as an error completion would
    dispatch(tag | kKindRecv, -EBUSY, 0);
    return;
  }
  io_uring_prep_recvmsg_multishot(s, fd, &shape_, 0);
  // The flags through liburing's own setter: scripts/tsan.supp says why.
  io_uring_sqe_set_flags(s, IOSQE_BUFFER_SELECT | (fixed ? IOSQE_FIXED_FILE : 0U));
  s->buf_group = kGroup;
  io_uring_sqe_set_data64(s, tag | kKindRecv);
  ++in_kernel_;
}

void UringLoop::send(uint64_t tag, int fd, bool fixed, const char* data, size_t len,
                     UringTransport* t) {
  io_uring_sqe* s = next_sqe();
  if (s == nullptr) {
    dispatch(tag | kKindSend, -EBUSY, 0);
    return;
  }
  io_uring_prep_send(s, fd, data, len, MSG_NOSIGNAL);
  if (fixed) io_uring_sqe_set_flags(s, IOSQE_FIXED_FILE);
  io_uring_sqe_set_data64(s, tag | kKindSend);
  ++in_kernel_;
  unsent_.push_back(t);
}

void UringLoop::cancel(uint64_t tag_kind) {
  io_uring_sqe* s = next_sqe();
  if (s == nullptr) return;
  io_uring_prep_cancel64(s, tag_kind, 0);
  io_uring_sqe_set_data64(s, kKindCancel);
}

void UringLoop::starve(UringTransport* t) {
  ++starved_total_;
  starved_.push_back(Starved{t, t->gen32()});
}

void UringLoop::submit() {
  if (!starved_.empty() && !rearming_) {
    // As many as there are buffers: the buffers come back as this pass's replies are read.
    rearming_ = true;  // a full queue submits from inside arm_recv()
    const size_t n = std::min<size_t>(starved_.size(), buffers_);
    for (size_t i = 0; i < n; ++i) starved_[i].t->rearm(starved_[i].gen);
    starved_.erase(starved_.begin(), starved_.begin() + static_cast<ptrdiff_t>(n));
    rearming_ = false;
  }
  if (io_uring_sq_ready(&ring_) == 0) return;
  const int64_t at = steady_ns();  // the sends' kernel path from here on is the wire's
  for (UringTransport* t : unsent_) t->sent_at(at);
  unsent_.clear();
  io_uring_submit(&ring_);  // a refusal (EBUSY, EAGAIN) leaves them queued for the next
}

bool UringLoop::pending() const noexcept {
  return !later_.empty() || !starved_.empty() || io_uring_cq_ready(&ring_) > 0 ||
         (IO_URING_READ_ONCE(*ring_.sq.kflags) & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW)) != 0;
}

void UringLoop::account(uint64_t data, uint32_t flags) noexcept {
  const uint64_t kind = kind_of(data);
  if ((kind == kKindRecv && !more(flags)) || kind == kKindSend) --in_kernel_;
  if (kind == kKindRecv && (flags & IORING_CQE_F_BUFFER) != 0)
    recycle(flags >> IORING_CQE_BUFFER_SHIFT);
}

void UringLoop::dispatch(uint64_t data, int32_t res, uint32_t flags) {
  const uint64_t kind = kind_of(data);
  const uint32_t id = id_of(data);
  if (kind != kKindCancel && id < transports_.size()) {
    UringTransport* t = transports_[id];
    if (kind == kKindRecv) t->on_recv(gen_of(data), res, flags);  // its buffer is read by then
    if (kind == kKindSend) t->on_send(gen_of(data), res);
  }
  account(data, flags);
}

bool UringLoop::reap() {
  bool any = false;
  if (!later_.empty()) {
    std::vector<Done> set_aside;
    set_aside.swap(later_);
    for (const Done& d : set_aside) dispatch(d.data, d.res, d.flags);
    any = true;
  }
  for (;;) {
    io_uring_cqe* c = nullptr;
    if (io_uring_peek_cqe(&ring_, &c) != 0 || c == nullptr) break;
    const Done d{c->user_data, c->res, c->flags};
    io_uring_cqe_seen(&ring_, c);  // one at a time: a handler may submit, or settle
    dispatch(d.data, d.res, d.flags);
    any = true;
  }
  return any;
}

void UringLoop::settle(UringTransport& t) {
  const auto mine = [&](uint64_t data) {
    return kind_of(data) != kKindCancel && id_of(data) == t.id() && gen_of(data) == t.gen32();
  };
  for (auto it = later_.begin(); it != later_.end();) {
    if (!mine(it->data)) {
      ++it;
      continue;
    }
    t.settled(kind_of(it->data) == kKindRecv, it->res, it->flags);
    account(it->data, it->flags);
    it = later_.erase(it);
  }
  submit();  // the cancels
  const int64_t give_up = steady_ns() + kSettleNs;
  while (t.in_kernel() && steady_ns() < give_up) {
    io_uring_cqe* c = nullptr;
    __kernel_timespec ts{0, 50'000'000};
    if (io_uring_wait_cqe_timeout(&ring_, &c, &ts) != 0 || c == nullptr) continue;
    const Done d{c->user_data, c->res, c->flags};
    io_uring_cqe_seen(&ring_, c);
    if (kind_of(d.data) == kKindCancel) continue;
    if (!mine(d.data)) {
      later_.push_back(d);  // another socket's: handled at the next reap
      continue;
    }
    t.settled(kind_of(d.data) == kKindRecv, d.res, d.flags);
    account(d.data, d.flags);
  }
}

void UringLoop::recycle(uint32_t id) noexcept {
  io_uring_buf_ring_add(br_, buffer(id), static_cast<unsigned>(buffer_bytes_),
                        static_cast<uint16_t>(id), io_uring_buf_ring_mask(buffers_), 0);
  io_uring_buf_ring_advance(br_, 1);
}

void UringLoop::arm() {
  if (armed_ || !wake_) return;
  armed_ = true;
  wake_->async_wait(asio::posix::stream_descriptor::wait_read, [this](const error_code& ec) {
    armed_ = false;
    if (ec) return;
    reap();
    arm();
  });
}

// --- UringTransport ----------------------------------------------------------------------------

UringTransport::UringTransport(SocketLoop loop, TransportEvents& events, UringLoop& ring)
    : SocketTransport(loop, events), ring_(ring), id_(ring.enroll(this)) {}

void UringTransport::on_open() { ev_.on_connected(steady_ns()); }

void UringTransport::start_reading() {
  if (!recv_armed_) arm_recv();
}

bool UringTransport::fixed() {
  if (!fixed_) fixed_ = ring_.fix(id_, sock_.native_handle());
  return fixed_;
}

void UringTransport::unfix() {
  if (!fixed_) return;
  ring_.unfix(id_);
  fixed_ = false;
}

void UringTransport::arm_recv() {
  recv_armed_ = true;
  const bool in_table = fixed();
  ring_.recv(tag(), in_table ? static_cast<int>(id_) : sock_.native_handle(), in_table);
}

void UringTransport::rearm(uint32_t gen) {
  if (gen == gen32() && !recv_armed_ && sock_.is_open()) arm_recv();
}

void UringTransport::on_recv(uint32_t gen, int32_t res, uint32_t flags) {
  if (gen != gen32() || !recv_armed_) return;  // a closed socket's (the loop recycles its buffer)
  if (!more(flags)) recv_armed_ = false;
  if (res == -ENOBUFS) {  // every buffer was taken: armed again by a submit, in turn
    if (!recv_armed_) ring_.starve(this);
    return;
  }
  if (res <= 0 || (flags & IORING_CQE_F_BUFFER) == 0) {
    ev_.on_failed(steady_ns());
    return;
  }
  char* buf = ring_.buffer(flags >> IORING_CQE_BUFFER_SHIFT);
  msghdr shape = ring_.recv_shape();
  io_uring_recvmsg_out* out = io_uring_recvmsg_validate(buf, res, &shape);
  const unsigned len = out == nullptr ? 0 : io_uring_recvmsg_payload_length(out, res, &shape);
  if (len == 0) {  // the end of the stream: the server closed the connection
    ev_.on_failed(steady_ns());
    return;
  }
  const cmsghdr* stamp = nullptr;
  for (cmsghdr* c = io_uring_recvmsg_cmsg_firsthdr(out, &shape); c != nullptr;
       c = io_uring_recvmsg_cmsg_nexthdr(out, &shape, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPING) stamp = c;
  }
  int64_t read_ns = 0;
  const int64_t arrived = arrival_now(stamp, &read_ns);
  const auto* payload = static_cast<const char*>(io_uring_recvmsg_payload(out, &shape));
  if (!ev_.on_bytes(std::string_view(payload, len), read_ns, arrived)) return;  // closed
  if (!recv_armed_ && gen == gen32()) arm_recv();  // the kernel ended it (a full buffer ring)
}

ptrdiff_t UringTransport::write(std::string_view bytes, bool now_only) {
  if (now_only) {  // writes=split: only what one send call takes now, as TcpTransport's
    const int64_t at = steady_ns();
    const ssize_t n =
        ::send(sock_.native_handle(), bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    const size_t took = n < 0 ? 0 : static_cast<size_t>(n);
    ev_.on_written(took, at);
    return static_cast<ptrdiff_t>(took);
  }
  sending_.assign(bytes);
  sent_ = 0;
  writing_ = true;
  send_rest();
  return static_cast<ptrdiff_t>(bytes.size());
}

void UringTransport::send_rest() {
  send_armed_ = true;
  send_at_ = 0;
  const bool in_table = fixed();
  ring_.send(tag(), in_table ? static_cast<int>(id_) : sock_.native_handle(), in_table,
             sending_.data() + sent_, sending_.size() - sent_, this);
}

void UringTransport::on_send(uint32_t gen, int32_t res) {
  if (gen != gen32() || !send_armed_) {  // a closed socket's send: its bytes may go now
    for (auto it = orphans_.begin(); it != orphans_.end(); ++it) {
      if (it->first != gen) continue;
      orphans_.erase(it);
      break;
    }
    return;
  }
  send_armed_ = false;
  if (res == -EAGAIN || res == -EINTR) {
    send_rest();
    return;
  }
  if (res < 0) {
    writing_ = false;
    sending_.clear();
    ev_.on_failed(steady_ns());
    return;
  }
  ev_.on_written(static_cast<size_t>(res), send_at_);
  sent_ += static_cast<size_t>(res);
  if (sent_ < sending_.size()) {  // a short send: the rest next
    send_rest();
    return;
  }
  writing_ = false;
  sending_.clear();
  sent_ = 0;
  ev_.on_drained();
}

void UringTransport::close() {
  if (recv_armed_) ring_.cancel(tag() | UringLoop::kKindRecv);
  if (send_armed_) {
    ring_.cancel(tag() | UringLoop::kKindSend);
    orphans_.emplace_back(gen32(), std::move(sending_));
    sending_ = std::string();
    sending_.reserve(4096);  // never in place (a short string's bytes live in the object)
  }
  // Out before the descriptor closes: a queued receive or send names it by number. Then out of
  // the file table, which would otherwise keep the socket open.
  if (recv_armed_ || send_armed_) ring_.submit();
  unfix();
  recv_armed_ = false;
  send_armed_ = false;
  stray_ = false;
  sent_ = 0;
  SocketTransport::close();
}

Handoff UringTransport::release(bool shutdown) {
  if (in_kernel()) {
    if (shutdown) {  // a FIN after what was written: the receive ends with it
      error_code ec;
      sock_.shutdown(tcp::socket::shutdown_both, ec);
    }
    if (recv_armed_) ring_.cancel(tag() | UringLoop::kKindRecv);
    if (send_armed_) ring_.cancel(tag() | UringLoop::kKindSend);
    ring_.settle(*this);
  }
  // Bytes that came meanwhile, or a receive the kernel kept: not a clean connection to hand on.
  if (!shutdown && (stray_ || in_kernel())) {
    close();
    return {};
  }
  return SocketTransport::release(shutdown);  // which closes this transport: out of the table
}

void UringTransport::settled(bool recv, int32_t res, uint32_t flags) {
  if (!recv) {
    send_armed_ = false;
    return;
  }
  if (res > 0 && (flags & IORING_CQE_F_BUFFER) != 0) {
    msghdr shape = ring_.recv_shape();
    io_uring_recvmsg_out* out =
        io_uring_recvmsg_validate(ring_.buffer(flags >> IORING_CQE_BUFFER_SHIFT), res, &shape);
    if (out != nullptr && io_uring_recvmsg_payload_length(out, res, &shape) > 0) stray_ = true;
  }
  if (!more(flags)) recv_armed_ = false;
}

}  // namespace kv::drive::loop

namespace kv::drive {

// Probed once per process: the checks before a run and resolve_io each ask.
std::string io_uring_refusal() {
  static const std::string why = loop::uring_refusal();
  return why;
}

}  // namespace kv::drive
