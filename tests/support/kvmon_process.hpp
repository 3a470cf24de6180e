// A kvmon a test starts: its own temporary directory with the results file and the log, and a
// free loopback port it serves on. Header-only: the binary's path is the test's KV_BINARY_DIR.
#pragma once

#include <string>
#include <vector>

#include "db_query.hpp"
#include "servers.hpp"

namespace kv::test {

inline std::string kvmon_binary() { return std::string(KV_BINARY_DIR) + "/monitor/kvmon"; }

struct KvmonProcess {
  TempDir dir;
  int port = free_port();
  Process proc;
  std::string db() const { return dir.file("results.db"); }
  std::string log() const { return slurp(dir.file("kvmon.log")); }
  // kvmon --db db() SERVE 127.0.0.1:port ARGS...; SERVE: --listen (samples) or --metrics.
  void start(std::vector<std::string> args, const std::string& serve = "--listen") {
    args.insert(args.begin(),
                {kvmon_binary(), "--db", db(), serve, "127.0.0.1:" + std::to_string(port)});
    proc = Process(args, dir.file("kvmon.log"));
  }
};

}  // namespace kv::test
