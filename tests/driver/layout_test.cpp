// driver/'s dependency rules, checked by reading the sources: for each folder, the folders its
// files may include ("folder/x.hpp"; "kvbench/..." is common/ and allowed everywhere). The CMake
// targets (one library per folder, linked along the same arrows) catch a missing link; this
// catches an include that compiles only because the include root is shared. A failure names
// the file:line of each forbidden include.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Folder → folders its files may include. An entry "folder/file.hpp" allows that one header
// only (stats/ counts OpStatus and sees nothing else of store/).
const std::map<std::string, std::set<std::string>>& rules() {
  static const std::map<std::string, std::set<std::string>> r = {
      {"", {"cli"}},  // main.cpp
      {"cli", {"cli", "run", "search", "report", "view", "results", "workload", "store", "util"}},
      // run/ orchestrates a run (phases, progress, signals, --processes) over the search and
      // the engine; search/ is the capacity search; engine/ measures and knows nothing of
      // either, nor of the results file, kvmon or reports.
      {"run", {"run", "search", "engine", "kvmon_link", "results", "stats", "workload", "store"}},
      {"search", {"search", "engine", "stats", "workload", "store"}},
      {"engine", {"engine", "stats", "workload", "store"}},
      {"results", {"results", "stats", "workload", "store"}},
      {"stats", {"stats", "store/op_status.hpp"}},
      {"workload", {"workload", "util"}},
      {"store", {"store"}},
      {"kvmon_link", {"kvmon_link"}},
      // view/ reads the results file back (the store's own histogram rows through the pure
      // reader); report/ renders what it read
      {"view", {"view", "store/redis_latency.hpp"}},
      // ... and the comparison of rounds with the statistics of stats/compare_stats
      {"report", {"report", "view", "stats/compare_stats.hpp"}},
      {"util", {"util"}},
  };
  return r;
}

bool allowed(const std::set<std::string>& allow, const std::string& header) {
  std::string folder = header.substr(0, header.find('/'));
  return folder == "kvbench" || allow.count(folder) > 0 || allow.count(header) > 0;
}

TEST(DriverLayout, IncludesFollowTheArrows) {
  const fs::path root = fs::path(KV_SOURCE_DIR) / "driver";
  const std::regex include_re(R"(^\s*#\s*include\s*"([^"]+)\")");
  std::vector<std::string> bad;
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const fs::path p = e.path();
    if (!e.is_regular_file() || (p.extension() != ".cpp" && p.extension() != ".hpp")) continue;
    const fs::path rel = fs::relative(p, root);
    const std::string folder = rel.has_parent_path() ? rel.begin()->string() : "";
    auto it = rules().find(folder);
    if (it == rules().end()) {
      bad.push_back("driver/" + rel.string() + ": folder '" + folder + "' has no row in the rules");
      continue;
    }
    ++files;
    std::ifstream in(p);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      const std::string header = m[1];
      if (header.find('/') == std::string::npos) {
        bad.push_back("driver/" + rel.string() + ":" + std::to_string(n) + ": \"" + header +
                      "\" carries no folder (includes are \"folder/file.hpp\" from driver/)");
      } else if (!allowed(it->second, header)) {
        bad.push_back("driver/" + rel.string() + ":" + std::to_string(n) + ": " + folder +
                      "/ may not include \"" + header + "\"");
      }
    }
  }
  EXPECT_GT(files, 50) << "read too few files under " << root;
  std::string all;
  for (const auto& b : bad) all += b + "\n";
  EXPECT_TRUE(bad.empty()) << all;
}

// report/ renders what view/ read: no statement, no SQL text in any of its files (a query a
// report needs is a loader in view/, which the HTML, text, JSON and CSV reports then share).
TEST(DriverLayout, ReportFilesHoldNoSql) {
  const fs::path root = fs::path(KV_SOURCE_DIR) / "driver" / "report";
  const std::regex sql_re(
      R"((\.prepare\(|\bStatement\b|\bexec\(|"[^"]*\b(SELECT|INSERT|UPDATE|DELETE|WITH)\s))");
  std::vector<std::string> bad;
  int files = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    ++files;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (std::regex_search(line, sql_re))
        bad.push_back("driver/report/" + e.path().filename().string() + ":" + std::to_string(n) +
                      ": " + line);
  }
  EXPECT_GT(files, 10) << "read too few files under " << root;
  std::string all;
  for (const auto& b : bad) all += b + "\n";
  EXPECT_TRUE(bad.empty()) << "SQL belongs in driver/view/:\n" << all;
}

// The checker itself: a forbidden include is told from an allowed one.
TEST(DriverLayout, RulesRefuseUpwardIncludes) {
  EXPECT_FALSE(allowed(rules().at("report"), "run/run.hpp"));
  EXPECT_FALSE(allowed(rules().at("store"), "workload/workload.hpp"));
  EXPECT_FALSE(allowed(rules().at("workload"), "store/target_uri.hpp"));
  EXPECT_FALSE(allowed(rules().at("stats"), "store/target_uri.hpp"));
  EXPECT_TRUE(allowed(rules().at("stats"), "store/op_status.hpp"));
  EXPECT_TRUE(allowed(rules().at("report"), "kvbench/sqlite.hpp"));
  // The arrows run one way: cli → run → search → engine.
  EXPECT_FALSE(allowed(rules().at("engine"), "run/run.hpp"));
  EXPECT_FALSE(allowed(rules().at("engine"), "search/search.hpp"));
  EXPECT_FALSE(allowed(rules().at("search"), "run/run_watcher.hpp"));
  EXPECT_FALSE(allowed(rules().at("engine"), "results/results_writer.hpp"));
  EXPECT_FALSE(allowed(rules().at("engine"), "report/text_table.hpp"));
  // Nothing includes cli/ but main.cpp, nor run/ but cli/.
  for (const auto& [folder, allow] : rules()) {
    if (folder != "" && folder != "cli") {
      EXPECT_FALSE(allowed(allow, "cli/cli.hpp")) << folder;
    }
    if (folder != "cli" && folder != "run") {
      EXPECT_FALSE(allowed(allow, "run/run.hpp")) << folder;
    }
  }
}

}  // namespace
