// Bad input for the real kvdrive binary, one table per kind: every option of every subcommand,
// the workload options also as config file keys and scenario file lines, config files and
// scenario files themselves, target URIs. Each row must exit 2, print one line (stdout and
// stderr together) naming the option and the value, and write nothing: a results file holding
// an earlier run stays byte-identical and a new one is not created. No store runs: the targets
// point at a port nothing listens on, so everything must be refused before connecting.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kvbench/schema.hpp"
#include "kvdrive_test_util.hpp"
#include "results/results_writer.hpp"

namespace kv::drive {
namespace {

using kv::test::Outcome;
using kv::test::slurp;
using kv::test::TempDir;

// Replaced by the results file under test: first one holding an earlier run, then a new path.
const std::string kDb = "@DB";

struct Case {
  std::vector<std::string> args;
  std::vector<std::string> expect;  // substrings of the one line printed
};

std::string joined(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + (a.empty() ? "''" : a);
  return s;
}

std::string in_quotes(const std::string& v) { return "'" + v + "'"; }

class KvdriveBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    target_ = "redis://127.0.0.1:" + std::to_string(kv::test::free_port());
    previous_ = dir_.file("previous.db");
    {
      Database db = open_results_db(previous_);
      ResultsWriter writer(db);
      int64_t run =
          writer.begin_run(RunInfo{"earlier", "kvdrive run ...", "{}", 1, "", 1.0, "", 0, 1});
      writer.end_run(run, "completed", "");
    }
    previous_bytes_ = slurp(previous_);
    ASSERT_FALSE(previous_bytes_.empty());
  }

  // A file in the test's directory with `text` in it; returns its path.
  std::string write_file(const std::string& name, const std::string& text) {
    std::ofstream(dir_.file(name)) << text;
    return dir_.file(name);
  }

  // kvdrive run with a (valid) target and the results file under test, then `more`.
  std::vector<std::string> run_args(std::vector<std::string> more) {
    std::vector<std::string> args = {"run", "--db", kDb, "--target", target_};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  void expect_refused(const std::vector<std::string>& args,
                      const std::vector<std::string>& expect) {
    SCOPED_TRACE(joined(args));
    Outcome out = kv::test::run_kvdrive(dir_, args, 30'000);
    EXPECT_EQ(out.exit_code, 2) << out.output;
    EXPECT_EQ(std::count(out.output.begin(), out.output.end(), '\n'), 1) << out.output;
    EXPECT_EQ(out.output.rfind("kvdrive: ", 0), 0u) << out.output;
    for (const auto& e : expect) {
      // An empty value is named as '' or by saying it is empty.
      bool found = out.output.find(e) != std::string::npos ||
                   (e == "''" && out.output.find("empty") != std::string::npos);
      EXPECT_TRUE(found) << "want " << e << " in " << out.output;
    }
    ++checked_;
  }

  // Runs the case against the earlier run's file and against a new path.
  void check(const Case& c) {
    if (std::find(c.args.begin(), c.args.end(), kDb) == c.args.end()) {
      expect_refused(c.args, c.expect);
      ++cases_;
      return;
    }
    for (const std::string& db : {previous_, dir_.file("new.db")}) {
      std::vector<std::string> args = c.args;
      std::replace(args.begin(), args.end(), kDb, db);
      expect_refused(args, c.expect);
      EXPECT_TRUE(slurp(previous_) == previous_bytes_)
          << joined(args) << ": the earlier run's file changed";
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        EXPECT_FALSE(std::filesystem::exists(dir_.file("new.db") + suffix))
            << joined(args) << ": created new.db" << suffix;
        if (*suffix) {
          EXPECT_FALSE(std::filesystem::exists(previous_ + suffix)) << joined(args);
        }
      }
    }
    ++cases_;
  }

  void check_all(const std::vector<Case>& cases) {
    for (const auto& c : cases) check(c);
    std::cout << cases_ << " cases, " << checked_ << " kvdrive runs\n";
  }

  TempDir dir_;
  std::string target_, previous_, previous_bytes_;
  int cases_ = 0, checked_ = 0;
};

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
        {"key-pattern", {"abc", "zipf:-1", "zipf:abc", "zipf:1e400", "zipf:0", "zipfx", "", "0"}},
        {"requests", counts},
        {"duration", durations},
        {"ratio",
         {"abc", "-1:10", "0:0", "1:", ":1", "x:1", "99999999999999999999:1", "", "1e400:1",
          "1:2:3", "0"}},
        {"hit-rate", {"abc", "-0.1", "1.5", "1e400", "nan", "inf", "", "50%"}},
        {"rate", {"abc", "-1", "1e400", "2e9", "nan", "", "-inf"}},
        {"spin-budget", {"abc", "-1", "101", "101%", "%", "", "nan", "10%%", "1e400"}},
        {"wire-start", {"abc", "", "Kernel", "send", "call,kernel"}},
        {"warmup", durations},
        {"threads", ints},
        {"connections", {"abc", "-1", "0", "99999999999999999999", "1e400", "1.5", "", "200000"}},
        {"pipeline", ints},
        {"key-prefix", {"a b", "new\nline", std::string(300, 'k')}},
        {"ttl", {"abc", "-1", "99999999999999999999", "1e400", "64Ti", "", "1.5s", "2000000h"}},
        {"seed", {"abc", "-1", "99999999999999999999", "1e400", "", "1.5"}},
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

// What a refusal of `value` for `option` must show: the option and the value in quotes (a long
// value may be cut after 20 characters, a multi-line one is not looked for).
std::vector<std::string> names(const std::string& option, const std::string& value) {
  if (value.find('\n') != std::string::npos) return {"--" + option};
  if (value.size() > 20) return {"--" + option, "'" + value.substr(0, 20)};
  return {"--" + option, in_quotes(value)};
}

TEST_F(KvdriveBadInput, WorkloadOptionsOnTheCommandLine) {
  std::vector<Case> cases;
  for (const auto& [option, values] : bad_workload_values())
    for (const auto& v : values) cases.push_back({run_args({"--" + option, v}), names(option, v)});
  cases.push_back({run_args({"--verify=maybe"}), {"--verify", "maybe"}});
  // Each value alone is fine; together they do not fit.
  cases.push_back({run_args({"--keys", "3", "--threads", "4"}), {"--threads", "--keys"}});
  cases.push_back({run_args({"--duration", "5s", "--warmup", "5s"}), {"--warmup", "--duration"}});
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

TEST_F(KvdriveBadInput, ConfigFiles) {
  std::filesystem::create_directory(dir_.file("adir"));
  auto with = [&](const std::string& file) {
    return std::vector<std::string>{"--config", file, "run", "--db", kDb, "--target", target_};
  };
  std::vector<Case> cases;
  const std::vector<std::pair<std::string, std::vector<std::string>>> files = {
      {"[run]\nbogus = 1\n", {"unknown key 'bogus' in [run]"}},
      {"[run]\nkeys = 1000\nvalue_size = 10\n", {"unknown key 'value_size' in [run]"}},
      {"[other]\nkeys = 5\n", {"unknown section [other]"}},
      {"keys = 5\n", {"unknown key 'keys'"}},
      {"this is [ not toml\n", {"unknown key 'this is [ not toml'"}},
      {"[run]\nkeys = [1, 2]\n", {"--keys"}},
      {"[run]\ntimeout = \"0\"\n", {"--timeout", "'0'"}},
      {"[run]\nmax-errors = \"x\"\n", {"--max-errors", "'x'"}},
      {"[run]\nprocesses = 0\n", {"--processes", "'0'"}},
      {"[run]\nscale = 2\n", {"--scale", "--scenario"}},
      {"[run]\nmonitor = \"nohost\"\n", {"--monitor", "'nohost'"}},
      {"[run]\nscenario = \"no-such-scenario\"\n", {"unknown scenario 'no-such-scenario'"}},
      {"[report]\nformat = \"xml\"\n", {"--format", "xml"}},
  };
  int n = 0;
  for (const auto& [text, expect] : files) {
    std::string file = write_file("bad" + std::to_string(n++) + ".toml", text);
    std::vector<std::string> want = expect;
    if (text.find("[report]") != std::string::npos) {
      cases.push_back({{"--config", file, "report", "--db", previous_}, want});
      continue;
    }
    if (want.front().find("unknown") != std::string::npos &&
        want.front().find("scenario") == std::string::npos)
      want.push_back("--config " + in_quotes(file));
    cases.push_back({with(file), want});
  }
  // A key given twice named neither file nor line ("At Most 1 required but received 2").
  std::string dup = write_file("dup.toml", "[run]\nkeys = 10\n# a comment\nkeys = 20\n");
  cases.push_back(
      {with(dup),
       {"--config " + in_quotes(dup), "key 'keys' in [run] on line 2 and again on line 4"}});
  std::string dup_dotted = write_file("dup2.toml", "[run]\nthreads = 1\n\n\"threads\" = 2\n");
  cases.push_back(
      {with(dup_dotted), {"--config " + in_quotes(dup_dotted), "'threads'", "line 2", "line 4"}});
  // A bad value from the file names the file and its line, not only the option.
  std::string bad_value = write_file("value.toml", "[run]\nthreads = 2\nkeys = \"ten\"\n");
  cases.push_back(
      {with(bad_value), {"--keys", "'ten'", "from --config " + in_quotes(bad_value) + ", line 3"}});
  // Unknown keys say their line too.
  std::string unknown = write_file("unknown.toml", "[run]\nkeys = 10\nbogus = 1\n");
  cases.push_back({with(unknown), {"unknown key 'bogus' in [run] (line 3)"}});
  // A UTF-8 byte order mark made "[run]" an invisible unknown key: it is dropped now, so what
  // the file says is what counts (an unknown key, a bad combination).
  std::string bom = write_file("bom.toml", "\xef\xbb\xbf[run]\nbogus = 1\n");
  cases.push_back({with(bom), {"unknown key 'bogus' in [run] (line 2)"}});
  std::string bom_values = write_file("bom2.toml", "\xef\xbb\xbf[run]\nkeys = 3\nthreads = 4\n");
  cases.push_back({with(bom_values), {"--threads (4) must not exceed --keys (3)"}});
  std::string latin1 = write_file("latin1.toml", "[run]\nname = \"caf\xe9\"\n");
  cases.push_back({with(latin1), {"--config " + in_quotes(latin1), "line 2 is not UTF-8"}});
  // Not a regular file, or too large: /dev/zero grew kvdrive to 900 MB, a FIFO hung it.
  const std::string fifo = dir_.file("fifo.toml");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& f : {std::string("/dev/zero"), fifo})
    cases.push_back({with(f), {"--config " + in_quotes(f), "not a regular file"}});
  std::string big = write_file("big.toml", "[run]\n" + std::string(1 << 20, '#') + "\n");
  cases.push_back({with(big), {"--config " + in_quotes(big), "larger than 1 MiB"}});
  // A target from the file only (the command line's --target would override it).
  std::string target_file = write_file("target.toml", "[run]\ntarget = \"bogus://x:1\"\n");
  cases.push_back(
      {{"--config", target_file, "run", "--db", kDb}, {"invalid target 'bogus://x:1'"}});
  std::string db_file = write_file("db.toml", "[run]\ndb = \"" + dir_.file("adir") + "\"\n");
  cases.push_back({{"--config", db_file, "run", "--target", target_}, {"--db", "is a directory"}});
  // The file itself.
  cases.push_back({with(dir_.file("missing.toml")), {"--config", "missing.toml", "no such file"}});
  cases.push_back({with(dir_.file("adir")), {"--config", "adir", "is a directory"}});
  cases.push_back({with(""), {"--config", "empty file name"}});
  if (geteuid() != 0) {  // root reads anything
    std::string locked = write_file("locked.toml", "[run]\nkeys = 10\n");
    chmod(locked.c_str(), 0);
    cases.push_back({with(locked), {"--config", "locked.toml", "cannot read"}});
  }
  // After the subcommand it is not an option of `run` (CLI11 reads it at the app level).
  cases.push_back(
      {run_args({"--config", write_file("late.toml", "[run]\nkeys = 10\n")}), {"--config"}});
  check_all(cases);
}

TEST_F(KvdriveBadInput, ReportOptions) {
  std::filesystem::create_directory(dir_.file("adir"));
  std::string garbage = write_file("garbage.db", "this is not a results file\n");
  std::string empty = write_file("empty.db", "");
  std::string other = dir_.file("other.db");
  Database::open(other).exec("CREATE TABLE t (x)");  // SQLite, but not a results file
  const std::string other_bytes = slurp(other);
  std::vector<Case> cases;
  for (const auto& [db, expect] :
       std::vector<std::pair<std::string, std::string>>{{dir_.file("missing.db"), "no such file"},
                                                        {dir_.file("adir"), "is a directory"},
                                                        {garbage, "not a SQLite file"},
                                                        {empty, "is empty"},
                                                        {other, "not a kvbench results file"},
                                                        {"", "empty file name"}})
    cases.push_back({{"report", "--db", db}, {"--db", expect}});
  cases.push_back({{"report"}, {"--db is required"}});
  for (const char* v : {"abc", "-1", "0", "99999999999999999999", "1e400", "", "1.5"})
    cases.push_back({{"report", "--db", previous_, "--run", v}, names("run", v)});
  cases.push_back({{"report", "--db", previous_, "--run", "99"}, {"no run 99"}});
  for (const char* v : {"xml", "", "TEXT", "0"})
    cases.push_back({{"report", "--db", previous_, "--format", v}, {"--format", v}});
  cases.push_back({{"report", "--db", previous_, "--html", ""}, {"--html"}});
  cases.push_back(
      {{"report", "--db", previous_, "--html", dir_.file("adir")}, {"--html", "is a directory"}});
  cases.push_back({{"report", "--db", previous_, "--html", dir_.file("nodir/r.html")},
                   {"--html", "no such directory"}});
  // --html onto the results file (or its -wal/-shm, also through a symlink or a hard link)
  // truncated it to 0 bytes.
  std::filesystem::create_symlink(previous_, dir_.file("link.db"));
  std::filesystem::create_hard_link(previous_, dir_.file("hard.db"));
  for (const std::string& html : {previous_, dir_.file("link.db"), dir_.file("hard.db"),
                                  previous_ + "-wal", previous_ + "-shm", previous_ + "-journal"})
    cases.push_back({{"report", "--db", previous_, "--html", html},
                     {"--html", in_quotes(html), "results file"}});
  cases.push_back(
      {{"report", "--db", dir_.file("link.db"), "--html", previous_}, {"--html", "results file"}});
  cases.push_back({{"report", "--db", previous_, "--bogus"}, {"--bogus"}});
  cases.push_back({{"report", "--db", previous_, "--keys", "5"}, {"--keys"}});
  // An output option never replaces a file kvbench did not write: another SQLite file (above
  // all another results file), a text file, a CSV with another header; --force does.
  const std::string other_results = dir_.file("other_results.db");
  std::filesystem::copy_file(previous_, other_results);
  const std::string notes = write_file("notes.txt", "my notes\n");
  std::filesystem::create_directory(dir_.file("csv"));
  const std::string csv = write_file("csv/runs.csv", "a,b\n1,2\n");
  for (const std::string& file : {other_results, other, notes}) {
    const std::string what = file == notes ? "" : "(it is a SQLite database)";
    cases.push_back({{"report", "--db", previous_, "--html", file},
                     {"--html", in_quotes(file), "is not a kvbench HTML report", what, "--force"}});
    cases.push_back({{"report", "--db", previous_, "--json-out", file},
                     {"--json-out", in_quotes(file), "is not a kvbench JSON document", what}});
    cases.push_back({{"run", "--db", kDb, "--target", target_, "--json-out", file},
                     {"--json-out", in_quotes(file), "is not a kvbench JSON document", what}});
  }
  cases.push_back({{"report", "--db", previous_, "--format", "csv", "--out", dir_.file("csv")},
                   {"--out", "runs.csv", "is not kvbench's CSV of that table"}});
  const std::string other_results_bytes = slurp(other_results);
  check_all(cases);
  EXPECT_TRUE(slurp(other_results) == other_results_bytes) << "an output replaced a results file";
  EXPECT_EQ(slurp(notes), "my notes\n");
  EXPECT_EQ(slurp(csv), "a,b\n1,2\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_.file("csv")),
                          std::filesystem::directory_iterator()),
            1)
      << "--out wrote other tables before it refused one";
  // Its own outputs are replaced; with --force, anything.
  const std::string html = dir_.file("r.html");
  for (int i = 0; i < 2; ++i) {
    auto r = run_kvdrive(dir_, {"report", "--db", previous_, "--html", html});
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  auto forced = run_kvdrive(dir_, {"report", "--db", previous_, "--html", notes, "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_NE(slurp(notes).find("<title>kvbench report"), std::string::npos);
  EXPECT_TRUE(slurp(other) == other_bytes) << "report wrote into a file that is not a results file";
  EXPECT_TRUE(slurp(empty).empty()) << "report wrote into an empty file";
  EXPECT_TRUE(slurp(previous_) == previous_bytes_) << "report --html overwrote the results file";
  EXPECT_FALSE(std::filesystem::exists(dir_.file("missing.db")));
}

// A results file that is not whole: refused before any connection, for run and report alike,
// and left exactly as it was (a dropped table got traffic sent and a run written; a foreign
// -wal was replayed into the file, which then failed integrity_check; a truncated file exited 1).
TEST_F(KvdriveBadInput, DamagedResultsFiles) {
  auto copy_of_previous = [&](const std::string& name, const std::string& sql) {
    std::string path = dir_.file(name);
    std::filesystem::copy_file(previous_, path);
    if (!sql.empty()) Database::open(path).exec(sql);
    return path;
  };
  std::vector<std::pair<std::string, std::vector<std::string>>> files = {
      {copy_of_previous("no_table.db", "DROP TABLE store_stats"),
       {"table 'store_stats' is missing"}},
      {copy_of_previous("no_view.db", "DROP VIEW phase_summary"),
       {"view 'phase_summary' is missing"}},
      {copy_of_previous("no_column.db", "ALTER TABLE runs DROP COLUMN name"),
       {"table 'runs'", "'name"}},
      {copy_of_previous("bad_view.db",
                        "DROP VIEW phase_report; CREATE VIEW phase_report AS SELECT 1 AS x"),
       {"view 'phase_report'"}},
      {copy_of_previous("newer.db", "PRAGMA user_version = 999"), {"schema version 999", "newer"}},
      {copy_of_previous("foreign_sqlite.db", "PRAGMA user_version = 0"),
       {"not a kvbench results file"}},
  };
  // Cut short: the header says more pages than the file holds.
  std::string cut = copy_of_previous("truncated.db", "");
  std::filesystem::resize_file(cut, 8192);
  files.push_back({cut, {"truncated"}});
  // A -wal from another results file with another history (this one's own -wal, left by a
  // writer that died, is taken: KvdriveFaults.KilledMidRunLeavesAnIntactFileAndAnIncompleteRun).
  std::string victim = copy_of_previous("victim.db", "");
  {
    std::string donor = dir_.file("donor.db");
    // A file used for a while: each session that grew it moved page 1's change counter on
    // (SQLite cannot tell a -wal's file; with the same counter only quick_check could).
    for (int i = 0; i < 10; ++i) {
      Database db = open_results_db(donor);
      ResultsWriter writer(db);
      writer.end_run(writer.begin_run(RunInfo{std::string(5000, 'd'), "kvdrive run ...", "{}", 2,
                                              "", 1.0, "", 0, 1}),
                     "completed", "");
    }
    Database db = open_results_db(donor);
    db.exec("PRAGMA wal_autocheckpoint = 0");
    ResultsWriter writer(db);
    for (int i = 0; i < 20; ++i)
      writer.end_run(writer.begin_run(RunInfo{std::string(2000, 'd'), "kvdrive run ...", "{}", 3,
                                              "", 1.0, "", 0, 1}),
                     "completed", "");
    std::filesystem::copy_file(donor + "-wal", victim + "-wal");  // while it is still open
  }
  files.push_back({victim, {"-wal", "belongs to another file"}});
  // The -wal of a file from its creation on (never checkpointed): its change counter can match
  // this file's, its schema cookie starts below it. Replayed, it replaces the whole file.
  std::string victim2 = copy_of_previous("victim2.db", "");
  {
    std::string donor = dir_.file("young.db");
    Database db = Database::open(donor);
    db.exec("PRAGMA wal_autocheckpoint = 0");
    schema::migrate(db);
    ResultsWriter writer(db);
    writer.end_run(
        writer.begin_run(RunInfo{"young", "kvdrive run ...", "{}", 3, "", 1.0, "", 0, 1}),
        "completed", "");
    std::filesystem::copy_file(donor + "-wal", victim2 + "-wal");
  }
  files.push_back({victim2, {"-wal", "belongs to another file"}});

  // The same -wal beside a file that does not exist yet, or is empty: SQLite would make the
  // new file out of it.
  std::filesystem::copy_file(victim + "-wal", dir_.file("orphan.db-wal"));
  expect_refused({"run", "--db", dir_.file("orphan.db"), "--target", target_},
                 {"--db", "orphan.db-wal", "move it away"});
  EXPECT_FALSE(std::filesystem::exists(dir_.file("orphan.db")));
  std::ofstream(dir_.file("empty.db")).flush();
  std::filesystem::copy_file(victim + "-wal", dir_.file("empty.db-wal"));
  expect_refused({"run", "--db", dir_.file("empty.db"), "--target", target_},
                 {"--db", "empty.db-wal", "move it away"});
  EXPECT_TRUE(slurp(dir_.file("empty.db")).empty());

  for (const auto& [file, expect] : files) {
    const std::string bytes = slurp(file);
    const std::string wal = std::filesystem::exists(file + "-wal") ? slurp(file + "-wal") : "";
    std::vector<std::string> want = expect;
    want.push_back("--db " + in_quotes(file));
    expect_refused({"run", "--db", file, "--target", target_}, want);
    expect_refused({"report", "--db", file}, want);
    EXPECT_TRUE(slurp(file) == bytes) << file << " changed";
    if (!wal.empty()) {
      EXPECT_TRUE(slurp(file + "-wal") == wal) << file << "-wal changed";
    } else {
      EXPECT_FALSE(std::filesystem::exists(file + "-wal")) << file;
    }
    EXPECT_FALSE(std::filesystem::exists(file + "-shm")) << file;
  }
  // What the foreign -wal would have done: opened, the file is damaged or lost its own run.
  for (const auto& f : {victim, victim2}) {
    bool kept = false;
    try {
      Database replayed = open_results_db(f);
      auto check = replayed.prepare("PRAGMA quick_check(1)");
      auto runs = replayed.prepare("SELECT count(*) FROM runs WHERE name = 'earlier'");
      kept = check.step() && check.column_text(0) == "ok" && runs.step() && runs.column_int(0) == 1;
    } catch (const SqliteError&) {
      // database disk image is malformed
    }
    EXPECT_FALSE(kept) << f << ": the -wal was harmless after all: the test shows nothing";
  }
}

// kvdrive report on a file it cannot write (a read-only filesystem, or a read-only file in a
// read-only directory): read as immutable, nothing created beside it.
TEST_F(KvdriveBadInput, ReportReadsAResultsFileOnAReadOnlyFilesystem) {
  const std::string src = dir_.file("src"), ro = dir_.file("ro");
  std::filesystem::create_directory(src);
  std::filesystem::create_directory(ro);
  std::filesystem::copy_file(previous_, src + "/r.db");
  const std::string log = dir_.file("report.log");
  int code = 0;
  std::string db;
  if (geteuid() == 0) {  // root writes through permissions: a read-only bind mount instead
    db = ro + "/r.db";
    const std::string script = "mount --bind '" + src + "' '" + ro +
                               "' && mount -o remount,bind,ro '" + ro + "' || exit 77; touch '" +
                               ro + "/probe' 2>/dev/null && exit 78; exec '" + kv::test::kKvdrive +
                               "' report --db '" + db + "'";
    kv::test::Process p({"/usr/bin/unshare", "-m", "/bin/sh", "-c", script}, log);
    code = p.wait(30'000);
    if (code == 77) GTEST_SKIP() << "cannot make a read-only bind mount here: " << slurp(log);
    ASSERT_NE(code, 78) << "the mount is not read-only";
  } else {
    db = src + "/r.db";
    chmod(db.c_str(), 0444);
    chmod(src.c_str(), 0555);
    kv::test::Process p({kv::test::kKvdrive, "report", "--db", db}, log);
    code = p.wait(30'000);
    chmod(src.c_str(), 0755);
  }
  const std::string out = slurp(log);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("\"earlier\""), std::string::npos) << out;
  EXPECT_TRUE(slurp(src + "/r.db") == previous_bytes_);
  EXPECT_FALSE(std::filesystem::exists(src + "/r.db-wal"));
  EXPECT_FALSE(std::filesystem::exists(src + "/r.db-shm"));
}

TEST_F(KvdriveBadInput, Subcommands) {
  std::vector<Case> cases = {
      {{}, {"missing subcommand", "run, report, merge or scenarios"}},
      {{"bogus"}, {"unknown subcommand 'bogus'"}},
      {{"Run"}, {"unknown subcommand 'Run'"}},
      {{"--bogus"}, {"--bogus"}},
      {{"scenarios", "extra"}, {"extra"}},
      {{"scenarios", "--bogus"}, {"--bogus"}},
  };
  check_all(cases);
}

// The same arguments with good values get past the checks and fail only at the unreachable
// store: exit 1, and still nothing written. Proves the rows above fail for their bad value.
TEST_F(KvdriveBadInput, GoodValuesReachTheStore) {
  for (const std::string& db : {previous_, dir_.file("new.db")}) {
    Outcome out =
        kv::test::run_kvdrive(dir_, {"run", "--db", db, "--target", target_, "--keys", "1k",
                                     "--threads", "2", "--timeout", "1s", "--max-errors", "5"});
    EXPECT_EQ(out.exit_code, 1) << out.output;
    EXPECT_NE(out.output.find("cannot connect"), std::string::npos) << out.output;
    EXPECT_TRUE(slurp(previous_) == previous_bytes_);
    EXPECT_FALSE(std::filesystem::exists(dir_.file("new.db")));
  }
}

// A results file kvdrive cannot write: in a directory it may not write, or read-only itself.
// Refused before any connection, saying which and what to do (SQLite's "unable to open
// database file" came after the stores had been reached). As root, run as nobody.
TEST_F(KvdriveBadInput, AResultsFileItCannotWriteIsNamedBeforeAnyConnection) {
  std::filesystem::permissions(dir_.path(), std::filesystem::perms::all);
  const std::string locked = dir_.file("locked"), open = dir_.file("open");
  std::filesystem::create_directory(locked);
  std::filesystem::create_directory(open);
  const std::string frozen = open + "/frozen.db";
  std::filesystem::copy_file(previous_, frozen);
  ::chmod(frozen.c_str(), 0444);
  ::chmod(locked.c_str(), 0555);
  ::chmod(open.c_str(), 0777);
  for (const auto& [db, expect] : std::vector<std::pair<std::string, std::string>>{
           {locked + "/new.db",
            "cannot create it: the directory '" + locked + "' is not writable by this user"},
           {frozen, "is read-only for this user: make it writable (chmod u+w)"}}) {
    std::vector<std::string> args = {kv::test::kKvdrive, "run", "--db", db, "--target", target_};
    if (::geteuid() == 0)
      args.insert(args.begin(),
                  {"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"});
    const std::string log = dir_.file(db == frozen ? "frozen.log" : "locked.log");
    kv::test::Process p(args, log);
    EXPECT_EQ(p.wait(30'000), 2) << slurp(log);
    const std::string out = slurp(log);
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_NE(out.find("--db '" + db + "': " + expect), std::string::npos) << out;
  }
  EXPECT_FALSE(std::filesystem::exists(locked + "/new.db"));
  EXPECT_TRUE(slurp(frozen) == previous_bytes_);
}

}  // namespace
}  // namespace kv::drive
