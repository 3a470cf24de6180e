// Bad input for the real kvmon binary, table-driven: every option with wrong types, negative,
// zero, overflowing and empty values, bad --listen addresses, unreadable files. Each row must
// exit 2 with one line naming the option and the value, and write nothing: a results file
// holding earlier rows stays byte-identical and a new one is not created. (kvmon has no config
// file of its own: packaging/kvmon.conf is an environment file that systemd turns into these
// same options.)
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "db_query.hpp"
#include "kvbench/schema.hpp"
#include "servers.hpp"

namespace kv::mon {
namespace {

using kv::test::Process;
using kv::test::slurp;
using kv::test::TempDir;

const std::string kKvmon = std::string(KV_BINARY_DIR) + "/monitor/kvmon";
const std::string kDb = "@DB";  // replaced by the results file under test

struct Case {
  std::vector<std::string> args;
  std::vector<std::string> expect;  // substrings of the one line printed
};

std::string joined(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + (a.empty() ? "''" : a);
  return s;
}

class KvmonBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = dir_.file("previous.db");
    open_results_db(previous_).exec(
        "INSERT INTO events (ts_us, source, kind, message) VALUES (1, 'kvmon', 'note', 'earlier')");
    previous_bytes_ = slurp(previous_);
    ASSERT_FALSE(previous_bytes_.empty());
    std::filesystem::create_directory(dir_.file("adir"));
    std::ofstream(dir_.file("token")) << "s3cret-token-0123456789\n";
    std::ofstream(dir_.file("short.token")) << "123456789012345\n";  // 15 bytes
    std::ofstream(dir_.file("empty.token")) << "\n";
    std::ofstream(dir_.file("garbage.db")) << "not a results file\n";
  }

  void expect_refused(std::vector<std::string> args, const std::vector<std::string>& expect) {
    SCOPED_TRACE(joined(args));
    args.insert(args.begin(), kKvmon);
    const std::string log = dir_.file("kvmon.log");
    std::remove(log.c_str());
    Process p(args, log);
    int code = p.wait(5000);  // a row that is accepted would run until stopped
    std::string out = slurp(log);
    EXPECT_EQ(code, 2) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_EQ(out.rfind("kvmon: ", 0), 0u) << out;
    for (const auto& e : expect) {
      bool found =
          out.find(e) != std::string::npos || (e == "''" && out.find("empty") != std::string::npos);
      EXPECT_TRUE(found) << "want " << e << " in " << out;
    }
  }

  void check_all(const std::vector<Case>& cases) {
    int runs = 0;
    for (const auto& c : cases) {
      if (std::find(c.args.begin(), c.args.end(), kDb) == c.args.end()) {
        expect_refused(c.args, c.expect);
        ++runs;
        continue;
      }
      for (const std::string& db : {previous_, dir_.file("new.db")}) {
        std::vector<std::string> args = c.args;
        std::replace(args.begin(), args.end(), kDb, db);
        expect_refused(args, c.expect);
        ++runs;
        EXPECT_TRUE(slurp(previous_) == previous_bytes_)
            << joined(args) << ": earlier rows changed";
        for (const char* suffix : {"", "-wal", "-shm"})
          EXPECT_FALSE(std::filesystem::exists(dir_.file("new.db") + suffix)) << joined(args);
      }
    }
    std::cout << cases.size() << " cases, " << runs << " kvmon runs\n";
  }

  // kvmon with the results file under test and a process name, then `more`.
  static std::vector<std::string> with(std::vector<std::string> more) {
    std::vector<std::string> args = {"--db", kDb, "--name", "redis-server"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  TempDir dir_;
  std::string previous_, previous_bytes_;
};

std::vector<std::string> names(const std::string& option, const std::string& value) {
  return {"--" + option, "'" + value + "'"};
}

TEST_F(KvmonBadInput, EveryOptionWithBadValues) {
  const std::vector<std::string> durations = {
      "abc", "-1", "99999999999999999999", "1e400", "64Ti", "", "5parsecs"};
  const std::vector<std::string> sizes = {"abc", "-1", "99999999999999999999", "1e400", "64Ti",
                                          "",    "1.5"};
  std::vector<Case> cases;
  auto each = [&](const std::string& option, const std::vector<std::string>& values,
                  std::vector<std::string> before = {}) {
    for (const auto& v : values) {
      std::vector<std::string> more = before;
      more.insert(more.end(), {"--" + option, v});
      cases.push_back({with(more), names(option, v)});
    }
  };
  each("pid", {"abc", "-1", "0", "99999999999999999999", "1e400", "64Ti", "", "2147483648", "1.5"});
  each("port", {"abc", "-1", "0", "65536", "99999999999999999999", "1e400", "", "80.5"});
  each("pidfile", {""});
  each("name", {""});
  each("interval", durations);
  each("interval", {"0", "5ms", "2h", "0.0001s"});
  // The host and flush intervals: valid durations, and not shorter than --interval (1s here).
  for (const char* option : {"host-interval", "flush-interval"}) {
    each(option, durations);
    each(option, {"0", "5ms", "2h", "500ms"});
  }
  each("pss-interval", durations);
  each("pss-max-rss", sizes);
  each("psi-trigger", {"", "memory", "disk:some:1ms/2s", "cpu:full:10ms/2s",
                       "memory:some:150ms/100ms", "memory:some:2s/1s", "memory:some:x/2s"});
  each("max-queued", {"abc", "-1", "99999999999999999999", "1e400", "", "1.5", "2000000"});
  each("max-clients", {"abc", "-1", "0", "99999999999999999999", "1e400", "", "1.5", "100000"});
  each("client-queue", sizes, {"--listen", "7070"});
  each("client-queue", {"0", "100"}, {"--listen", "7070"});
  each("idle-timeout", durations, {"--listen", "7070"});
  each("idle-timeout", {"0", "10ms"}, {"--listen", "7070"});
  each("history", durations, {"--listen", "7070"});
  each("history", {"25h", "2d"}, {"--listen", "7070"});
  each("history-max", sizes, {"--listen", "7070"});
  each("history-max", {"0", "1KiB", "65GiB"}, {"--listen", "7070"});
  each("listen", {"abc", "-1", "0", "65536", "99999999999999999999", "", "host:", ":7070",
                  "127.0.0.1:65536", "::1:7070", "[::1:7070", "127.0.0.1:abc"});
  each("metrics", {"abc", "-1", "0", "65536", "", "host:", ":9273", "127.0.0.1:65536", "::1:9273",
                   "[::1:9273", "127.0.0.1:abc"});
  each("log-level", {"bogus", "", "DEBUG", "5"});
  // --listen on another host needs a token file, and the token file must be usable.
  cases.push_back(
      {with({"--listen", "0.0.0.0:7070"}), {"--listen", "0.0.0.0:7070", "--token-file"}});
  cases.push_back(
      {with({"--metrics", "0.0.0.0:9273"}), {"--metrics", "0.0.0.0:9273", "--token-file"}});
  cases.push_back(
      {with({"--token-file", dir_.file("token")}), {"--token-file needs --listen or --metrics"}});
  cases.push_back({with({"--history", "10m"}), {"--history needs --listen"}});
  cases.push_back({with({"--history-max", "1MiB"}), {"--history-max needs --listen"}});
  for (const auto& [file, why] :
       std::vector<std::pair<std::string, std::string>>{{dir_.file("missing"), "missing"},
                                                        {dir_.file("adir"), "adir"},
                                                        {dir_.file("empty.token"), "empty.token"},
                                                        {dir_.file("short.token"), "at least 16"},
                                                        {"/dev/zero", "not a regular file"},
                                                        {"", "''"}})
    for (const char* listener : {"--listen", "--metrics"})
      cases.push_back({with({listener, "7070", "--token-file", file}), {"--token-file", why}});
  check_all(cases);
}

TEST_F(KvmonBadInput, ResultsFileAndStrayArguments) {
  std::vector<Case> cases = {
      {{"--name", "redis-server"}, {"--db is required"}},
      {{"--db", "", "--name", "redis-server"}, {"--db"}},
      {{"--db", dir_.file("adir"), "--name", "x"}, {"--db", "adir", "is a directory"}},
      {{"--db", dir_.file("nodir/r.db"), "--name", "x"}, {"--db", "nodir", "no such directory"}},
      {{"--db", dir_.file("garbage.db"), "--name", "x"},
       {"--db", "garbage.db", "not a SQLite file"}},
      {with({"--bogus"}), {"--bogus"}},
      {with({"--interval"}), {"--interval"}},
      // Control characters are shown escaped: the error stays one line and drives no terminal.
      {with({"--port", "1\nX"}), {"--port", "1\\nX"}},
      {with({"--interval", "\x1b]0;X\x07"}), {"--interval", "\\x1b]0;X\\x07"}},
  };
  check_all(cases);
  EXPECT_EQ(slurp(dir_.file("garbage.db")), "not a results file\n");
}

// --help says what each option takes (not TEXT for every string option).
TEST(KvmonHelp, ShowsTypesThatMeanSomething) {
  TempDir dir;
  Process p({kKvmon, "--help"}, dir.file("help.log"));
  ASSERT_EQ(p.wait(10'000), 0);
  const std::string help = slurp(dir.file("help.log"));
  EXPECT_EQ(help.find(" TEXT"), std::string::npos) << help;
  for (const char* shown : {"--db FILE", "--interval DURATION", "--metrics [ADDR:]PORT",
                            "--history-max SIZE", "--log-level LEVEL", "--pid PID"})
    EXPECT_NE(help.find(shown), std::string::npos) << shown << "\n" << help;
}

// A port kvmon cannot listen on (another socket holds it) is not bad input but a failure after
// the command line was accepted: exit 1 (docs/reference.md's exit-code table), naming the address.
TEST(KvmonListen, APortInUseExitsOneNamingTheAddress) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string where = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  TempDir dir;
  for (const std::string option : {"--metrics", "--listen"}) {
    SCOPED_TRACE(option);
    const std::string log = dir.file(option.substr(2) + ".log");
    Process p({kKvmon, "--db", dir.file("r.db"), "--name", "redis-server", option, where}, log);
    const int code = p.wait(20'000);
    const std::string out = slurp(log);
    EXPECT_EQ(code, 1) << out;
    EXPECT_NE(out.find("kvmon: cannot listen on " + where), std::string::npos) << out;
    if (option == "--metrics") {
      EXPECT_NE(out.find("(--metrics)"), std::string::npos) << out;
    }
  }
  ::close(fd);
}

}  // namespace
}  // namespace kv::mon
