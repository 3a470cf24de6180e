#include "redis_cluster.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace kv::test {

namespace {
// Where the whole RESP reply starting at pos ends; npos while it is incomplete.
size_t resp_end(const std::string& r, size_t pos) {
  size_t nl = r.find("\r\n", pos);
  if (nl == std::string::npos) return std::string::npos;
  char type = r[pos];
  if (type != '$' && type != '*') return nl + 2;
  long long n = std::stoll(r.substr(pos + 1, nl - pos - 1));
  if (type == '$') {
    size_t end = n < 0 ? nl + 2 : nl + 2 + static_cast<size_t>(n) + 2;
    return r.size() >= end ? end : std::string::npos;
  }
  size_t at = nl + 2;
  for (long long i = 0; i < n; ++i) {
    if (at >= r.size()) return std::string::npos;
    at = resp_end(r, at);
    if (at == std::string::npos) return at;
  }
  return at;
}

// The bulk strings of a flat array reply.
std::vector<std::string> bulk_strings(const std::string& r) {
  std::vector<std::string> out;
  if (r.empty() || r[0] != '*') throw std::runtime_error("not an array: " + r.substr(0, 80));
  size_t at = r.find("\r\n") + 2;
  while (at < r.size() && r[at] == '$') {
    size_t nl = r.find("\r\n", at);
    auto len = static_cast<size_t>(std::stoll(r.substr(at + 1, nl - at - 1)));
    out.push_back(r.substr(nl + 2, len));
    at = nl + 2 + len + 2;
  }
  return out;
}
}  // namespace

std::string redis_command(int port, const std::vector<std::string>& args, int timeout_ms) {
  std::string req = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) req += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    ::close(fd);
    throw std::runtime_error("cannot send to port " + std::to_string(port));
  }
  auto whole = [](const std::string& r) { return resp_end(r, 0) != std::string::npos; };
  std::string reply;
  char buf[65536];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!whole(reply) && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (!whole(reply))
    throw std::runtime_error("no whole reply from port " + std::to_string(port) + " to " +
                             args.front());
  return reply;
}

namespace {
// The value of `field` in CLUSTER INFO text; empty if absent.
std::string info_field(const std::string& text, const std::string& field) {
  auto pos = text.find(field + ":");
  if (pos == std::string::npos) return "";
  auto start = pos + field.size() + 1;
  return text.substr(start, text.find('\r', start) - start);
}
}  // namespace

bool RedisCluster::start(std::string* why) {
  cli_ = find_program("redis-cli");
  if (cli_.empty()) {
    *why = "redis-cli is not installed (apt-get install redis-tools)";
    return false;
  }
  for (int i = 0; i < masters_ * (1 + replicas_); ++i) {
    auto node = std::make_unique<StoreServer>(
        StoreServer::Kind::redis,
        std::vector<std::string>{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                 "--cluster-node-timeout", std::to_string(node_timeout_ms_),
                                 // A replica syncs at once (not 5 s later): until it has, it
                                 // may not take its master's place.
                                 "--repl-diskless-sync-delay", "0",
                                 // The bus port is port + 10000 by default: past 65535 for
                                 // half of the ephemeral range free_port() draws from.
                                 "--cluster-port", std::to_string(free_port())});
    if (!node->start(why)) return false;
    ports_.push_back(node->port());
    nodes_.push_back(std::move(node));
  }
  std::vector<std::string> args{"--cluster", "create"};
  for (int p : ports_) args.push_back("127.0.0.1:" + std::to_string(p));
  args.insert(args.end(), {"--cluster-replicas", std::to_string(replicas_), "--cluster-yes"});
  std::string log = nodes_.front()->dir() + "/cluster-create.log";
  if (int rc = redis_cli(args, 120'000, log); rc != 0)
    throw std::runtime_error("redis-cli --cluster create failed (exit " + std::to_string(rc) +
                             "; see " + log + ")");
  wait_ok();
  // Every replica has its master's data (a replica that never synced does not fail over).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int p : ports_) {
    for (;;) {
      const std::string info = redis_info(p, "replication");
      if (info.find("role:master") != std::string::npos ||
          info.find("master_link_status:up") != std::string::npos)
        break;
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("replica on port " + std::to_string(p) + " never synced: " + info);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  return true;
}

std::string RedisCluster::uri() const {
  return "redis+cluster://127.0.0.1:" + std::to_string(ports_.front());
}

int RedisCluster::redis_cli(const std::vector<std::string>& args, int timeout_ms,
                            const std::string& log) const {
  std::vector<std::string> argv{cli_};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p(argv, log.empty() ? nodes_.front()->dir() + "/redis-cli.log" : log);
  return p.wait(timeout_ms);
}

std::string RedisCluster::node_id(int port) const {
  std::string r = redis_command(port, {"CLUSTER", "MYID"});
  auto nl = r.find("\r\n");
  if (r.empty() || r[0] != '$' || nl == std::string::npos)
    throw std::runtime_error("bad CLUSTER MYID reply: " + r);
  return r.substr(nl + 2, r.find("\r\n", nl + 2) - nl - 2);
}

long long RedisCluster::command_stat(const std::string& cmd, const std::string& field) const {
  long long sum = 0;
  for (int p : ports_) {
    std::string text = redis_info(p, "commandstats");
    auto line = text.find("cmdstat_" + cmd + ":");
    if (line == std::string::npos) continue;
    auto end = text.find('\r', line);
    std::string l = text.substr(line, end - line);
    auto pos = l.find(field + "=");
    while (pos != std::string::npos && pos > 0 && l[pos - 1] != ':' && l[pos - 1] != ',')
      pos = l.find(field + "=", pos + 1);  // "calls=" inside "rejected_calls="
    if (pos != std::string::npos) sum += std::stoll(l.substr(pos + field.size() + 1));
  }
  return sum;
}

long long RedisCluster::command_calls(const std::string& cmd) const {
  long long sum = 0;
  for (int p : ports_) sum += redis_command_calls(p, cmd);
  return sum;
}

int RedisCluster::migrate_slot(int slot, int from_port, int to_port, int batch,
                               int pause_ms) const {
  const std::string s = std::to_string(slot);
  const std::string from_id = node_id(from_port), to_id = node_id(to_port);
  auto expect_ok = [](const std::string& reply, const std::string& what) {
    if (reply.rfind("+OK", 0) != 0 && reply.rfind("+NOKEY", 0) != 0)
      throw std::runtime_error(what + ": " + reply);
  };
  expect_ok(redis_command(to_port, {"CLUSTER", "SETSLOT", s, "IMPORTING", from_id}), "IMPORTING");
  expect_ok(redis_command(from_port, {"CLUSTER", "SETSLOT", s, "MIGRATING", to_id}), "MIGRATING");
  int moved = 0;
  for (;;) {
    std::string r =
        redis_command(from_port, {"CLUSTER", "GETKEYSINSLOT", s, std::to_string(batch)});
    std::vector<std::string> keys = bulk_strings(r);
    if (keys.empty()) break;
    std::vector<std::string> args{"MIGRATE", "127.0.0.1", std::to_string(to_port), "", "0",
                                  "5000",    "KEYS"};
    args.insert(args.end(), keys.begin(), keys.end());
    expect_ok(redis_command(from_port, args, 10'000), "MIGRATE");
    moved += static_cast<int>(keys.size());
    if (pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
  // The new owner first, then the old one (as redis-cli does), then the rest.
  expect_ok(redis_command(to_port, {"CLUSTER", "SETSLOT", s, "NODE", to_id}), "SETSLOT NODE");
  expect_ok(redis_command(from_port, {"CLUSTER", "SETSLOT", s, "NODE", to_id}), "SETSLOT NODE");
  for (int p : ports_)
    if (p != to_port && p != from_port)
      expect_ok(redis_command(p, {"CLUSTER", "SETSLOT", s, "NODE", to_id}), "SETSLOT NODE");
  return moved;
}

void RedisCluster::wait_ok(int timeout_ms) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string last;
  for (;;) {
    bool all = true;
    for (int p : ports_) {
      last = redis_command(p, {"CLUSTER", "INFO"}, 2000);
      if (info_field(last, "cluster_state") != "ok" ||
          info_field(last, "cluster_slots_ok") != "16384" ||
          info_field(last, "cluster_known_nodes") != std::to_string(ports_.size())) {
        all = false;
        break;
      }
    }
    if (all) return;
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("the cluster did not become ok; last CLUSTER INFO: " + last);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::string RedisCluster::log_tails() const {
  std::string out;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    std::ifstream in(nodes_[i]->dir() + "/server.log");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    out += "-- port " + std::to_string(ports_[i]) + "\n";
    for (size_t j = lines.size() > 8 ? lines.size() - 8 : 0; j < lines.size(); ++j)
      out += lines[j] + "\n";
  }
  return out;
}

std::vector<int> RedisCluster::master_ports() const {
  std::vector<int> out;
  for (int p : ports_) {
    if (std::find(dead_.begin(), dead_.end(), p) != dead_.end()) continue;
    if (redis_info(p, "replication").find("role:master") != std::string::npos) out.push_back(p);
  }
  return out;
}

void RedisCluster::kill(int port) {
  for (size_t i = 0; i < ports_.size(); ++i)
    if (ports_[i] == port) {
      nodes_[i]->process().signal(SIGKILL);
      nodes_[i]->process().wait(10'000);
      dead_.push_back(port);
      return;
    }
  throw std::runtime_error("no cluster node on port " + std::to_string(port));
}

void RedisCluster::wait_ok_without(int dead_port, int timeout_ms) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string last;
  for (;;) {
    bool all = true;
    for (int p : ports_) {
      if (p == dead_port) continue;
      last = redis_command(p, {"CLUSTER", "INFO"}, 2000);
      if (info_field(last, "cluster_state") != "ok" ||
          info_field(last, "cluster_slots_ok") != "16384") {
        all = false;
        break;
      }
    }
    // Right after the kill the others still say ok: done once a replica has taken its place.
    if (all && static_cast<int>(master_ports().size()) == masters_) return;
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error(
          "no failover: the cluster did not become ok without port " + std::to_string(dead_port) +
          "; last CLUSTER INFO: " + last + "; CLUSTER NODES: " +
          redis_command(ports_[ports_.front() == dead_port ? 1 : 0], {"CLUSTER", "NODES"}, 2000) +
          "; the nodes' logs:\n" + log_tails());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace kv::test
