// The client-stall rule, one for kvdrive's events, its reports and its search: the requests
// around a percentile spent more than kClientStallShare of their latency in kvdrive itself
// (client send + client recv: schema/README.md "Whose time is it"), and at least
// kClientStallFloorUs of it (below that, tens of µs of scheduling are kvdrive's normal cost on
// a quiet host, not a stall).
#pragma once

namespace kv {

inline constexpr double kClientStallShare = 0.5;
inline constexpr double kClientStallFloorUs = 1000;

inline bool is_client_stall(double client_us, double latency_us) {
  return client_us >= kClientStallFloorUs && client_us > kClientStallShare * latency_us;
}

}  // namespace kv
