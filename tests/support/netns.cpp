#include "netns.hpp"

#include <unistd.h>

#include <chrono>
#include <thread>

namespace kv::test {
namespace {

int run(const std::vector<std::string>& argv, const std::string& log, int timeout_ms) {
  Process p(argv, log);
  const int code = p.wait(timeout_ms);
  if (code == -1) p.stop();
  return code;
}

}  // namespace

bool NetNamespace::create(const TempDir& dir, const std::string& prefix, int mtu,
                          std::string* why) {
  ip_ = find_program("ip");
  if (ip_.empty()) {
    *why = "the ip command (iproute2) is missing";
    return false;
  }
  if (::geteuid() != 0) {
    *why = "needs root (ip netns)";
    return false;
  }
  name_ = prefix + "-" + std::to_string(::getpid());
  log_ = dir.file("ip.log");
  if (run({ip_, "netns", "add", name_}, log_, 30'000) != 0) {
    *why = "ip netns add " + name_ + " failed (see " + log_ + ")";
    return false;
  }
  created_ = true;
  if (run_inside({ip_, "link", "set", "lo", "mtu", std::to_string(mtu), "up"}) != 0) {
    *why = "cannot set the namespace's loopback up at MTU " + std::to_string(mtu) + " (see " +
           log_ + ")";
    return false;
  }
  return true;
}

NetNamespace::~NetNamespace() {
  if (created_) run({ip_, "netns", "del", name_}, log_, 30'000);
}

std::vector<std::string> NetNamespace::inside(std::vector<std::string> argv) const {
  argv.insert(argv.begin(), {ip_, "netns", "exec", name_});
  return argv;
}

int NetNamespace::run_inside(const std::vector<std::string>& argv, const std::string& log_path,
                             int timeout_ms) const {
  return run(inside(argv), log_path.empty() ? log_ : log_path, timeout_ms);
}

bool NetNamespace::accepts_within(int port, int timeout_ms) const {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const std::string probe = "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port);
  while (std::chrono::steady_clock::now() < end) {
    if (run(inside({"/bin/bash", "-c", probe}), log_, 10'000) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace kv::test
