#pragma once
// A network namespace a test makes for itself and removes when done (`ip netns add`, `ip netns
// exec`, `ip netns del`). A test uses one when it needs something the host's network does not
// have and must not get, e.g. a loopback with an Ethernet MTU or a rate-limited loopback.
// Its processes go through inside(); what they write to files is where the test can read it,
// because `ip netns exec` changes only the network (and /sys).
#include <string>
#include <vector>

#include "servers.hpp"

namespace kv::test {

class NetNamespace {
 public:
  NetNamespace() = default;
  NetNamespace(const NetNamespace&) = delete;
  NetNamespace& operator=(const NetNamespace&) = delete;
  // Removes the namespace if create() made it (its processes must be gone first: declare it
  // before them).
  ~NetNamespace();

  // Makes "<prefix>-<pid>" with its loopback up at `mtu` bytes. False, with `why` saying
  // what is missing, when it cannot (not root, no iproute2, ...). Commands log to dir/ip.log.
  bool create(const TempDir& dir, const std::string& prefix, int mtu, std::string* why);
  // argv run inside the namespace: {"ip", "netns", "exec", name, argv...}.
  std::vector<std::string> inside(std::vector<std::string> argv) const;
  // Runs argv inside and waits, its output into `log_path` (log() when empty); its exit code,
  // or -1 (it is killed) after timeout_ms.
  int run_inside(const std::vector<std::string>& argv, const std::string& log_path = "",
                 int timeout_ms = 30'000) const;
  // True once 127.0.0.1:port inside accepts a connection, false after timeout_ms.
  bool accepts_within(int port, int timeout_ms) const;
  const std::string& log() const { return log_; }

 private:
  std::string ip_, name_, log_;
  bool created_ = false;
};

}  // namespace kv::test
