// The event-loop request engine (kvdrive's only one since #16): one worker thread serves any
// number of connections on one Boost.Asio io_context. Each connection (an EventClient of the
// worker's span) is an independent user: its own request stream (RequestPicker over its own
// share of the keys / requests), its own in-flight window (depth = --pipeline; requests go out
// as soon as a slot is free, not in rounds), and in rate mode its own open-loop schedule (the
// intended send time is kept per request; latency runs from it, slip = queued - intended).
// Replies are read as they arrive and timed then, whatever the other connections do. Commands
// are written straight into the connection's output buffer by the codecs (store/resp_codec,
// store/memcached_codec); every reply is read and judged on its own (a refused memcached text
// set is an error of that request). A memcached pool routes each key with libmemcached's
// ketama (store/memcached_ring).
// Kept from the blocking path it replaced: the per-request timeout (the oldest request in flight on
// a socket; the socket is then dropped and every request on it times out), reconnect (at once after
// a lost connection, then with a growing backoff up to ClientOptions::reconnect_backoff_max_us
// while connects fail; requests meanwhile fail at most every 10 ms per connection; a memcached
// pool's servers back off each on its own, see User::to_pool), stop (Ctrl-C:
// requests in flight are given up, interrupted, counted abandoned) and abort (the phase is over: no
// new request, the ones in flight are finished). Per-second figures go into the worker's StatsSlot,
// merged by the phase runner.
#pragma once

#include "engine/worker.hpp"

namespace kv::drive {

// Runs the worker; ctx.clients must all be EventClients (loop/event_client.hpp).
void run_event_worker(const WorkerContext& ctx);

}  // namespace kv::drive
