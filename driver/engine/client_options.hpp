// How the engine's clients (EventClient, engine/loop/event_client.hpp) wait for a store: the
// per-request and connect timeout and the reconnect backoff. Apart from the client, so that
// run/ and the phase runner name both without the event loop's headers.
#pragma once

#include <cstdint>

namespace kv::drive {

struct ClientOptions {
  int64_t timeout_us = 5'000'000;  // per request and per connect
  int64_t reconnect_backoff_max_us = 2'000'000;
};

// One connection (or one pool, for memcached; one set of node connections, for a Redis
// Cluster) to a store, used by one worker thread at a time.
class EventClient;

}  // namespace kv::drive
