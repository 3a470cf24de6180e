// The plain-TCP transport's primitives that the latency split needs (loop/socket_transport.cpp):
// a socket that has the kernel stamp every segment it receives, and a read that returns the
// bytes with the time the kernel received the last segment among them.
//
// The stamp is the kernel's software receive timestamp (SO_TIMESTAMPING with
// SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE): taken when the segment reached the
// socket layer (after the NIC, the driver and the IP/TCP receive path, before the socket's
// queue), on CLOCK_REALTIME. What lies between it and the read returning is the client's
// receive path: waking the thread, the scheduler, the read itself. A read that returns several
// segments carries the stamp of the last one, so replies read together share the later time:
// the split charges their earlier arrival to the client's receive part, never to the store.
//
// With --wire-start kernel the wire also starts at a kernel stamp: the software transmit stamp
// (SOF_TIMESTAMPING_TX_SOFTWARE) of each send's last byte, taken as the packet is handed to the
// device (where a packet capture sees it). The kernel queues it on the socket's error queue,
// keyed by the byte count since it was enabled (SOF_TIMESTAMPING_OPT_ID); reading it costs a
// recvmsg(MSG_ERRQUEUE), and its arrival raises EPOLLERR on the socket.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "engine/loop/transport.hpp"

namespace kv::drive::loop {

// Asks the kernel to stamp every segment `fd` receives; false when it refused. Set it as soon
// as the socket exists: on this kernel the first segment after the setsockopt carried no stamp.
bool enable_rx_timestamps(int fd) noexcept;

// recvmsg(2) into buf: the bytes read (0 at end of stream, -1 with errno as recv), and in
// *arrived_ns the kernel's receive stamp of the last segment read, moved to the steady clock
// (kvbench/clock.hpp's steady_ns) by the wall-steady offset read right after the read; 0 when the
// kernel gave no stamp (not enabled, or the first segment after enabling) or the stamp lies
// outside [read time - 10 s, read time] (a wall clock stepped in between). With `read_ns`, also
// the steady clock right after the read (the time its replies were read: no clock read more).
ssize_t read_stamped(int fd, char* buf, size_t len, int64_t* arrived_ns,
                     int64_t* read_ns = nullptr) noexcept;

// A receive stamp read some other way (the io_uring transport's recvmsg): the clocks read now,
// *read_ns the steady one, and the stamp of `c` (an SCM_TIMESTAMPING message; null: none) moved
// to it as read_stamped's; 0 when absent or out of range.
int64_t arrival_now(const cmsghdr* c, int64_t* read_ns) noexcept;

// Also asks the kernel to stamp the last byte of every send on `fd` when it leaves for the
// device; false when it refused. Call once connected, with nothing unacknowledged in flight:
// a stamp's key counts the bytes written from here on (the key of a send is its last byte's
// index: the bytes written through it, minus one, modulo 2^32).
bool enable_tx_timestamps(int fd) noexcept;

// One message from fd's error queue. `stamp`: a transmit stamp, with its key and its time moved
// to the steady clock as read_stamped's (*sent_ns 0 when it lies outside [now - 10 s, now]);
// `other`: a message that is not one (read and dropped); `empty`: nothing queued (or an error).
TxRead read_tx_stamp(int fd, uint32_t* key, int64_t* sent_ns) noexcept;

}  // namespace kv::drive::loop
