// OpStatus: the outcome of one request, as a store client returns it and stats/ counts it.
// Apart from the client so that stats/ can count outcomes without seeing one.
#pragma once

#include <cstdint>

namespace kv::drive {

// interrupted: given up at Ctrl-C (the event loop's Link::interrupt) before its reply
// arrived. Neither ok nor failed, and not counted: the store may or may not have executed it.
enum class OpStatus : uint8_t { ok, hit, miss, error, timeout, interrupted };

}  // namespace kv::drive
