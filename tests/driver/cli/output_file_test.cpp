// write_file_atomically: a report file is replaced whole or not at all.
#include "cli/output_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "db_query.hpp"
#include "servers.hpp"

namespace kv::drive {
namespace {

using kv::test::slurp;
using kv::test::TempDir;

size_t files_in(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(OutputFile, WritesTheWholeText) {
  TempDir dir;
  write_file_atomically(dir.file("r.html"), [](std::ostream& out) { out << "<html>page</html>"; });
  EXPECT_EQ(slurp(dir.file("r.html")), "<html>page</html>");
  EXPECT_EQ(files_in(dir.path()), 1u);  // no temporary file left
}

TEST(OutputFile, AFailedWriteKeepsTheOldFileAndLeavesNoTemporary) {
  TempDir dir;
  std::ofstream(dir.file("r.html")) << "old report";
  EXPECT_THROW(write_file_atomically(dir.file("r.html"),
                                     [](std::ostream& out) {
                                       out << "half a pa";
                                       throw std::runtime_error("query failed");
                                     }),
               std::runtime_error);
  EXPECT_EQ(slurp(dir.file("r.html")), "old report");
  // A last check that refuses: nothing renamed, the temporary file removed.
  EXPECT_THROW(write_file_atomically(
                   dir.file("r.html"), [](std::ostream& out) { out << "new"; },
                   [] { throw std::invalid_argument("now it is the results file"); }),
               std::invalid_argument);
  EXPECT_EQ(slurp(dir.file("r.html")), "old report");
  EXPECT_EQ(files_in(dir.path()), 1u);
}

TEST(OutputFile, ReplacesTheFileASymlinkPointsToAndKeepsItsMode) {
  TempDir dir;
  std::ofstream(dir.file("real.html")) << "old";
  chmod(dir.file("real.html").c_str(), 0640);
  std::filesystem::create_symlink(dir.file("real.html"), dir.file("link.html"));
  write_file_atomically(dir.file("link.html"), [](std::ostream& out) { out << "new"; });
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("link.html")));
  EXPECT_EQ(slurp(dir.file("real.html")), "new");
  struct stat st {};
  ASSERT_EQ(stat(dir.file("real.html").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST(OutputFile, AMissingDirectoryIsAnError) {
  TempDir dir;
  EXPECT_THROW(write_file_atomically(dir.file("no/r.html"), [](std::ostream& out) { out << "x"; }),
               std::runtime_error);
}

}  // namespace
}  // namespace kv::drive
