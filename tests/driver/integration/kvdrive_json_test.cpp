// Every JSON kvdrive writes is JSON a strict parser accepts, with no key twice: the --json
// summary, `report --format json`, and runs.parameters / phases.parameters in the results file.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;
using nlohmann::json;

// Parses `text` (throws on invalid JSON, invalid UTF-8 included) and returns every key that
// appears twice in one object, as "key".
std::vector<std::string> repeated_keys(const std::string& text) {
  std::vector<std::set<std::string>> open;
  std::vector<std::string> repeated;
  json::parser_callback_t cb = [&](int, json::parse_event_t ev, json& parsed) {
    if (ev == json::parse_event_t::object_start)
      open.emplace_back();
    else if (ev == json::parse_event_t::object_end)
      open.pop_back();
    else if (ev == json::parse_event_t::key &&
             !open.back().insert(parsed.get<std::string>()).second)
      repeated.push_back(parsed.get<std::string>());
    return true;
  };
  json parsed_whole = json::parse(text, cb);
  EXPECT_FALSE(parsed_whole.is_discarded());
  return repeated;
}

// Gets are checked against what was written only with --verify: without it their `wrong` is
// null (none was checked), not 0; with it, the count.
TEST(KvdriveJson, WrongIsNullForGetsNothingVerified) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  for (const bool verify : {false, true}) {
    std::vector<std::string> args = {"--log-level", "off",       "run",    "--db", dir.file("r.db"),
                                     "--target",    redis.uri(), "--keys", "100",  "--threads",
                                     "1",           "--json"};
    if (verify) args.push_back("--verify");
    auto out = run_kvdrive(dir, args);
    ASSERT_EQ(out.exit_code, 0) << out.output;
    json summary = json::parse(out.output);
    ASSERT_EQ(summary["phases"].size(), 2u) << out.output;
    const json& read = summary["phases"][1];
    ASSERT_EQ(read["op"], "get") << read.dump();
    if (verify)
      EXPECT_EQ(read["wrong"], 0) << read.dump();
    else
      EXPECT_TRUE(read["wrong"].is_null()) << read.dump();
    EXPECT_TRUE(summary["phases"][0]["wrong"].is_null()) << "sets are never checked";
  }
}

TEST(KvdriveJson, SummaryReportAndParametersAreStrictJsonWithoutRepeatedKeys) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  // Text that string concatenation got wrong: quotes, a backslash, non-ASCII.
  const std::string name = "caf\xc3\xa9 \"quoted\" \\ \xe2\x98\x95";
  const std::string prefix = "q\"\\\xc3\xa9:";
  auto out = run_kvdrive(
      dir, {"--log-level", "off", "run", "--db", dir.file("r.db"), "--target", redis.uri(),
            "--keys", "200", "--threads", "2", "--name", name, "--key-prefix", prefix, "--json"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  // Only the JSON on stdout (logs are off).
  std::vector<std::string> repeated;
  ASSERT_NO_THROW(repeated = repeated_keys(out.output)) << out.output;
  EXPECT_TRUE(repeated.empty()) << "repeated: " << repeated.front();
  json summary = json::parse(out.output);
  EXPECT_EQ(summary["name"], name);
  EXPECT_EQ(summary["status"], "completed");
  ASSERT_EQ(summary["phases"].size(), 2u);
  EXPECT_EQ(summary["phases"][0]["ops"], 200);
  EXPECT_TRUE(summary["phases"][0]["ops"].is_number_integer());
  for (const char* field : {"run_id", "started_ts_us", "ended_ts_us", "phases"})
    EXPECT_TRUE(summary.contains(field)) << field;

  auto db = kv::open_results_db(dir.file("r.db"));
  std::vector<std::string> stored;
  auto s = db.prepare("SELECT parameters FROM runs UNION ALL SELECT parameters FROM phases");
  while (s.step()) stored.push_back(s.column_text(0));
  ASSERT_EQ(stored.size(), 3u);
  for (const auto& text : stored) {
    SCOPED_TRACE(text);
    ASSERT_NO_THROW(repeated = repeated_keys(text));
    EXPECT_TRUE(repeated.empty()) << "repeated: " << repeated.front();  // connections, pipeline
    json p = json::parse(text);
    EXPECT_EQ(p["key_prefix"], prefix);
    EXPECT_EQ(p["keys"], 200);
    EXPECT_EQ(p["threads"], 2);
  }

  auto report = run_kvdrive(dir, {"report", "--db", dir.file("r.db"), "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  ASSERT_NO_THROW(repeated = repeated_keys(report.output)) << report.output;
  EXPECT_TRUE(repeated.empty());
  EXPECT_EQ(json::parse(report.output)["runs"][0]["name"], name);
}

// --json with --processes printed the group's text table: JSON too now.
TEST(KvdriveJson, AProcessGroupsSummaryIsJsonToo) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(dir, {"--log-level", "off", "run", "--db", dir.file("r.db"), "--target",
                               redis.uri(), "--keys", "400", "--threads", "2", "--processes", "2",
                               "--json", "--json-out", dir.file("group.json")});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  std::vector<std::string> repeated;
  ASSERT_NO_THROW(repeated = repeated_keys(out.output)) << out.output;
  EXPECT_TRUE(repeated.empty());
  json group = json::parse(out.output);
  EXPECT_EQ(group["processes"], 2);
  EXPECT_EQ(group["runs"].size(), 2u);
  EXPECT_TRUE(group["problems"].empty());
  int64_t sets = 0;
  for (const auto& p : group["phases"])
    if (p["op"] == "set") sets += p["ops"].get<int64_t>();
  EXPECT_EQ(sets, 400);
  EXPECT_EQ(sets, redis_command_calls(redis.port(), "set"));

  // --json-out: the parent writes one document of the group's runs with the group's summary
  // (the processes are not given --json-out: one writer, no race on the file).
  json doc;
  ASSERT_NO_THROW(doc = json::parse(slurp(dir.file("group.json"))));
  EXPECT_EQ(doc["format"], "kvbench-results");
  EXPECT_EQ(doc["group"], group);
  ASSERT_EQ(doc["runs"].size(), 2u);
  int64_t doc_sets = 0;
  for (const auto& r : doc["runs"]) {
    EXPECT_EQ(r["run_group"], group["run_group"]);
    EXPECT_EQ(r["status"], "completed");
    EXPECT_EQ(r["command_line"].get<std::string>().find("--json-out"), std::string::npos)
        << r["command_line"];
    for (const auto& p : r["phases"])
      if (p["op"] == "set") doc_sets += p["ops"].get<int64_t>();
  }
  EXPECT_EQ(doc_sets, 400);
  EXPECT_TRUE(doc["comparison"].empty());  // parts of one load, not runs to compare
}

// --json-out from a --config file, which a group's processes read too: only the parent writes
// the file (it is renamed into place once; each process writing it was two more renames).
TEST(KvdriveJson, AGroupsJsonOutFromAConfigFileIsWrittenByTheParentAlone) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string config = dir.file("bench.toml");
  std::ofstream(config) << "[run]\njson-out = \"" << dir.file("group.json") << "\"\n";
  const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, dir.path().c_str(), IN_MOVED_TO | IN_CLOSE_WRITE), 0);
  auto out = run_kvdrive(
      dir, {"--log-level", "off", "--config", config, "run", "--db", dir.file("r.db"), "--target",
            redis.uri(), "--keys", "400", "--threads", "2", "--processes", "2"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  int writes = 0;  // group.json renamed into place, or written directly
  alignas(inotify_event) char buf[1 << 16];
  for (ssize_t n; (n = ::read(watch, buf, sizeof buf)) > 0;) {
    for (char* p = buf; p < buf + n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(p);
      if (ev->len > 0 && std::string(ev->name) == "group.json") ++writes;
      p += sizeof(inotify_event) + ev->len;
    }
  }
  ::close(watch);
  EXPECT_EQ(writes, 1);
  json doc;
  ASSERT_NO_THROW(doc = json::parse(slurp(dir.file("group.json"))));
  EXPECT_EQ(doc["group"]["processes"], 2);
  EXPECT_EQ(doc["runs"].size(), 2u);
}

}  // namespace
