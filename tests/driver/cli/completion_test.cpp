// The bash completion of kvdrive and kvmon is generated from their command-line definitions
// (kvbench/bash_completion.hpp): the packaged scripts are exactly what the programs print, and
// completing through them offers the subcommands and options there are, the values of an
// option that has a list, and file names where a file is wanted.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../integration/kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

const std::string kKvmon = std::string(KV_BINARY_DIR) + "/monitor/kvmon";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh output file per program run (a Process appends to its log).
std::string next_out(const TempDir& dir) {
  static int n = 0;
  return dir.file("out" + std::to_string(++n) + ".txt");
}

std::string printed(const TempDir& dir, const std::string& program) {
  const std::string out = next_out(dir);
  Process p({program, "--bash-completion"}, out);
  EXPECT_EQ(p.wait(10'000), 0);
  return slurp(out);
}

// What completing `words` (the last one being completed) offers, a word a line; _filedir
// offers "FILES" ("FILES-d" for directories).
std::string complete(const TempDir& dir, const std::string& program,
                     const std::vector<std::string>& words) {
  std::string script =
      "_init_completion() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; "
      "words=(\"${COMP_WORDS[@]}\"); cword=$COMP_CWORD; }\n"
      "_filedir() { COMPREPLY=(FILES${1:+$1}); }\n"
      "complete() { :; }\n"
      "source '" +
      std::string(KV_SOURCE_DIR) + "/packaging/" + program + ".bash-completion'\n" + "COMP_WORDS=(";
  for (const auto& w : words) script += " '" + w + "'";
  script += ")\nCOMP_CWORD=" + std::to_string(words.size() - 1) + "\n_" + program +
            "\n((${#COMPREPLY[@]} == 0)) || printf '%s\\n' \"${COMPREPLY[@]}\"\n";
  const std::string out = next_out(dir);
  Process p({"/bin/bash", "-c", script}, out);
  EXPECT_EQ(p.wait(10'000), 0) << slurp(out);
  return slurp(out);
}

bool offers(const std::string& out, const std::string& word) {
  return ("\n" + out).find("\n" + word + "\n") != std::string::npos;
}

TEST(BashCompletion, ThePackagedScriptsAreWhatTheProgramsPrint) {
  TempDir dir;
  EXPECT_EQ(printed(dir, kKvdrive),
            read_file(std::string(KV_SOURCE_DIR) + "/packaging/kvdrive.bash-completion"))
      << "regenerate: kvdrive --bash-completion > packaging/kvdrive.bash-completion";
  EXPECT_EQ(printed(dir, kKvmon),
            read_file(std::string(KV_SOURCE_DIR) + "/packaging/kvmon.bash-completion"))
      << "regenerate: kvmon --bash-completion > packaging/kvmon.bash-completion";
}

std::string reference(const TempDir& dir, const std::string& program) {
  const std::string out = next_out(dir);
  Process p({program, "--options-reference"}, out);
  EXPECT_EQ(p.wait(10'000), 0);
  return slurp(out);
}

// The option reference in docs/ is what the programs print from their CLI definitions, and it
// holds every option and subcommand their --help lists.
TEST(OptionsReference, TheDocsPagesAreWhatTheProgramsPrintAndHoldEveryOption) {
  TempDir dir;
  const std::string kvdrive = reference(dir, kKvdrive), kvmon = reference(dir, kKvmon);
  EXPECT_EQ(kvdrive, read_file(std::string(KV_SOURCE_DIR) + "/docs/kvdrive-options.md"))
      << "regenerate: kvdrive --options-reference > docs/kvdrive-options.md";
  EXPECT_EQ(kvmon, read_file(std::string(KV_SOURCE_DIR) + "/docs/kvmon-options.md"))
      << "regenerate: kvmon --options-reference > docs/kvmon-options.md";
  for (const char* sub : {"run", "report", "merge", "scenarios"})
    EXPECT_NE(kvdrive.find(std::string("\n## kvdrive ") + sub + "\n"), std::string::npos) << sub;
  for (const char* opt : {"`--target`", "`--search`", "`--slo`", "`--spin-budget`", "`--html`",
                          "`--percentiles`", "`-s,--server`", "`--duration,--test-time`"})
    EXPECT_NE(kvdrive.find(opt), std::string::npos) << opt;
  for (const char* opt : {"`--pid`", "`--name`", "`--listen`", "`--metrics`", "`--token-file`"})
    EXPECT_NE(kvmon.find(opt), std::string::npos) << opt;
  // A value and its default in their columns: `--slo` takes PCT=DURATION,...
  EXPECT_NE(kvdrive.find("| `--slo` | `PCT=DURATION,...` |"), std::string::npos);
}

TEST(BashCompletion, EverySubcommandItsOptionsAndTheirValues) {
  TempDir dir;
  const std::string top = complete(dir, "kvdrive", {"kvdrive", ""});
  for (const char* sub : {"run", "report", "merge", "scenarios"})
    EXPECT_TRUE(offers(top, sub)) << sub << " in\n" << top;
  const std::string run = complete(dir, "kvdrive", {"kvdrive", "run", "--"});
  for (const char* o : {"--target", "--spin-budget", "--json-out", "--hdr-log", "--key-maximum"})
    EXPECT_TRUE(offers(run, o)) << o;
  EXPECT_FALSE(offers(run, "--listen")) << "kvmon's, not run's";
  EXPECT_FALSE(offers(run, "--phase-barrier")) << "hidden: the group's own";
  const std::string report = complete(dir, "kvdrive", {"kvdrive", "report", "--"});
  EXPECT_TRUE(offers(report, "--html"));
  EXPECT_FALSE(offers(report, "--processes"));
  EXPECT_FALSE(offers(report, "--segment"));
  EXPECT_TRUE(offers(complete(dir, "kvdrive", {"kvdrive", "merge", "--"}), "--db"));
  EXPECT_EQ(complete(dir, "kvdrive", {"kvdrive", "report", "--format", ""}), "text\ncsv\njson\n");
  EXPECT_EQ(complete(dir, "kvdrive", {"kvdrive", "run", "--log-level", "w"}), "warn\n");
  EXPECT_EQ(complete(dir, "kvdrive", {"kvdrive", "--log-level", "e"}), "error\n");
  for (const auto& words :
       std::vector<std::vector<std::string>>{{"kvdrive", "report", "--html", ""},
                                             {"kvdrive", "report", "--json-out", ""},
                                             {"kvdrive", "run", "--hdr-log", ""},
                                             {"kvdrive", "run", "--json-out", ""},
                                             {"kvdrive", "--config", ""},
                                             {"kvdrive", "merge", "--db", "x.db", ""}})
    EXPECT_EQ(complete(dir, "kvdrive", words), "FILES\n") << testing::PrintToString(words);
  EXPECT_EQ(complete(dir, "kvdrive", {"kvdrive", "report", "--out", ""}), "FILES-d\n");
  EXPECT_TRUE(
      offers(complete(dir, "kvdrive", {"kvdrive", "report", "--db", "r.db", ""}), "search_steps"));
  EXPECT_EQ(complete(dir, "kvdrive", {"kvdrive", "run", "--threads", ""}), "")
      << "a number of the user's own: nothing offered";
  const std::string kvmon = complete(dir, "kvmon", {"kvmon", "--"});
  EXPECT_TRUE(offers(kvmon, "--listen"));
  EXPECT_TRUE(offers(kvmon, "--metrics"));
  EXPECT_EQ(complete(dir, "kvmon", {"kvmon", "--token-file", ""}), "FILES\n");
}

}  // namespace
