// run_process_group when a pipe cannot be made part-way (RLIMIT_NOFILE lowered in a forked
// child, whose limit and processes are its own): it throws, and leaves no pipe end open and no
// process it started running or unreaped. The store is a real redis-server, another process:
// this test forks without exec, so it must hold no thread of its own when it does (a fake
// store's thread holding the allocator's lock at the fork left the child hung under ASan).
#include "run/process_group.hpp"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <set>
#include <string>

#include "servers.hpp"

namespace kv::drive {
namespace {

std::set<int> open_fds() {
  std::set<int> fds;
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return fds;
  const int own = ::dirfd(d);
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const int fd = std::stoi(e->d_name);
    if (fd != own) fds.insert(fd);
  }
  ::closedir(d);
  return fds;
}

// In the forked child: 0 when the group failed as it should and left nothing behind.
int group_that_runs_out_of_fds(const RunOptions& opts) {
  const std::set<int> before = open_fds();
  // Room for 7 more descriptors: the checks (a connection, the results file) and two
  // processes' pipes (2 ends kept of each 4 made) fit; the third process's second pipe not.
  int free_below = 0, limit = 0;
  while (free_below < 7) free_below += before.count(limit++) == 0 ? 1 : 0;
  const rlimit rl{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
  if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) return 10;
  // The processes are this test binary (/proc/self/exe) running no test.
  std::string self = "process_group_test", filter = "--gtest_filter=-*";
  char* argv[] = {self.data(), filter.data(), nullptr};
  const std::atomic<bool> stop{false};
  try {
    run_process_group(opts, 2, argv, stop);
    return 11;  // it should not have got its pipes
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).find("cannot make a pipe") == std::string::npos) {
      std::fprintf(stderr, "unexpected error: %s\n", e.what());
      return 12;
    }
  }
  int left = 0;
  if (open_fds() != before) left |= 1;  // a pipe end left open
  errno = 0;
  if (::waitpid(-1, nullptr, WNOHANG) != -1 || errno != ECHILD) left |= 2;  // a process not reaped
  return left == 0 ? 0 : 20 + left;
}

TEST(ProcessGroup, APipeThatCannotBeMadeLeavesNoEndOpenAndNoProcessUnreaped) {
  kv::test::StoreServer store(kv::test::StoreServer::Kind::redis);
  KV_START_OR_SKIP(store);
  kv::test::TempDir dir;
  RunOptions opts;
  opts.db_path = dir.file("r.db");
  opts.targets = {store.uri()};
  opts.process_count = 3;
  opts.run_group = "g";
  opts.search.enabled = true;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(group_that_runs_out_of_fds(opts));
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  // 10: no limit set; 11: no failure; 12: another failure; 21: a pipe end left open; 22: a
  // process left unreaped; 23: both.
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace kv::drive
