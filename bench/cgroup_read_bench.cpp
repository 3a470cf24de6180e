// CPU of kvmon's cgroup part of a tick: CgroupSampler::sample() on one process, its files kept
// open (pread), repeated. Not a test; run by hand (root, or the cgroup files readable):
//   ninja -C build cgroup_read_bench && build/bench/cgroup_read_bench PID [N]
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cgroup.hpp"

namespace {
double thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cgroup_read_bench PID [N]\n");
    return 2;
  }
  kv::mon::ProcFs fs;
  kv::mon::CgroupSampler cg(fs);
  const kv::ProcessKey key{static_cast<pid_t>(std::atoi(argv[1])), 0};
  const int n = argc > 2 ? std::atoi(argv[2]) : 20000;
  std::vector<kv::mon::EventRecord> events;
  kv::ProcessSample first;
  cg.sample(key, "bench", first, events);
  std::printf("cgroup: %s\n", cg.describe(key).c_str());
  const double t0 = thread_cpu_ns();
  for (int i = 0; i < n; ++i) {
    kv::ProcessSample s;
    cg.sample(key, "bench", s, events);
  }
  std::printf("%.1f us CPU per sample (%d samples)\n", (thread_cpu_ns() - t0) / n / 1000, n);
  return 0;
}
