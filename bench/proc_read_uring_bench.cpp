// Can io_uring batch kvmon's reads of /proc, /sys and cgroup files? Reads the same files with one
// pread each, then as one io_uring submission of reads per round, and prints the process's CPU
// per round (io_uring's kernel worker threads are threads of this process, so counted) and the
// io_uring worker threads it made. Not a test; run by hand:
//   ninja -C build proc_read_uring_bench && build/bench/proc_read_uring_bench [ROUNDS] [FILE...]
// (default: this process's stat and status, /proc/meminfo, /proc/stat, /proc/loadavg).
#include <dirent.h>
#include <fcntl.h>
#include <liburing.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {
double process_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

int uring_workers() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return -1;
  while (dirent* e = ::readdir(d)) {
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    if (std::getline(comm, name) && name.starts_with("iou-wrk")) ++n;
  }
  ::closedir(d);
  return n;
}
}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
  std::vector<std::string> files;
  for (int i = 2; i < argc; ++i) files.emplace_back(argv[i]);
  if (files.empty())
    files = {"/proc/self/stat", "/proc/self/status", "/proc/meminfo", "/proc/stat",
             "/proc/loadavg"};
  std::vector<int> fds;
  for (const std::string& f : files) {
    const int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      std::fprintf(stderr, "proc_read_uring_bench: cannot open %s\n", f.c_str());
      return 2;
    }
    fds.push_back(fd);
  }
  std::vector<std::array<char, 8192>> bufs(fds.size());
  io_uring ring{};
  if (io_uring_queue_init(64, &ring, 0) < 0) {
    std::fprintf(stderr, "proc_read_uring_bench: no io_uring\n");
    return 1;
  }
  const double c0 = process_cpu_us();
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < fds.size(); ++i)
      (void)::pread(fds[i], bufs[i].data(), bufs[i].size(), 0);
  const double c1 = process_cpu_us();
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < fds.size(); ++i) {
      io_uring_sqe* s = io_uring_get_sqe(&ring);
      io_uring_prep_read(s, fds[i], bufs[i].data(), static_cast<unsigned>(bufs[i].size()), 0);
    }
    io_uring_submit_and_wait(&ring, static_cast<unsigned>(fds.size()));
    io_uring_cq_advance(&ring, io_uring_cq_ready(&ring));
  }
  const double c2 = process_cpu_us();
  std::printf(
      "%zu files, %d rounds: pread %.1f us CPU per round, one io_uring submission %.1f us; "
      "io_uring worker threads: %d\n",
      fds.size(), rounds, (c1 - c0) / rounds, (c2 - c1) / rounds, uring_workers());
  io_uring_queue_exit(&ring);
  for (int fd : fds) ::close(fd);
  return 0;
}
