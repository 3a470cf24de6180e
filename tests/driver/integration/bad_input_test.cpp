// Bad input for the real kvdrive binary, one table per kind: the workload options on the command
// line, as config file keys and as scenario file lines; scenario names and files; target URIs;
// the other options of run (config files, report, results files, subcommands:
// bad_input_files_test.cpp). Each row must exit 2, print one line (stdout and stderr together)
// naming the option and the value, and write nothing: a results file holding an earlier run
// stays byte-identical and a new one is not created. No store runs: the targets point at a port
// nothing listens on, so everything must be refused before connecting.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "bad_input_util.hpp"

namespace kv::drive {
namespace {

// Bad values of every workload option (the table in driver/workload/workload_options.cpp). Each row
// is refused naming the option and the value, whichever way it arrives.
struct BadValues {
  std::string option;
  std::vector<std::string> values;
};

const std::vector<BadValues>& bad_workload_values() {
  static const std::vector<std::string> counts = {
      "ten", "-1", "99999999999999999999", "1e400", "64Ti", "", "1.5", "0x10"};
  // 2562048h: as nanoseconds past a clock reading, beyond int64 (was accepted and overflowed).
  static const std::vector<std::string> durations = {
      "abc",      "-1",    "99999999999999999999", "1e400", "64Ti", "", "5parsecs", "-0.5s",
      "2562048h", "87601h"};
  static const std::vector<std::string> ints = {"abc",   "-1",  "0", "99999999999999999999",
                                                "1e400", "1.5", "",  "5000"};
  static const std::vector<BadValues> all = [] {
    std::vector<BadValues> v = {
        {"phases", {"abc", "load,,read", "", "load,bogus", "LOAD", "-1"}},
        {"keys", counts},
        {"value-size",
         {"abc", "-5", "0", "99999999999999999999", "1e400", "64Ti", "", "65M", "1000-10", "1K:0",
          "1K:x", "100-", "1K:60,", "1.5"}},
        {"key-pattern",
         {"abc", "zipf:-1", "zipf:abc", "zipf:1e400", "zipf:0", "zipfx", "", "0", "hotset:0:0.9",
          "hotset:0.1", "hotset:0.1:2"}},
        {"requests", counts},
        {"duration", durations},
        {"ratio",
         {"abc", "-1:10", "0:0", "1:", ":1", "x:1", "99999999999999999999:1", "", "1e400:1",
          "1:2:3", "0"}},
        {"mix",
         {"abc", "get", "get:x", "get:-1", "get:60,get:10", "get:0,set:0", "fetch:1", "", "get:1,",
          "get:2000000", "GET:1"}},
        {"hit-rate", {"abc", "-0.1", "1.5", "1e400", "nan", "inf", "", "50%"}},
        {"rate", {"abc", "-1", "1e400", "2e9", "nan", "", "-inf"}},
        {"spin-budget", {"abc", "-1", "101", "101%", "%", "", "nan", "10%%", "1e400"}},
        {"pace-granularity", {"abc", "-1ms", "2s", "1.5m", "", "1e400", "10xs"}},
        {"wire-start", {"abc", "", "Kernel", "send", "call,kernel"}},
        {"io", {"abc", "", "Uring", "io_uring", "epoll,uring"}},
        {"warmup", durations},
        {"threads", ints},
        {"connections", {"abc", "-1", "0", "99999999999999999999", "1e400", "1.5", "", "200000"}},
        {"pipeline", ints},
        {"key-prefix", {"a b", "new\nline", std::string(300, 'k')}},
        {"ttl",
         {"abc", "-1", "99999999999999999999", "1e400", "64Ti", "", "1.5s", "2000000h",
          "1s:", "1s:0", ":5", "1s:5,x", "1.5s:1", "1s:5,,2s:5"}},
        {"key-size", {"abc", "0", "251", "1K", "10-5", "16:0", "16:x", "", "-3"}},
        {"seed", {"abc", "-1", "99999999999999999999", "1e400", "", "1.5"}},
        {"trace-timing", {"abc", "", "Recorded", "slow", "fast,recorded"}},
        {"speed", {"abc", "0", "-1", "1e400", "nan", "", "2000000", "inf"}},
        {"trace-keys-scale", {"abc", "0", "-1", "1.5", "1e400", "", "2000", "nan"}},
    };
    v.front().values.push_back("read,mixed,x");
    v[1].values.push_back("0");  // keys: 0 is no key space
    // keys: more than 2^32 (Redis's limit per instance); 10^12 was accepted.
    for (const char* k : {"1000000000000", "4294967297", "5G"}) v[1].values.push_back(k);
    v[4].values.push_back("1000000000000001");  // requests: above 10^15
    return v;
  }();
  return all;
}

TEST_F(KvdriveBadInput, WorkloadOptionsOnTheCommandLine) {
  std::vector<Case> cases;
  for (const auto& [option, values] : bad_workload_values())
    for (const auto& v : values) cases.push_back({run_args({"--" + option, v}), names(option, v)});
  cases.push_back({run_args({"--verify=maybe"}), {"--verify", "maybe"}});
  // Each value alone is fine; together they do not fit.
  cases.push_back({run_args({"--keys", "3", "--threads", "4"}), {"--threads", "--keys"}});
  cases.push_back({run_args({"--duration", "5s", "--warmup", "5s"}), {"--warmup", "--duration"}});
  // --mix: --ratio is its shorthand, not a second mix; a touch needs the expiry it sets;
  // --verify cannot check what append changes; Redis has no prepend.
  cases.push_back({run_args({"--ratio", "1:2", "--mix", "get:1"}), {"--ratio", "--mix"}});
  cases.push_back({run_args({"--mix", "get:1", "--ratio", "1:2"}), {"--ratio", "--mix"}});
  cases.push_back(
      {run_args({"--phases", "load,mixed", "--mix", "get:9,touch:1"}), {"--mix touch", "--ttl"}});
  cases.push_back(
      {run_args({"--phases", "load,mixed", "--mix", "get:9,touch:1", "--ttl", "0:1,1h:1"}),
       {"--mix touch", "--ttl"}});
  // A key shorter than its prefix and number cannot be made: kv: + 99999 is 8 bytes.
  cases.push_back({run_args({"--key-size", "6"}), {"--key-size", "8 bytes"}});
  cases.push_back({run_args({"--phases", "load,mixed", "--mix", "get:9,append:1", "--verify"}),
                   {"--verify", "append"}});
  cases.push_back({{"run", "--db", kDb, "--target", "redis://127.0.0.1:1", "--phases", "mixed",
                    "--mix", "get:9,prepend:1"},
                   {"--mix prepend", "Redis"}});
  for (const char* op : {"gets", "cas"})
    cases.push_back({{"run", "--db", kDb, "--target", "redis://127.0.0.1:1", "--phases", "mixed",
                      "--mix", std::string("get:9,") + op + ":1"},
                     {std::string("--mix ") + op, "Redis", "memcached only"}});
  // --command: its template, its ratio and pattern (after it, once), the targets it can go to.
  const auto command = [&](std::vector<std::string> more) {
    std::vector<std::string> a = {"--command", "HSET __key__ f __data__"};
    a.insert(a.end(), more.begin(), more.end());
    return run_args(a);
  };
  cases.push_back({run_args({"--command", ""}), {"--command", "empty"}});
  cases.push_back({run_args({"--command", "GET 'k"}), {"--command", "not closed"}});
  cases.push_back({run_args({"--command", "__key__"}), {"--command", "command's name"}});
  cases.push_back({run_args({"--command-ratio", "2", "--command", "GET __key__"}),
                   {"--command-ratio 2", "after the --command"}});
  cases.push_back({command({"--command-key-pattern", "S", "--command-key-pattern", "R"}),
                   {"--command-key-pattern R", "second"}});
  for (const char* v : {"x", "-1", "1000001", "", "1.5"})
    cases.push_back({command({"--command-ratio", v}), names("command-ratio", v)});
  cases.push_back({command({"--command-ratio", "0"}), {"--command-ratio", "every command's is 0"}});
  for (const char* v : {"Q", "zipf:-1", ""})
    cases.push_back({command({"--command-key-pattern", v}), {"--command-key-pattern"}});
  std::vector<std::string> nine;
  for (int i = 0; i < 9; ++i) nine.insert(nine.end(), {"--command", "GET __key__"});
  cases.push_back({run_args(nine), {"--command", "at most 8"}});
  cases.push_back(
      {{"run", "--db", kDb, "--target", "memcached://127.0.0.1:1", "--command", "GET __key__"},
       {"--command", "memcached target"}});
  cases.push_back({{"run", "--db", kDb, "--target", "redis+cluster://127.0.0.1:1", "--command",
                    "LPUSH list:__key__ x"},
                   {"--command", "Cluster", "hash tag"}});
  cases.push_back({command({"--scenario", "small-values"}), {"--command", "--scenario"}});
  // --trace: a file that is not there or holds a bad line (its line named), options the trace
  // decides, and the replay's own options without one.
  const std::string bad_trace = write_file("bad.csv", "0,k,1,5,1,get,0\n1,k,1,5,1,fetch,0\n");
  const std::string trace = write_file("good.csv", "0,k,1,5,1,get,0\n");
  cases.push_back(
      {run_args({"--trace", "/nonexistent/kv.csv"}), {"--trace", "/nonexistent/kv.csv"}});
  cases.push_back({run_args({"--trace", bad_trace}), {"--trace", "bad.csv:2", "fetch"}});
  cases.push_back(
      {run_args({"--trace", write_file("empty.csv", "\n")}), {"--trace", "no request"}});
  cases.push_back({run_args({"--trace", trace, "--rate", "100"}), {"--rate", "--trace"}});
  cases.push_back({run_args({"--trace", trace, "--phases", "load"}), {"--phases", "--trace"}});
  cases.push_back({run_args({"--trace", trace, "--mix", "get:1"}), {"--mix", "--trace"}});
  cases.push_back(
      {run_args({"--trace", trace, "--command", "GET __key__"}), {"--command", "--trace"}});
  cases.push_back({run_args({"--trace", trace, "--ttl", "1h"}), {"--ttl", "--trace"}});
  cases.push_back({run_args({"--trace", trace, "--cache-aside"}), {"--cache-aside", "--trace"}});
  cases.push_back({run_args({"--trace", trace, "--trace-timing", "fast", "--speed", "2"}),
                   {"--speed", "fast"}});
  cases.push_back({run_args({"--speed", "2"}), {"--speed", "--trace"}});
  cases.push_back(
      {run_args({"--trace", trace, "--search", "--slo", "p99=1ms"}), {"--search", "--trace"}});
  cases.push_back({{"run", "--db", kDb, "--target", "memcached://127.0.0.1:1", "--trace",
                    write_file("ttl.csv", "0,k,1,5,1,set,2600000\n")},
                   {"--trace", "memcached", "30 days"}});
  // --multi-key-get: its range, what it cannot be combined with, a Cluster; --mix-key-pattern
  // and --mix-value-size: each op once, an op of the mix, a value only for an op that sends one.
  for (const char* v : {"x", "-1", "1001"})
    cases.push_back({run_args({"--multi-key-get", v}), names("multi-key-get", v)});
  cases.push_back(
      {run_args({"--multi-key-get", "4", "--verify"}), {"--multi-key-get", "--verify"}});
  cases.push_back(
      {run_args({"--trace", trace, "--multi-key-get", "4"}), {"--multi-key-get", "--trace"}});
  cases.push_back(
      {{"run", "--db", kDb, "--target", "redis+cluster://127.0.0.1:1", "--multi-key-get", "4"},
       {"--multi-key-get", "Cluster", "hash slot"}});
  cases.push_back({run_args({"--phases", "mixed", "--mix", "get:1,mset:1"}),
                   {"--mix mset", "--multi-key-get"}});
  cases.push_back({run_args({"--phases", "mixed", "--mix", "get:1,mset:1", "--multi-key-get", "4",
                             "--ttl", "1h"}),
                   {"--mix mset", "--ttl"}});
  cases.push_back({{"run", "--db", kDb, "--target", "memcached://127.0.0.1:1", "--phases", "mixed",
                    "--mix", "get:1,mset:1", "--multi-key-get", "4"},
                   {"--mix mset", "memcached"}});
  cases.push_back({run_args({"--phases", "mixed", "--mix-value-size", "delete=10"}),
                   {"--mix-value-size", "delete", "sends no value"}});
  cases.push_back({run_args({"--phases", "mixed", "--mix-value-size", "set=10;set=20"}),
                   {"--mix-value-size", "twice"}});
  cases.push_back(
      {run_args({"--phases", "mixed", "--mix-value-size", "set=0"}), {"--mix-value-size", "set"}});
  cases.push_back({run_args({"--phases", "mixed", "--mix-key-pattern", "incr=zipf"}),
                   {"--mix-key-pattern incr", "not an op of a mixed phase"}});
  cases.push_back(
      {run_args({"--mix-key-pattern", "get=zipf"}), {"--mix-key-pattern get", "no mixed phase"}});
  cases.push_back({run_args({"--phases", "mixed", "--mix-key-pattern", "get:zipf"}),
                   {"--mix-key-pattern", "OP=PATTERN"}});
  cases.push_back({run_args({"--phases", "mixed", "--mix-key-pattern", "get=zap"}),
                   {"--mix-key-pattern", "zap"}});
  cases.push_back({run_args({"--phases", "mixed", "--mix-value-size", "set=1K", "--verify"}),
                   {"--verify", "--mix-value-size set"}});
  // memcached reads an expiry above 30 days as a Unix time: every value would expire at once.
  cases.push_back({{"run", "--db", kDb, "--target", "memcached://127.0.0.1:1", "--ttl", "721h"},
                   {"--ttl", "memcached", "30 days"}});
  // 64 MiB x 4096 in flight per connection x 4 threads = 1 TiB: more than any machine's memory.
  cases.push_back({run_args({"--value-size", "64M", "--pipeline", "4096"}),
                   {"--value-size", "--pipeline", "memory"}});
  // --scale must not carry a value past the limits each option has on its own.
  cases.push_back({run_args({"--scenario", "small-values", "--keys", "4000000000", "--scale", "2"}),
                   {"--keys", "--scale"}});
  cases.push_back({run_args({"--duration", "87000h", "--scale", "2", "--scenario", "small-values"}),
                   {"--duration", "--scale"}});
  check_all(cases);
}

TEST_F(KvdriveBadInput, WorkloadOptionsInAConfigFile) {
  std::vector<Case> cases;
  int n = 0;
  for (const auto& [option, values] : bad_workload_values()) {
    for (const auto& v : values) {
      if (v.find('\n') != std::string::npos) continue;  // not one TOML line
      std::string file = write_file("c" + std::to_string(n++) + ".toml",
                                    "[run]\n" + option + " = \"" + v + "\"\n");
      cases.push_back(
          {{"--config", file, "run", "--db", kDb, "--target", target_}, names(option, v)});
    }
  }
  std::string verify = write_file("verify.toml", "[run]\nverify = \"maybe\"\n");
  cases.push_back(
      {{"--config", verify, "run", "--db", kDb, "--target", target_}, {"--verify", "maybe"}});
  // --command's ratios in the file for commands on the command line: they cannot be paired.
  std::string ratios = write_file("ratios.toml", "[run]\ncommand-ratio = [3, 1]\n");
  cases.push_back(
      {{"--config", ratios, "run", "--db", kDb, "--target", target_, "--command", "GET __key__"},
       {"--command", "--config", "together"}});
  std::string more = write_file("more.toml",
                                "[run]\ncommand = [\"GET __key__\"]\n"
                                "command-ratio = [3, 1]\n");
  cases.push_back(
      {{"--config", more, "run", "--db", kDb, "--target", target_}, {"--command-ratio", "more"}});
  check_all(cases);
}

TEST_F(KvdriveBadInput, WorkloadOptionsInAScenarioFile) {
  std::vector<Case> cases;
  int n = 0;
  for (const auto& [option, values] : bad_workload_values()) {
    for (const auto& v : values) {
      if (v.find('\n') != std::string::npos ||
          (!v.empty() && (v.back() == ' ' || v.front() == ' ')))
        continue;  // a line is trimmed: these arrive as something else
      std::string file = write_file("s" + std::to_string(n++) + ".scenario",
                                    "description = bad\n[step one]\n" + option + " = " + v + "\n");
      std::vector<std::string> expect = names(option, v);
      expect.push_back("line 3");
      cases.push_back({run_args({"--scenario", file}), expect});
    }
  }
  check_all(cases);
}

TEST_F(KvdriveBadInput, ScenarioNamesAndFiles) {
  std::filesystem::create_directory(dir_.file("adir"));
  const std::vector<std::pair<std::string, std::string>> files = {
      {"[step one]\nkeys = 1000\nbogus = 1\n", "unknown option 'bogus'"},
      {"[step one\nkeys = 1000\n", "expected [step NAME]"},
      {"[stage one]\n", "expected [step NAME]"},
      {"[step ]\n", "a step needs a name"},
      {"[step a/b]\n", "a step needs a name"},
      {"[step one]\n[step one]\n", "step 'one' appears twice"},
      {"[step one]\nkeys 1000\n", "expected 'option = value'"},
      {"[step one]\nkeys = 3\nthreads = 4\n", "--threads"},
      {"[step one]\ndescription = late\n", "unknown option 'description'"},
      {std::string("\x00\x01\x02", 3), "expected 'option = value'"},
      // The later value silently won.
      {"keys = 10\nkeys = 20\n",
       "line 2: option 'keys' appears twice before the first step (first on line 1)"},
      {"[step a]\nthreads = 1\n[step b]\nthreads = 2\nthreads = 3\n",
       "line 5: option 'threads' appears twice in step 'b' (first on line 4)"},
      // A byte order mark is dropped; bytes that are not UTF-8 are refused with their line.
      {"\xef\xbb\xbf"
       "bogus = 1\n",
       "unknown option 'bogus'"},
  };
  std::vector<Case> cases;
  int n = 0;
  for (const auto& [text, expect] : files) {
    std::string file = write_file("bad" + std::to_string(n++) + ".scenario", text);
    cases.push_back({run_args({"--scenario", file}), {"scenario " + file, expect}});
  }
  std::string latin1 = write_file("latin1.scenario", "description = caf\xe9\n");
  cases.push_back({run_args({"--scenario", latin1}),
                   {"--scenario " + in_quotes(latin1), "line 1 is not UTF-8"}});
  std::string big = write_file("big.scenario", "#" + std::string(1 << 20, 'x') + "\n");
  cases.push_back(
      {run_args({"--scenario", big}), {"--scenario " + in_quotes(big), "larger than 1 MiB"}});
  // Not a regular file: /dev/zero was read without end, a FIFO hung kvdrive.
  const std::string fifo = dir_.file("fifo.scenario");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& f : {std::string("/dev/zero"), fifo})
    cases.push_back(
        {run_args({"--scenario", f}), {"--scenario " + in_quotes(f), "not a regular file"}});
  cases.push_back({run_args({"--scenario", "no-such-scenario"}),
                   {"unknown scenario 'no-such-scenario'", "small-values"}});
  cases.push_back({run_args({"--scenario", dir_.file("missing.scenario")}),
                   {"unknown scenario", "missing.scenario"}});
  cases.push_back(
      {run_args({"--scenario", dir_.file("adir")}), {"--scenario", "adir", "directory"}});
  cases.push_back({run_args({"--scenario", ""}), {"--scenario"}});
  cases.push_back({run_args({"--scenario", "Small-Values"}), {"unknown scenario 'Small-Values'"}});
  for (const char* scale : {"abc", "-1", "0", "1001", "1e400", "", "nan", "inf"})
    cases.push_back(
        {run_args({"--scenario", "small-values", "--scale", scale}), names("scale", scale)});
  cases.push_back({run_args({"--scale", "0.5"}), {"--scale", "--scenario"}});
  // Scaling must not make a step invalid silently either: a scale that leaves a step's values
  // valid is accepted, so this row is about the scenario's own values under --keys.
  cases.push_back(
      {run_args({"--scenario", "small-values", "--keys", "3"}), {"--threads", "--keys"}});
  check_all(cases);
}

TEST_F(KvdriveBadInput, TargetUris) {
  const std::vector<std::pair<std::string, std::string>> uris = {
      {"", "expected redis://host:port"},
      {"abc", "expected redis://host:port"},
      {"http://127.0.0.1:80", "unknown scheme 'http'"},
      {"REDIS://127.0.0.1:6379", "unknown scheme 'REDIS'"},
      {"redis:/127.0.0.1:6379", "expected redis://host:port"},
      {"redis://", "missing host:port"},
      {"redis://:6379", "missing host"},
      {"redis://::1:6379", "IPv6 addresses need [brackets]"},
      {"redis://127.0.0.1:", "port '' is not a number"},
      {"redis://127.0.0.1:0", "port '0'"},
      {"redis://127.0.0.1:65536", "port '65536'"},
      {"redis://127.0.0.1:-1", "port '-1'"},
      {"redis://127.0.0.1:abc", "port 'abc'"},
      {"redis://127.0.0.1:99999999999999999999", "port '99999999999999999999'"},
      {"redis://127.0.0.1:6379 ", "port '6379 '"},
      {"redis://bad host:6379", "space or control character in host 'bad host'"},
      {"redis://[::1:6379", "expected [IPv6]:port"},
      {"redis://127.0.0.1:6379/abc", "database 'abc'"},
      {"redis://127.0.0.1:6379/-1", "database '-1'"},
      {"redis://127.0.0.1:6379/99999999999", "database '99999999999'"},
      {"redis://127.0.0.1:6379/1/2", "database '1/2'"},
      {"redis://127.0.0.1:6379?x=1", "unknown option 'x=1'"},
      {"redis://127.0.0.1:6379?protocol=binary", "unknown option 'protocol=binary'"},
      {"redis://127.0.0.1:6379?nodelay=2", "unknown option 'nodelay=2'"},
      {"redis://127.0.0.1:1,127.0.0.1:2", "a redis target has one server"},
      {"memcached://127.0.0.1:11211/0", "memcached targets take no /db"},
      {"memcached://user:pw@127.0.0.1:11211", "memcached targets take no user or password"},
      {"memcached://127.0.0.1:11211,", "empty server after ','"},
      {"memcached://127.0.0.1:11211,,127.0.0.1:2", "missing host:port"},
      {"memcached://127.0.0.1:11211?protocol=udp", "unknown option 'protocol=udp'"},
      {"memcached://127.0.0.1:11211?ca=/ca.pem", "need TLS (rediss:// or tls=1)"},
      {"rediss://127.0.0.1:6379?key=/k.pem", "key= needs cert="},
      {"memcached://127.0.0.1:11211?writes=2", "unknown option 'writes=2'"},
      {"memcached://127.0.0.1:11211?writes=", "unknown option 'writes='"},
      {"rediss://127.0.0.1:6379?writes=split", "writes=split is for plain TCP, not TLS"},
      {"memcached://127.0.0.1:11211?on-failure=eject",
       "on-failure=eject is for a memcached pool of several servers"},
      {"redis://127.0.0.1:6379?on-failure=eject",
       "on-failure=eject is for a memcached pool of several servers"},
      {"memcached://127.0.0.1:1,127.0.0.1:2?on-failure=rehash",
       "unknown option 'on-failure=rehash'"},
      {"redis://127.0.0.1:6379?read-from=replica",
       "read-from=replica is for a Redis Cluster (redis+cluster://)"},
  };
  std::vector<Case> cases;
  for (const auto& [uri, expect] : uris)
    cases.push_back(
        {{"run", "--db", kDb, "--target", uri}, {"invalid target " + in_quotes(uri), expect}});
  // A bad one among good ones, also with --processes (the group must not create the file).
  cases.push_back(
      {{"run", "--db", kDb, "--target", target_, "--target", "bogus://x:1"}, {"'bogus://x:1'"}});
  cases.push_back(
      {{"run", "--db", kDb, "--processes", "2", "--target", target_, "--target", "bogus://x:1"},
       {"'bogus://x:1'"}});
  cases.push_back({{"run", "--db", kDb, "--target", "rediss://127.0.0.1:1?ca=/nonexistent/ca.pem"},
                   {"rediss://127.0.0.1:1?ca=/nonexistent/ca.pem: TLS CA file "
                    "'/nonexistent/ca.pem': cannot read it (No such file or directory)"}});
  cases.push_back({{"run", "--db", kDb, "--target", "memcached://127.0.0.1:1?tls=1&ca=/dev/null"},
                   {"TLS CA file '/dev/null': no PEM certificate in it"}});
  cases.push_back(
      {{"run", "--db", kDb, "--target", target_, "--connections", "100001"}, {"--connections"}});
  // --engine (once events or classic) is gone: an old script is told the option is unknown.
  cases.push_back({{"run", "--engine", "events", "--db", kDb, "--target", target_}, {"--engine"}});
  cases.push_back(
      {{"run", "--db", kDb, "--target", "rediss://127.0.0.1:6379", "--wire-start", "kernel"},
       {"--wire-start kernel", "rediss://127.0.0.1:6379 is TLS"}});
  cases.push_back(
      {{"run", "--db", kDb, "--target", target_, "--io", "uring", "--wire-start", "kernel"},
       {"--io uring with --wire-start kernel", "epoll only"}});
  cases.push_back(
      {{"run", "--db", kDb, "--target", target_, "--password-file", dir_.file("no-such-file")},
       {"--password-file", "no-such-file"}});
  cases.push_back({{"run", "--db", kDb, "--target", target_, "--password-file",
                    write_file("empty-password", "\nsecond line\n")},
                   {"--password-file", "its first line is empty"}});
  cases.push_back({{"run", "--db", kDb, "--target", target_, "--password-file",
                    write_file("query-password", "a?b\n")},
                   {"--password-file", "a password with '?' goes in a --target URI only"}});
  // Control characters are shown escaped: the error stays one line and drives no terminal.
  cases.push_back({{"run", "--db", kDb, "--target", target_, "--keys", "\x1b]0;X\x07"},
                   {"--keys", "\\x1b]0;X\\x07"}});
  cases.push_back(
      {{"run", "--db", kDb, "--target", target_, "--keys", "1\r\n2"}, {"--keys", "1\\r\\n2"}});
  cases.push_back({{"run", "--db", kDb}, {"--target is required"}});
  cases.push_back({{"run", "--db", kDb, "--target"}, {"--target"}});
  check_all(cases);
}

TEST_F(KvdriveBadInput, RunOptions) {
  std::filesystem::create_directory(dir_.file("adir"));
  std::string garbage = write_file("garbage.db", "this is not a results file\n");
  std::string empty_token = write_file("empty.token", "\n");
  std::vector<Case> cases;
  // --db
  cases.push_back({{"run", "--db", "", "--target", target_}, {"--db"}});
  cases.push_back({{"run", "--db", dir_.file("adir"), "--target", target_},
                   {"--db", "adir", "is a directory"}});
  cases.push_back({{"run", "--db", dir_.file("nodir/r.db"), "--target", target_},
                   {"--db", "nodir", "no such directory"}});
  cases.push_back(
      {{"run", "--db", garbage, "--target", target_}, {"--db", "garbage.db", "not a SQLite file"}});
  cases.push_back({{"run", "--target", target_}, {"--db is required"}});
  // --timeout, --max-errors, --processes
  // 25h: above a day is refused.
  for (const char* v :
       {"abc", "-1", "0", "500us", "99999999999999999999", "1e400", "", "25h", "2562048h"})
    cases.push_back({run_args({"--timeout", v}), names("timeout", v)});
  for (const char* v : {"abc", "-1", "99999999999999999999", "1e400", "64Ti", "", "1.5"})
    cases.push_back({run_args({"--max-errors", v}), names("max-errors", v)});
  for (const char* v : {"abc", "-1", "0", "257", "99999999999999999999", "1e400", "", "1.5"})
    cases.push_back({run_args({"--processes", v}), names("processes", v)});
  // A latency objective without its unit (p99=1 would have meant one second).
  for (const char* v : {"p99=1", "p99=0.5", "p50=1ms,p99=2"})
    cases.push_back({run_args({"--search", "--slo", v}), {"--slo", "needs its unit"}});
  // --monitor and its token file
  for (const char* v : {"abc", "", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:abc",
                        ":7070", "::1:7070", "[::1:7070"})
    cases.push_back({run_args({"--monitor", v}), names("monitor", v)});
  cases.push_back(
      {run_args({"--monitor-token-file", empty_token}), {"--monitor-token-file needs --monitor"}});
  cases.push_back(
      {run_args({"--monitor", "127.0.0.1:1", "--monitor-token-file", dir_.file("missing")}),
       {"--monitor-token-file", "missing"}});
  cases.push_back(
      {run_args({"--monitor", "127.0.0.1:1", "--monitor-token-file", dir_.file("adir")}),
       {"--monitor-token-file", "adir"}});
  cases.push_back({run_args({"--monitor", "127.0.0.1:1", "--monitor-token-file", "/dev/zero"}),
                   {"--monitor-token-file", "not a regular file"}});
  cases.push_back({run_args({"--monitor", "127.0.0.1:1", "--monitor-token-file", empty_token}),
                   {"--monitor-token-file", "empty.token", "is empty"}});
  cases.push_back({run_args({"--monitor", "127.0.0.1:1", "--monitor-token-file", ""}),
                   {"--monitor-token-file"}});
  // Flags with values, unknown options, stray arguments, --log-level.
  cases.push_back({run_args({"--json=maybe"}), {"--json", "maybe"}});
  cases.push_back({run_args({"--no-such-option"}), {"--no-such-option"}});
  cases.push_back({run_args({"--keys"}), {"--keys"}});
  cases.push_back({run_args({"stray"}), {"'stray'"}});
  // --log-level after the subcommand too (#19; it was app-level only): checked the same way.
  cases.push_back({run_args({"--log-level", "bogus"}), {"log level", "'bogus'"}});
  for (const char* v : {"bogus", "", "DEBUG", "5"}) {
    std::vector<std::string> args = {"--log-level", v};
    std::vector<std::string> more = run_args({});
    args.insert(args.end(), more.begin(), more.end());
    cases.push_back({args, {"log level", in_quotes(v)}});
  }
  // Text that is not UTF-8 made the --json summary invalid JSON: refused, naming the option.
  const std::string latin1 = "caf\xe9", overlong = "\xc0\xafx", surrogate = "\xed\xa0\x80";
  for (const std::string& v : {latin1, overlong, surrogate, std::string("\xff")}) {
    cases.push_back({run_args({"--name", v}), {"--name", "not UTF-8"}});
    cases.push_back({run_args({"--name=" + v}), {"--name", "not UTF-8"}});
  }
  cases.push_back({run_args({"--key-prefix", latin1}), {"--key-prefix", "not UTF-8"}});
  cases.push_back(
      {{"run", "--db", kDb, "--target", "redis://h\xe9st:1"}, {"--target", "not UTF-8"}});
  cases.push_back({run_args({"--scenario", dir_.file(latin1)}), {"--scenario", "not UTF-8"}});
  cases.push_back({run_args({"--process-index", "abc"}), names("process-index", "abc")});
  cases.push_back({run_args({"--process-index", "3"}), {"--process-index"}});
  // --hdr-log: never over an existing log (with --processes too), a directory that exists.
  write_file("taken.0.hlog", "an earlier log\n");
  cases.push_back(
      {run_args({"--hdr-log", dir_.file("taken")}), {"--hdr-log", "taken.0.hlog", "exists"}});
  cases.push_back({run_args({"--hdr-log", dir_.file("nodir/x")}), {"--hdr-log", "nodir"}});
  cases.push_back({run_args({"--hdr-log", ""}), {"--hdr-log"}});
  cases.push_back({run_args({"--hdr-log", dir_.file("taken"), "--processes", "2"}),
                   {"--hdr-log", "taken.0.hlog", "exists"}});
  // --segment I/N
  for (const char* v : {"0/3", "4/3", "1/0", "3", "a/b", "", "-1/2", "1/2/3", "1/99999"})
    cases.push_back({run_args({"--segment", v}), {"--segment", in_quotes(v)}});
  cases.push_back({run_args({"--segment", "1/3", "--threads", "2"}), {"--segment", "--threads 2"}});
  cases.push_back(
      {run_args({"--segment", "1/2", "--processes", "2"}), {"--segment", "--processes"}});
  // --repeat N, and what it cannot go with
  for (const char* v : {"0", "1001", "x", "-2", ""})
    cases.push_back({run_args({"--repeat", v}), {"--repeat", in_quotes(v)}});
  cases.push_back({run_args({"--repeat", "2", "--processes", "2"}), {"--repeat", "--processes"}});
  cases.push_back({run_args({"--repeat", "2", "--segment", "1/2", "--threads", "2"}),
                   {"--repeat", "--segment"}});
  cases.push_back({run_args({"--repeat", "2", "--start-at", "+1s"}), {"--repeat", "--start-at"}});
  cases.push_back(
      {run_args({"--repeat", "2", "--hdr-log", dir_.file("rounds")}), {"--repeat", "--hdr-log"}});
  // --start-at, --group
  cases.push_back({run_args({"--start-at", ""}), {"--start-at"}});
  for (const char* v :
       {"soon", "+abc", "+", "@", "@1000", "@-5", "@1e30", "2020-01-01T00:00:00Z",
        "2999-01-01T00:00:00Z", "2026-12-01T10:00:00", "2026-13-01T10:00:00Z", "+30d"})
    cases.push_back({run_args({"--start-at", v}), {"--start-at", in_quotes(v)}});
  cases.push_back({run_args({"--group", "g", "--processes", "2"}), {"--group", "--processes"}});
  check_all(cases);
  EXPECT_EQ(slurp(dir_.file("taken.0.hlog")), "an earlier log\n");
}

}  // namespace
}  // namespace kv::drive
