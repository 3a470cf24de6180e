// What the bad-input tests of the real kvdrive share (bad_input_test.cpp and
// bad_input_files_test.cpp): the fixture that runs each case against a results file holding an
// earlier run and against a new path, and checks that it exits 2, prints one line naming the
// option and the value, and writes nothing.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kvdrive_test_util.hpp"
#include "results/results_writer.hpp"

namespace kv::drive {

using kv::test::Outcome;
using kv::test::slurp;
using kv::test::TempDir;

// Replaced by the results file under test: first one holding an earlier run, then a new path.
inline const std::string kDb = "@DB";

struct Case {
  std::vector<std::string> args;
  std::vector<std::string> expect;  // substrings of the one line printed
};

inline std::string joined(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + (a.empty() ? "''" : a);
  return s;
}

inline std::string in_quotes(const std::string& v) { return "'" + v + "'"; }

class KvdriveBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    target_ = "redis://127.0.0.1:" + std::to_string(kv::test::free_port());
    previous_ = dir_.file("previous.db");
    {
      Database db = open_results_db(previous_);
      ResultsWriter writer(db);
      int64_t run = writer.begin_run(
          RunInfo{"earlier", "kvdrive run ...", "{}", 1, "", 1.0, "", 0, 1, "", 0, 0});
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

// What a refusal of `value` for `option` must show: the option and the value in quotes (a long
// value may be cut after 20 characters, a multi-line one is not looked for).
inline std::vector<std::string> names(const std::string& option, const std::string& value) {
  if (value.find('\n') != std::string::npos) return {"--" + option};
  if (value.size() > 20) return {"--" + option, "'" + value.substr(0, 20)};
  return {"--" + option, in_quotes(value)};
}

}  // namespace kv::drive
