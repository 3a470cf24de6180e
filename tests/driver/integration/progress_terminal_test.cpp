// The progress line fitted to the terminal: the pure fitting, then the real kvdrive on a pty of
// 80 and 40 columns, its output replayed through a small terminal model (autowrap, \r, \n,
// erase-to-end-of-line): no redraw may wrap, and the screen after the run holds only the summary.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <vector>

#include "kvdrive_test_util.hpp"
#include "run/progress.hpp"

namespace kv::drive {
namespace {

namespace pp = progress_priority;

std::vector<ProgressField> sample_fields() {
  return {{"redis://127.0.0.1:6379 read", pp::kLabel},
          {"12/60 s", pp::kElapsed},
          {"1,234,567/5,000,000", pp::kCount},
          {"123,456 req/s", pp::kRate},
          {"p99 0.123 ms", pp::kP99},
          {"errors 0", pp::kNoErrors},
          {"store mem 1.2 GiB", pp::kStoreMemory},
          {"redis rss 1.3 GiB swap 0 B", pp::kMonitored}};
}

TEST(ProgressFit, WholeLineWhenItFitsOrTheWidthIsUnknown) {
  const std::string all =
      "redis://127.0.0.1:6379 read  12/60 s  1,234,567/5,000,000  123,456 req/s  p99 0.123 ms  "
      "errors 0  store mem 1.2 GiB  redis rss 1.3 GiB swap 0 B";
  EXPECT_EQ(fit_progress_line(sample_fields(), 0), all);
  EXPECT_EQ(fit_progress_line(sample_fields(), all.size()), all);
}

TEST(ProgressFit, DropsByPriorityNotByPosition) {
  EXPECT_EQ(fit_progress_line(sample_fields(), 79),
            "redis://127.0.0.1:6379 read  12/60 s  123,456 req/s  p99 0.123 ms  errors 0");
  EXPECT_EQ(fit_progress_line(sample_fields(), 60),
            "redis://127.0.0.1:6379 read  12/60 s  123,456 req/s");
  EXPECT_EQ(fit_progress_line(sample_fields(), 39), "redis://127.0.0.1:6379 read  12/60 s");
  // Errors, once there are some, outlive p99 and the count.
  auto f = sample_fields();
  f[5] = {"errors 17", pp::kErrors};
  EXPECT_EQ(fit_progress_line(f, 70),
            "redis://127.0.0.1:6379 read  12/60 s  123,456 req/s  errors 17");
}

TEST(ProgressFit, CutsTheLabelAtACodePoint) {
  std::vector<ProgressField> f{{"étape-très-longue", pp::kLabel}, {"3 s", pp::kElapsed}};
  EXPECT_EQ(fit_progress_line(f, 5), "étape");
  EXPECT_EQ(fit_progress_line(f, 1), "é");
}

TEST(ProgressFit, SplitsTextOnDoubleSpacesLaterPiecesFirst) {
  std::vector<ProgressField> f;
  add_progress_fields(f, "  a rss 1 MiB swap 0 B  b rss 2 MiB swap 0 B", 30);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].text, "a rss 1 MiB swap 0 B");
  EXPECT_EQ(f[1].text, "b rss 2 MiB swap 0 B");
  EXPECT_GT(f[0].priority, f[1].priority);
  add_progress_fields(f, "", 30);
  EXPECT_EQ(f.size(), 2u);
}

// A terminal of `width` columns: printable code points advance the cursor and wrap at the edge
// (counted in `wraps`), \r goes to column 0, \n to the next row, ESC [ ... K erases to the end of
// the row; other escape sequences are skipped.
struct Screen {
  explicit Screen(size_t columns) : width(columns), rows(1) {}
  void feed(const std::string& bytes) {
    for (size_t i = 0; i < bytes.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(bytes[i]);
      if (c == '\r') {
        col = 0;
        continue;
      }
      if (c == '\n') {
        newline();
        continue;
      }
      if (c == 0x1b && i + 1 < bytes.size() && bytes[i + 1] == '[') {
        size_t j = i + 2;
        while (j < bytes.size() && !std::isalpha(static_cast<unsigned char>(bytes[j]))) ++j;
        if (j < bytes.size() && bytes[j] == 'K') rows[row].resize(std::min(rows[row].size(), col));
        i = j;
        continue;
      }
      if ((c & 0xC0) == 0x80) {
        cell_tail(c);
        continue;
      }  // UTF-8 continuation: same cell
      if (c < 0x20) continue;
      if (col == width) {
        ++wraps;
        newline();
      }
      auto& r = rows[row];
      if (r.size() <= col) r.resize(col + 1, " ");
      r[col++] = std::string(1, static_cast<char>(c));
    }
  }
  void cell_tail(unsigned char c) {
    if (col > 0) rows[row][col - 1] += static_cast<char>(c);
  }
  void newline() {
    col = 0;
    if (++row == rows.size()) rows.emplace_back();
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const auto& r : rows) {
      std::string s;
      for (const auto& cell : r) s += cell;
      while (!s.empty() && s.back() == ' ') s.pop_back();
      out.push_back(s);
    }
    while (!out.empty() && out.back().empty()) out.pop_back();
    return out;
  }
  size_t width;
  std::vector<std::vector<std::string>> rows;
  size_t row = 0, col = 0;
  int wraps = 0;
};

struct PtyRun {
  int exit_code = -1;
  std::string bytes;
};

// Runs kvdrive with stderr (and stdout too unless `stdout_file` is set) on a pty of `width`
// columns and returns everything the terminal received.
PtyRun run_on_pty(unsigned short width, const std::vector<std::string>& args,
                  const std::string& stdout_file = "") {
  winsize ws{};
  ws.ws_col = width;
  ws.ws_row = 40;
  int master = -1;
  pid_t pid = forkpty(&master, nullptr, nullptr, &ws);
  if (pid == 0) {
    if (!stdout_file.empty()) {
      int fd = ::open(stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, STDOUT_FILENO);
    }
    std::vector<char*> argv;
    std::string prog = kv::test::kKvdrive;
    argv.push_back(prog.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(prog.c_str(), argv.data());
    _exit(127);
  }
  PtyRun out;
  if (pid < 0) return out;
  char buf[4096];
  auto until = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO once the child and its pty slave are gone
    out.bytes.append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

// Removes whole log records ("kvdrive <time> warning ...", ended by the pty's \r\n): a warning
// is legitimate on a busy host (a client stall, say) and sits on lines of its own; what may not
// stay on the screen is a fragment of a redraw.
std::string without_log_records(const std::string& bytes) {
  static const std::regex record(
      "kvdrive [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z (warning|error): [^\n]*\n");
  return std::regex_replace(bytes, record, "");
}

TEST(ProgressScreen, AWarningBetweenRedrawsIsSetAsideAndAFragmentIsNot) {
  const std::string warning =
      "kvdrive 2026-12-05T07:20:40.013Z warning: the client was descheduled for 120 ms\r\n";
  Screen clean(40);
  clean.feed(without_log_records("\r\033[Kread 1/3 s\r\033[K" + warning +
                                 "\r\033[Kread 2/3 s\r\033[Kstore  req/s\r\n"));
  ASSERT_FALSE(clean.lines().empty());
  EXPECT_EQ(clean.lines().front(), "store  req/s");
  Screen fragment(40);
  fragment.feed(without_log_records("read 2/3 s\r\nstore  req/s\r\n"));
  EXPECT_EQ(fragment.lines().front(), "read 2/3 s");
}

class ProgressOnPty : public ::testing::TestWithParam<unsigned short> {};

TEST_P(ProgressOnPty, RedrawsNeverWrapAndLeaveNoFragmentAboveTheSummary) {
  const unsigned short width = GetParam();
  kv::test::StoreServer redis(kv::test::StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  kv::test::TempDir dir;
  const std::vector<std::string> args{
      "--log-level", "warn", "run",        "--db", dir.file("r.db"), "--target", redis.uri(),
      "--keys",      "2000", "--duration", "3s",   "--threads",      "1"};
  // The progress line alone (stdout elsewhere): every redraw fits, and nothing stays.
  PtyRun alone = run_on_pty(width, args, dir.file("summary.txt"));
  ASSERT_EQ(alone.exit_code, 0) << alone.bytes;
  size_t redraws = 0;
  for (size_t at = alone.bytes.find("\r\033[K"); at != std::string::npos;
       at = alone.bytes.find("\r\033[K", at + 1))
    if (at + 4 < alone.bytes.size() && alone.bytes[at + 4] != '\r') ++redraws;
  EXPECT_GE(redraws, 2u) << "the read phase lasts 3 s: at least two redraws";
  EXPECT_NE(alone.bytes.find(" s"), std::string::npos) << "the elapsed time is always shown";
  Screen s1(width);
  s1.feed(without_log_records(alone.bytes));
  EXPECT_EQ(s1.wraps, 0) << alone.bytes;
  EXPECT_TRUE(s1.lines().empty()) << "left on the screen: " << s1.lines().front();

  // With the summary on the same terminal: its header is the first thing on the screen (fitted
  // to the width: a header's upper lines, which leave the store column blank, or the store's
  // name above a table of its own).
  PtyRun both = run_on_pty(width, args);
  ASSERT_EQ(both.exit_code, 0) << both.bytes;
  Screen s2(width);
  s2.feed(without_log_records(both.bytes));
  auto lines = s2.lines();
  while (!lines.empty() && lines.front().empty()) lines.erase(lines.begin());
  ASSERT_FALSE(lines.empty());
  const std::string& first = lines.front();
  EXPECT_TRUE(first.rfind("store", 0) == 0 || first.rfind("     ", 0) == 0 ||
              first == redis.uri() + ":")
      << "above the summary: " << first;
  for (const auto& l : lines) EXPECT_EQ(l.find("req/s  p99"), std::string::npos) << l;
  // The summary fits an 80-column terminal: no line wraps (at 40 a table may still).
  if (width == 80) {
    EXPECT_EQ(s2.wraps, 0) << both.bytes;
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, ProgressOnPty, ::testing::Values(80, 40));

}  // namespace
}  // namespace kv::drive
