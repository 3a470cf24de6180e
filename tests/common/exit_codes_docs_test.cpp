// The exit-code table (kvbench/exit_codes.hpp) and its documentation agree: docs/reference.md's
// "Errors and exit codes" table and each man page's EXIT STATUS section name exactly the codes
// that program exits with. A code added to kExitCodes without docs (or documented but not in
// the table) fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kvbench/exit_codes.hpp"

namespace kv {
namespace {

std::string read_source(const std::string& rel) {
  std::ifstream in(std::string(KV_SOURCE_DIR) + "/" + rel);
  EXPECT_TRUE(in) << rel;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(' ');
  const auto e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The reference's table rows: code → {kvdrive cell, kvmon cell}.
struct Row {
  std::string kvdrive, kvmon;
};
std::vector<std::pair<int, Row>> reference_rows() {
  std::vector<std::pair<int, Row>> rows;
  bool in_section = false;
  for (const auto& line : lines_of(read_source("docs/reference.md"))) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Errors and exit codes";
    if (!in_section || line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::string cell;
    for (char c : line.substr(1)) {
      if (c == '|') {
        cells.push_back(trim(cell));
        cell.clear();
      } else {
        cell += c;
      }
    }
    if (cells.size() != 3 || cells[0].empty() ||
        cells[0].find_first_not_of("0123456789") != std::string::npos)
      continue;  // the header and the |---| line
    rows.push_back({std::stoi(cells[0]), {cells[1], cells[2]}});
  }
  return rows;
}

// The codes a man page's EXIT STATUS section gives (`.B N` after `.TP`).
std::set<int> man_codes(const std::string& page) {
  std::set<int> codes;
  bool in_section = false, after_tp = false;
  for (const auto& line : lines_of(read_source(page))) {
    if (!line.empty() && line[0] == '[') in_section = line == "[EXIT STATUS]";
    if (!in_section) continue;
    if (after_tp && line.rfind(".B ", 0) == 0) {
      const std::string n = line.substr(3);
      EXPECT_EQ(n.find_first_not_of("0123456789"), std::string::npos) << page << ": " << line;
      codes.insert(std::stoi(n));
    }
    after_tp = line == ".TP";
  }
  return codes;
}

std::set<int> table_codes(bool kvdrive) {
  std::set<int> codes;
  for (const auto& c : kExitCodes)
    if ((kvdrive ? c.kvdrive : c.kvmon) != nullptr) codes.insert(c.code);
  return codes;
}

TEST(ExitCodesDocs, ReferenceTableHasOneRowPerCode) {
  const auto rows = reference_rows();
  ASSERT_EQ(rows.size(), kExitCodes.size()) << "docs/reference.md \"Errors and exit codes\" rows";
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [code, row] = rows[i];
    const ExitCodeInfo& c = kExitCodes[i];
    EXPECT_EQ(code, c.code) << "row " << i;
    // A program that never exits with the code shows "—"; one that does says what it means.
    EXPECT_EQ(row.kvdrive == "—", c.kvdrive == nullptr) << "code " << code << ": " << row.kvdrive;
    EXPECT_EQ(row.kvmon == "—", c.kvmon == nullptr) << "code " << code << ": " << row.kvmon;
    EXPECT_FALSE(row.kvdrive.empty());
    EXPECT_FALSE(row.kvmon.empty());
  }
}

TEST(ExitCodesDocs, KvdriveManPageNamesEveryKvdriveCode) {
  EXPECT_EQ(man_codes("packaging/man/kvdrive.h2m"), table_codes(true));
}

TEST(ExitCodesDocs, KvmonManPageNamesEveryKvmonCode) {
  EXPECT_EQ(man_codes("packaging/man/kvmon.h2m"), table_codes(false));
}

TEST(ExitCodesDocs, CodesAreDistinctAndInOrder) {
  for (size_t i = 1; i < kExitCodes.size(); ++i)
    EXPECT_LT(kExitCodes[i - 1].code, kExitCodes[i].code);
}

}  // namespace
}  // namespace kv
