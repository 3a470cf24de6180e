// The multi-host launchers of packaging/examples/multi-host run for real (issue 18): three
// "client hosts" (network namespaces) reached through run-over-ssh with ssh replaced by
// `ip netns exec`, each running its --segment of one run against a redis-server and a memcached
// in a fourth, "database host" namespace where kvmon listens with a token; all four joined by a
// bridge (10.214.<n>.0/24, made and removed here). Also: the Job manifest against the
// Kubernetes API models, the systemd template, and kvdrive-segment's refusals. Needs root and
// `ip netns`; skips with the reason elsewhere, fails in CI (KV_REQUIRE_SERVERS=1).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <thread>

#include "db_query.hpp"
#include "kvbench/schema.hpp"
#include "servers.hpp"

namespace {
using namespace kv::test;

const std::string kKvdrive = std::string(KV_BINARY_DIR) + "/driver/kvdrive";
const std::string kKvmon = std::string(KV_BINARY_DIR) + "/monitor/kvmon";
const std::string kExamples = std::string(KV_SOURCE_DIR) + "/packaging/examples/multi-host";

struct Output {
  int code;
  std::string text;
};

Output run(const std::vector<std::string>& argv, const TempDir& dir, int timeout_ms = 30'000,
           const std::string& name = "cmd.log") {
  static int n = 0;  // a log of its own per command (Process appends)
  std::string log = dir.file(std::to_string(++n) + "-" + name);
  Process p(argv, log);
  int code = p.wait(timeout_ms);
  if (code == -1) p.stop();
  return {code, slurp(log)};
}

// An executable shell script at `path`.
void write_script(const std::string& path, const std::string& text) {
  write_file(path, text);
  chmod(path.c_str(), 0755);
}

// Four namespaces on one bridge: "db" (.1) and client1..3 (.2..4).
class Hosts {
 public:
  bool create(const TempDir& dir, std::string* why) {
    ip_ = find_program("ip");
    if (ip_.empty()) return fail(why, "the ip command (iproute2) is missing");
    if (geteuid() != 0) return fail(why, "needs root (ip netns)");
    tag_ = std::to_string(getpid());
    net_ = "10.214." + std::to_string(getpid() % 200 + 20) + ".";
    dir_ = &dir;
    if (!ok({ip_, "netns", "add", ns("db")})) return fail(why, "ip netns add failed");
    made_.push_back(ns("db"));
    bool good = ok({ip_, "-n", ns("db"), "link", "add", "br0", "type", "bridge"}) &&
                ok({ip_, "-n", ns("db"), "addr", "add", db_address() + "/24", "dev", "br0"}) &&
                ok({ip_, "-n", ns("db"), "link", "set", "br0", "up"}) &&
                ok({ip_, "-n", ns("db"), "link", "set", "lo", "up"});
    for (int c = 1; good && c <= 3; ++c) {
      std::string client = ns("client" + std::to_string(c));
      std::string a =
          "kvm" + std::to_string(c) + "a" + tag_.substr(tag_.size() > 5 ? tag_.size() - 5 : 0);
      std::string b =
          "kvm" + std::to_string(c) + "b" + tag_.substr(tag_.size() > 5 ? tag_.size() - 5 : 0);
      good = ok({ip_, "netns", "add", client});
      if (good) made_.push_back(client);
      good =
          good && ok({ip_, "link", "add", a, "type", "veth", "peer", "name", b}) &&
          ok({ip_, "link", "set", a, "netns", ns("db")}) &&
          ok({ip_, "link", "set", b, "netns", client}) &&
          ok({ip_, "-n", ns("db"), "link", "set", a, "master", "br0", "up"}) &&
          ok({ip_, "-n", client, "addr", "add", net_ + std::to_string(c + 1) + "/24", "dev", b}) &&
          ok({ip_, "-n", client, "link", "set", b, "up"}) &&
          ok({ip_, "-n", client, "link", "set", "lo", "up"});
    }
    if (!good) return fail(why, "network setup failed (see " + dir.file("ip.log") + ")");
    return true;
  }
  ~Hosts() {
    for (const auto& n : made_) run({ip_, "netns", "del", n}, *dir_, 10'000, "ip-del.log");
  }
  std::string ns(const std::string& host) const { return "kvbench-" + host + "-" + tag_; }
  std::vector<std::string> inside(const std::string& host, std::vector<std::string> argv) const {
    argv.insert(argv.begin(), {ip_, "netns", "exec", ns(host)});
    return argv;
  }
  std::string db_address() const { return net_ + "1"; }
  const std::string& ip() const { return ip_; }

 private:
  bool ok(const std::vector<std::string>& argv) {
    auto out = run(argv, *dir_, 10'000, "ip-step.log");
    std::ofstream(dir_->file("ip.log"), std::ios::app) << out.text;
    return out.code == 0;
  }
  bool fail(std::string* why, const std::string& what) {
    *why = what;
    return false;
  }
  std::string ip_, tag_, net_;
  const TempDir* dir_ = nullptr;
  std::vector<std::string> made_;
};

// One counter from `INFO commandstats` or memcached `stats`, asked inside the db namespace.
int64_t counter(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern))) return -1;
  return std::stoll(m[1]);
}

bool wait_for(const std::function<bool()>& ready, int timeout_ms) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < until) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST(MultiHost, ThreeClientNamespacesOverSshSendExactlyWhatTheServersCount) {
  TempDir dir;
  Hosts hosts;
  std::string why;
  std::string redis_bin = find_program("redis-server"), memcached_bin = find_program("memcached"),
              redis_cli = find_program("redis-cli");
  if (redis_bin.empty() || memcached_bin.empty() || redis_cli.empty())
    why = "redis-server, redis-cli or memcached is not installed";
  if (why.empty()) hosts.create(dir, &why);
  if (!why.empty()) {
    if (servers_required()) FAIL() << "cannot build four hosts here: " << why;
    GTEST_SKIP() << why;
  }
  const std::string db = hosts.db_address();
  Process redis(hosts.inside("db", {redis_bin, "--port", "6379", "--bind", db, "--save", "",
                                    "--dir", dir.path(), "--protected-mode", "no"}),
                dir.file("redis.log"));
  Process memcached(
      hosts.inside("db", {memcached_bin, "-p", "11211", "-l", db, "-U", "0", "-u", "root"}),
      dir.file("memcached.log"));
  write_file(dir.file("token"), "multi-host-token-0123456789\n");
  chmod(dir.file("token").c_str(), 0600);
  // (ip netns exec execs the program: the pids are the stores'.)
  Process kvmon(hosts.inside("db", {kKvmon, "--db", dir.file("kvmon.db"), "--pid",
                                    std::to_string(redis.pid()), "--pid",
                                    std::to_string(memcached.pid()), "--interval", "200ms",
                                    "--listen", db + ":7070", "--token-file", dir.file("token")}),
                dir.file("kvmon.log"));
  auto redis_info = [&](const std::string& section) {
    return run(hosts.inside("db", {redis_cli, "-h", db, "-p", "6379", "INFO", section}), dir,
               10'000, "redis-cli.log")
        .text;
  };
  auto memcached_stats = [&] {
    return run(hosts.inside("db", {"/bin/bash", "-c",
                                   "exec 3<>/dev/tcp/" + db +
                                       "/11211; printf 'stats\\r\\nquit\\r\\n' >&3; cat <&3"}),
               dir, 10'000, "mc-stats.log")
        .text;
  };
  ASSERT_TRUE(wait_for(
      [&] { return redis_info("server").find("redis_version") != std::string::npos; }, 15'000))
      << slurp(dir.file("redis.log"));
  ASSERT_TRUE(
      wait_for([&] { return memcached_stats().find("STAT pid") != std::string::npos; }, 15'000))
      << slurp(dir.file("memcached.log"));
  // kvmon listens before any segment connects to it.
  ASSERT_TRUE(wait_for(
      [&] {
        return run(hosts.inside("db", {"/bin/bash", "-c", "exec 3<>/dev/tcp/" + db + "/7070"}), dir,
                   10'000, "kvmon-up.log")
                   .code == 0;
      },
      15'000))
      << slurp(dir.file("kvmon.log"));

  // The workload, the same file for every host; ssh and scp replaced by namespace hops (every
  // namespace shares this file system, so scp is a copy).
  write_file(dir.file("bench.toml"),
             "[run]\ntarget = [\"redis://" + db + ":6379\", \"memcached://" + db +
                 ":11211\"]\nkeys = 3000\nthreads = 3\nphases = \"load,mixed\"\n"
                 "requests = 6000\nmonitor = \"" +
                 db + ":7070\"\nmonitor-token-file = \"" + dir.file("token") + "\"\n");
  write_script(dir.file("ssh"),
               "#!/bin/bash\n# ssh HOST COMMAND: COMMAND in HOST's namespace\nhost=$1; shift\n"
               "exec " +
                   hosts.ip() + " netns exec kvbench-$host-" + std::to_string(getpid()) +
                   " /bin/bash -c \"$*\"\n");
  write_script(
      dir.file("scp"),
      "#!/bin/bash\n# scp [-q] SRC... DEST with HOST: prefixes dropped\n"
      "args=(); for a in \"$@\"; do [[ $a == -q ]] && continue; args+=(\"${a#*:}\"); done\n"
      "exec cp \"${args[@]}\"\n");
  const std::string out = dir.file("out");
  auto launch =
      run({"/usr/bin/env", "SSH=" + dir.file("ssh"), "SCP=" + dir.file("scp"),
           "KV_REMOTE_KVDRIVE=" + kKvdrive, "KVDRIVE=" + kKvdrive, "KV_REMOTE_DIR=" + dir.path(),
           "/bin/bash", kExamples + "/run-over-ssh", "--config", dir.file("bench.toml"), "--group",
           "ns-three", "--start-in", "3s", "--out", out, "client1", "client2", "client3"},
          dir, 180'000, "run-over-ssh.log");
  ASSERT_EQ(launch.code, 0) << launch.text << "segment 1: " << slurp(out + "/segment-1-of-3.log")
                            << "segment 2: " << slurp(out + "/segment-2-of-3.log")
                            << "segment 3: " << slurp(out + "/segment-3-of-3.log");
  EXPECT_NE(launch.text.find("start at"), std::string::npos) << launch.text;
  kvmon.signal(SIGTERM);
  EXPECT_EQ(kvmon.wait(10'000), 0) << slurp(dir.file("kvmon.log"));

  // Each segment's file: one completed run of the group, its own segment, its own client host
  // address (the namespace it ran in), kvmon's samples pulled across the bridge.
  int64_t sets = 0, gets = 0, started_min = INT64_MAX, started_max = 0;
  for (int i = 1; i <= 3; ++i) {
    std::string path = out + "/segment-" + std::to_string(i) + "-of-3.db";
    ASSERT_TRUE(std::filesystem::exists(path)) << launch.text;
    auto f = kv::open_results_db(path);
    EXPECT_EQ(query_int(f,
                        "SELECT count(*) FROM runs WHERE status = 'completed' AND run_group = "
                        "'ns-three' AND process_index = " +
                            std::to_string(i - 1) + " AND process_count = 3"),
              1)
        << path;
    EXPECT_EQ(query_text(f, "SELECT value FROM run_metadata WHERE name = 'segment'"),
              std::to_string(i) + "/3");
    EXPECT_GE(query_int(f, "SELECT count(*) FROM process_samples WHERE remote_ts_us IS NOT NULL"),
              2)
        << path;
    sets += query_int(f, "SELECT COALESCE(SUM(ops), 0) FROM driver_seconds WHERE op = 'set'");
    gets += query_int(f, "SELECT COALESCE(SUM(ops), 0) FROM driver_seconds WHERE op = 'get'");
    int64_t started =
        query_int(f,
                  "SELECT MIN(started_ts_us) FROM phases p JOIN targets t USING (target_id) "
                  "WHERE t.ordinal = 0 AND p.name = 'load'");
    started_min = std::min(started_min, started);
    started_max = std::max(started_max, started);
  }
  // The three segments together are the whole run, exactly as the servers counted it.
  std::string info = redis_info("commandstats"), stats = memcached_stats();
  const int64_t redis_sets = counter(info, "cmdstat_set:calls=(\\d+)");
  const int64_t redis_gets = counter(info, "cmdstat_get:calls=(\\d+)");
  const int64_t mc_sets = counter(stats, "STAT cmd_set (\\d+)");
  const int64_t mc_gets = counter(stats, "STAT cmd_get (\\d+)");
  EXPECT_EQ(sets, redis_sets + mc_sets) << info << stats;
  EXPECT_EQ(gets, redis_gets + mc_gets) << info << stats;
  // load: every key once per store; mixed: --requests per store.
  EXPECT_EQ(sets + gets, 2 * (3000 + 6000));
  // run-over-ssh merged the three files (kvdrive merge): the whole run in one file, with the
  // kvmon samples each kvdrive pulled (its copy of the one session, in its own time base;
  // identical copies are kept once): every sample time of every file is there.
  const std::string merged = out + "/ns-three.db";
  ASSERT_TRUE(std::filesystem::exists(merged)) << launch.text;
  {
    auto m = kv::Database::open_read_only(merged);
    EXPECT_EQ(query_int(m, "SELECT count(*) FROM runs WHERE run_group = 'ns-three'"), 3);
    EXPECT_EQ(query_int(m, "SELECT SUM(ops) FROM driver_seconds WHERE op = 'set'"), sets);
    EXPECT_EQ(query_int(m, "SELECT SUM(ops) FROM driver_seconds WHERE op = 'get'"), gets);
    const int64_t sessions = query_int(m, "SELECT count(*) FROM monitor_sessions");
    EXPECT_GE(sessions, 1);
    EXPECT_LE(sessions, 3);
    std::set<int64_t> want, got;
    for (int i = 1; i <= 3; ++i) {
      auto f = kv::Database::open_read_only(out + "/segment-" + std::to_string(i) + "-of-3.db");
      kv::Statement q = f.prepare("SELECT ts_us FROM process_samples");
      while (q.step()) want.insert(q.column_int(0));
    }
    kv::Statement q = m.prepare("SELECT ts_us FROM process_samples");
    while (q.step()) got.insert(q.column_int(0));
    EXPECT_EQ(got, want);
    EXPECT_FALSE(got.empty());
  }
  // One instant for the three hosts' first phase (--start-at from one clock).
  EXPECT_LT(started_max - started_min, 1'000'000) << "the segments started apart";
}

TEST(MultiHostExamples, JobManifestMatchesTheKubernetesApiModels) {
  TempDir dir;
  if (!std::filesystem::exists("/usr/bin/python3") ||
      run({"/usr/bin/python3", "-c", "import kubernetes, yaml"}, dir).code != 0) {
    if (servers_required()) FAIL() << "python3-kubernetes is not installed";
    GTEST_SKIP() << "python3-kubernetes is not installed";
  }
  auto good = run({"/usr/bin/python3", kExamples + "/check-k8s-manifest"}, dir);
  EXPECT_EQ(good.code, 0) << good.text;
  EXPECT_NE(good.text.find("matches the Kubernetes API models"), std::string::npos) << good.text;
  // The check can fail: a misspelt field, a number as a string, a Job that is not Indexed.
  std::string manifest = slurp(kExamples + "/kvdrive-job.yaml");
  const std::vector<std::pair<std::string, std::string>> breaks = {
      {"completionMode: Indexed", "completionmode: Indexed"},
      {"completions: 3", "completions: \"3\""},
      {"completionMode: Indexed", "completionMode: NonIndexed"},
      {"claimName: kvbench-results", "claimNam: kvbench-results"}};
  for (const auto& [from, to] : breaks) {
    std::string broken = manifest;
    ASSERT_NE(broken.find(from), std::string::npos) << from;
    broken.replace(broken.find(from), from.size(), to);
    write_file(dir.file("broken.yaml"), broken);
    auto bad =
        run({"/usr/bin/python3", kExamples + "/check-k8s-manifest", dir.file("broken.yaml")}, dir);
    EXPECT_EQ(bad.code, 1) << to << "\n" << bad.text;
  }
}

TEST(MultiHostExamples, SystemdTemplateVerifies) {
  TempDir dir;
  std::string analyze = find_program("systemd-analyze");
  if (analyze.empty()) {
    if (servers_required()) FAIL() << "systemd-analyze is not installed";
    GTEST_SKIP() << "systemd-analyze is not installed";
  }
  // Verified as installed, with the script where the unit finds it in the source tree.
  std::string unit = slurp(kExamples + "/kvdrive-segment@.service");
  const std::string installed = "/usr/lib/kvdrive/kvdrive-segment";
  ASSERT_NE(unit.find(installed), std::string::npos);
  unit.replace(unit.find(installed), installed.size(), kExamples + "/kvdrive-segment");
  std::filesystem::create_directories(dir.file("units"));
  write_file(dir.file("units/kvdrive-segment@2.service"), unit);
  auto v = run({analyze, "verify", "--man=no", dir.file("units/kvdrive-segment@2.service")}, dir);
  EXPECT_EQ(v.code, 0) << v.text;
  EXPECT_EQ(v.text.find("kvdrive-segment@"), std::string::npos) << v.text;
}

TEST(MultiHostExamples, SegmentScriptRefusesBadSettingsWithOneLineAndExit2) {
  TempDir dir;
  write_file(dir.file("bench.toml"), "[run]\ntarget = \"redis://127.0.0.1:1\"\n");
  const std::string script = kExamples + "/kvdrive-segment";
  auto with = [&](std::vector<std::string> env) {
    std::vector<std::string> argv{"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "KVDRIVE=" + kKvdrive,
                                  "KV_RESULTS_DIR=" + dir.file("r")};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {"/bin/bash", script});
    return run(argv, dir);
  };
  const std::string config = "KV_CONFIG=" + dir.file("bench.toml");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"KV_SEGMENT=1", config, "KV_GROUP=g", "KV_START_AT=@1"}, "KV_SEGMENTS"},
      {{"KV_SEGMENTS=3", "KV_SEGMENT=4", config, "KV_GROUP=g", "KV_START_AT=@1"}, "within 1..3"},
      {{"KV_SEGMENTS=3", config, "KV_GROUP=g", "KV_START_AT=@1"}, "KV_SEGMENT"},
      {{"KV_SEGMENTS=3", "JOB_COMPLETION_INDEX=x", config, "KV_GROUP=g", "KV_START_AT=@1"},
       "index"},
      {{"KV_SEGMENTS=3", "KV_SEGMENT=1", "KV_GROUP=g", "KV_START_AT=@1"}, "KV_CONFIG"},
      {{"KV_SEGMENTS=3", "KV_SEGMENT=1", config, "KV_START_AT=@1"}, "KV_GROUP"},
      {{"KV_SEGMENTS=3", "KV_SEGMENT=1", config, "KV_GROUP=g", "KV_START_AT=+10s"},
       "absolute time"},
  };
  for (const auto& [env, names] : cases) {
    auto out = with(env);
    EXPECT_EQ(out.code, 2) << names << ": " << out.text;
    EXPECT_NE(out.text.find(names), std::string::npos) << out.text;
    EXPECT_EQ(std::count(out.text.begin(), out.text.end(), '\n'), 1) << out.text;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("r/segment-1-of-3.db")));
  // The Job's 0-based index is segment index + 1: JOB_COMPLETION_INDEX=2 of 3 is segment 3/3,
  // handed to kvdrive, whose own check of the start time (long past) refuses it with exit 2.
  auto third = with(
      {"KV_SEGMENTS=3", "JOB_COMPLETION_INDEX=2", config, "KV_GROUP=g", "KV_START_AT=@1000000000"});
  EXPECT_EQ(third.code, 2) << third.text;
  EXPECT_NE(third.text.find("start-at"), std::string::npos) << third.text;
  // An earlier run's file is never reused.
  std::filesystem::create_directories(dir.file("r"));
  write_file(dir.file("r/segment-2-of-3.db"), "earlier");
  auto taken = with(
      {"KV_SEGMENTS=3", "KV_SEGMENT=2", config, "KV_GROUP=g", "KV_START_AT=2099-01-01T00:00:00Z"});
  EXPECT_EQ(taken.code, 2) << taken.text;
  EXPECT_NE(taken.text.find("exists already"), std::string::npos) << taken.text;
  EXPECT_EQ(slurp(dir.file("r/segment-2-of-3.db")), "earlier");
}

}  // namespace
