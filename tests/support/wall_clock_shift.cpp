// An LD_PRELOAD library for tests: CLOCK_REALTIME as the process reads it through
// clock_gettime, moved back by the seconds written in the file $KV_WALL_CLOCK_BACK_FILE (read at
// every call; absent or empty: 0). What NTP stepping the clock back looks like to the process,
// without touching the machine's clock. Only CLOCK_REALTIME: the monotonic clock goes on.
#include <dlfcn.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>

namespace {

using ClockGettime = int (*)(clockid_t, timespec*);

long seconds_back() {
  const char* path = std::getenv("KV_WALL_CLOCK_BACK_FILE");
  if (path == nullptr) return 0;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[32] = {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  return n > 0 ? std::strtol(buf, nullptr, 10) : 0;
}

}  // namespace

extern "C" int clock_gettime(clockid_t id, timespec* ts) {
  static const auto real = reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime"));
  const int r = real(id, ts);
  if (r == 0 && id == CLOCK_REALTIME) ts->tv_sec -= seconds_back();
  return r;
}
