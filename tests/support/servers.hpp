// Real redis-server and memcached for integration tests: each started on a free loopback port
// in its own temp dir, and stopped (SIGTERM, then SIGKILL) when the object is destroyed.
// With KV_REQUIRE_SERVERS=1 (CI) a missing server binary fails the test; otherwise it skips.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kv::test {

// A unique temp directory, removed recursively on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A free TCP port on 127.0.0.1 (bound to port 0, then released).
int free_port();
// Raises this process's soft RLIMIT_NOFILE to its hard limit (what the kvdrive and servers a
// test starts inherit); returns the soft limit then.
uint64_t raise_fd_limit();
// Full path of an executable on PATH or in /usr/sbin, /usr/bin; empty if none.
std::string find_program(const std::string& name);
// True when KV_REQUIRE_SERVERS=1.
bool servers_required();
// True once 127.0.0.1:port accepts a connection, polled every 50 ms for up to timeout_ms. A
// kvmon or store started under a sanitizer on a loaded machine takes seconds to listen: wait
// for it, never a fixed time.
bool accepts_within(int port, int timeout_ms);
// True once the file at `path` holds `needle`, polled every 50 ms for up to timeout_ms: for a
// process whose port the test cannot reach (one in a network namespace), its log line
// ("serving samples on") says it listens.
bool file_contains_within(const std::string& path, const std::string& needle, int timeout_ms);

// What a sanitizer reported of process `pid`: the files its *SAN_OPTIONS' log_path names for that
// pid (scripts/sanitize.sh sends the reports of the processes a test starts there), at most
// 8,000 bytes of each, headed by their names; empty when there are none. A test that fails on
// the exit code of a child (TSan exits 66) shows why, in the test's own output.
std::string sanitizer_reports_of(pid_t pid);

// A child process; killed and reaped on destruction.
class Process {
 public:
  Process() = default;
  // Starts argv[0] (a path) with the arguments; stdout/stderr go to `log_path` if non-empty.
  Process(const std::vector<std::string>& argv, const std::string& log_path = "");
  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  ~Process();
  pid_t pid() const { return pid_; }
  // Sends `sig`; does not wait.
  void signal(int sig) const;
  // Waits for exit up to timeout_ms; returns the exit code, 128+signal, or -1 on timeout.
  int wait(int timeout_ms);
  // SIGTERM, wait up to 5 s, then SIGKILL.
  void stop();
  bool running() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
};

// A running store server. start() returns false (and sets `why`) if the binary is missing;
// throws if it is present but does not come up (it is up when port() accepts a connection).
// An extra argument "{port}" is replaced by port(): {"--port", "0", "--tls-port", "{port}"}
// gives a redis-server that speaks only TLS on port().
class StoreServer {
 public:
  enum class Kind { redis, memcached };
  explicit StoreServer(Kind kind, const std::vector<std::string>& extra_args = {});
  ~StoreServer();
  bool start(std::string* why);
  void stop() { proc_.stop(); }
  // Restarts on the same port (after stop() or a kill).
  void restart();
  int port() const { return port_; }
  pid_t pid() const { return proc_.pid(); }
  Process& process() { return proc_; }
  std::string uri() const;  // redis://127.0.0.1:PORT or memcached://127.0.0.1:PORT
  const std::string& dir() const { return dir_.path(); }

 private:
  void launch();
  Kind kind_;
  std::vector<std::string> extra_;
  TempDir dir_;
  int port_ = 0;
  std::string binary_;
  Process proc_;
};

// Sends one command line to 127.0.0.1:port and returns the whole reply up to `terminator`
// (e.g. "END\r\n" for memcached stats). Throws on connection errors.
std::string tcp_request(int port, const std::string& request, const std::string& terminator,
                        int timeout_ms = 5000);
// Redis INFO section as "field:value" lines (RESP-decoded). Throws on error.
std::string redis_info(int port, const std::string& section);
// The integer value of `field` in an INFO / stats text ("field:value" or "STAT field value");
// -1 if absent.
long long stat_value(const std::string& text, const std::string& field);
// calls=N from Redis's "cmdstat_<cmd>:calls=N,..." line; 0 if the command was never called.
long long redis_command_calls(int port, const std::string& cmd);

}  // namespace kv::test

// Skips (or, when servers are required, fails) the current test if `server` cannot start.
#define KV_START_OR_SKIP(server)                             \
  do {                                                       \
    std::string kv_why_;                                     \
    if (!(server).start(&kv_why_)) {                         \
      if (::kv::test::servers_required()) FAIL() << kv_why_; \
      GTEST_SKIP() << kv_why_;                               \
    }                                                        \
  } while (0)
