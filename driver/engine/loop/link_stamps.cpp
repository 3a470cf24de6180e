// When each request left (loop/event_link.hpp, Flight::sent_ns): the send call that took its
// last byte, or with --wire-start kernel the kernel's transmit stamp of that call. Apart from
// event_link.cpp so the socket's I/O and the stamps' bookkeeping read on their own.
#include <cstdint>

#include "engine/loop/event_link.hpp"
#include "engine/loop/event_loop.hpp"

namespace kv::drive::loop {

void Link::mark_sent(int64_t at) {
  while (sent_marked_ < fifo_.size() && fifo_.at(sent_marked_).end <= written_bytes_) {
    Flight& f = fifo_.at(sent_marked_++);
    f.sent_ns = at;
    f.sent_through = written_bytes_;
  }
}

void Link::enable_tx_stamps() {
  if (w_.ctx.workload.wire_start_kernel) t_->enable_tx_stamps();  // TLS: none (no call begins one)
  tx_base_ = written_bytes_;
  tx_marked_ = sent_marked_;  // sent before: no stamp will come
}

// Each send call's stamp belongs to the requests whose last byte that call took: those whose
// sent_through is its key's byte count. A stamp for an earlier call (a partial write, the
// handshake's) is passed over; a request whose stamp never came (the queue overflowed, or a
// write Asio split) keeps its send call's start.
void Link::read_tx_stamps() {
  while (tx_marked_ < sent_marked_) {
    uint32_t key = 0;
    int64_t at = 0;
    const TxRead r = t_->read_tx_stamp(&key, &at);
    if (r == TxRead::empty) return;
    if (r != TxRead::stamp) continue;
    // The key is (bytes written through that call - tx_base_ - 1) modulo 2^32, and that call
    // took no byte past written_bytes_.
    const auto behind = static_cast<uint32_t>(written_bytes_ - tx_base_ - 1 - key);
    const uint64_t through = written_bytes_ - behind;
    while (tx_marked_ < sent_marked_) {
      Flight& f = fifo_.at(tx_marked_);
      if (f.sent_through > through) break;  // sent by a later call: the next stamp's
      ++tx_marked_;
      // Never before its call began: a wall clock stepped between the two reads.
      if (f.sent_through == through && at >= f.sent_ns) {
        f.sent_ns = at;
        f.kernel_sent = true;
      }
    }
  }
}

}  // namespace kv::drive::loop
