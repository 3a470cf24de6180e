// --io: how the event engine moves plain-TCP bytes, epoll (the ready list,
// engine/loop/socket_transport.hpp) or io_uring (engine/loop/uring_transport.hpp).
#pragma once

#include <string>

namespace kv::drive {

// Why this kernel cannot run --io uring ("" when it can): a ring with provided buffers and a
// multishot recvmsg, each tried.
std::string io_uring_refusal();

}  // namespace kv::drive
