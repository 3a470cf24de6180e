#include "servers.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "db_query.hpp"

namespace kv::test {
namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "kvbench-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}
TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

bool accepts_within(int port, int timeout_ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
    if (fd >= 0) ::close(fd);
    if (ok) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

bool file_contains_within(const std::string& path, const std::string& needle, int timeout_ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find(needle) != std::string::npos) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

uint64_t raise_fd_limit() {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
  getrlimit(RLIMIT_NOFILE, &lim);
  return lim.rlim_cur;
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    throw std::runtime_error("bind failed");
  }
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string find_program(const std::string& name) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/sbin:/usr/bin:/usr/local/bin";
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string p = dir + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

bool servers_required() {
  const char* v = std::getenv("KV_REQUIRE_SERVERS");
  return v && std::string(v) == "1";
}

std::string sanitizer_reports_of(pid_t pid) {
  std::string out;
  for (const char* var : {"ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"}) {
    const char* v = std::getenv(var);
    if (v == nullptr) continue;
    const std::string opts = v;
    constexpr std::string_view kKey = "log_path=";
    const size_t at = opts.find(kKey);
    if (at == std::string::npos) continue;
    const size_t from = at + kKey.size();
    const std::string path =
        opts.substr(from, opts.find(':', from) - from) + "." + std::to_string(pid);
    const std::string text = slurp(path);
    if (!text.empty()) out += "--- " + path + "\n" + text.substr(0, 8000) + "\n";
  }
  return out;
}

Process::Process(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    if (!log_path.empty()) {
      int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::close(fd);
      }
    }
    ::setpgid(0, 0);  // Ctrl-C in the test's terminal goes to the test, which stops us
    ::execv(args[0], args.data());
    ::_exit(127);
  }
}
Process::Process(Process&& o) noexcept : pid_(o.pid_) { o.pid_ = -1; }
Process& Process::operator=(Process&& o) noexcept {
  if (this != &o) {
    stop();
    pid_ = o.pid_;
    o.pid_ = -1;
  }
  return *this;
}
Process::~Process() { stop(); }

void Process::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

int Process::wait(int timeout_ms) {
  if (pid_ <= 0) return -1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void Process::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGCONT);  // a stopped process cannot act on SIGTERM
  ::kill(pid_, SIGTERM);
  if (wait(5000) == -1 && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    wait(5000);
  }
}

StoreServer::StoreServer(Kind kind, const std::vector<std::string>& extra_args)
    : kind_(kind), extra_(extra_args) {}
StoreServer::~StoreServer() { proc_.stop(); }

std::string StoreServer::uri() const {
  return std::string(kind_ == Kind::redis ? "redis" : "memcached") +
         "://127.0.0.1:" + std::to_string(port_);
}

bool StoreServer::start(std::string* why) {
  binary_ = find_program(kind_ == Kind::redis ? "redis-server" : "memcached");
  if (binary_.empty()) {
    *why = std::string(kind_ == Kind::redis ? "redis-server" : "memcached") +
           " is not installed (apt-get install redis-server memcached)";
    return false;
  }
  port_ = free_port();
  launch();
  return true;
}

void StoreServer::restart() {
  proc_.stop();
  launch();
}

void StoreServer::launch() {
  std::vector<std::string> argv{binary_};
  if (kind_ == Kind::redis) {
    argv.insert(argv.end(), {"--port", std::to_string(port_), "--bind", "127.0.0.1", "--dir",
                             dir_.path(), "--save", "", "--appendonly", "no", "--daemonize", "no",
                             "--protected-mode", "no"});
  } else {
    argv.insert(argv.end(), {"-p", std::to_string(port_), "-l", "127.0.0.1", "-U", "0", "-m", "256",
                             "-t", "2"});
    if (::geteuid() == 0) argv.insert(argv.end(), {"-u", "root"});
  }
  for (const auto& a : extra_) argv.push_back(a == "{port}" ? std::to_string(port_) : a);
  proc_ = Process(argv, dir_.file("server.log"));
  // Up when it accepts a connection (up to 10 s).
  for (int i = 0; i < 1000; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port_));
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (ok) return;
    if (proc_.wait(0) != -1) break;  // it exited
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error(binary_ + " did not start on port " + std::to_string(port_) + " (see " +
                           dir_.file("server.log") + ")");
}

std::string tcp_request(int port, const std::string& request, const std::string& terminator,
                        int timeout_ms) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot connect to port " + std::to_string(port));
  }
  if (::write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    ::close(fd);
    throw std::runtime_error("short write");
  }
  std::string reply;
  char buf[65536];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (reply.size() < terminator.size() ||
         reply.compare(reply.size() - terminator.size(), terminator.size(), terminator) != 0) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      reply.append(buf, static_cast<size_t>(n));
    }
    if (std::chrono::steady_clock::now() > deadline) break;
  }
  ::close(fd);
  return reply;
}

std::string redis_info(int port, const std::string& section) {
  // Bulk reply: $LEN\r\n<body>\r\n. Read until the declared length has arrived.
  std::string req = "INFO " + section + "\r\n";
  std::string reply = tcp_request(port, req, "\r\n\r\n");
  auto nl = reply.find("\r\n");
  if (reply.empty() || reply[0] != '$' || nl == std::string::npos)
    throw std::runtime_error("bad INFO reply: " + reply.substr(0, 80));
  return reply.substr(nl + 2);
}

long long stat_value(const std::string& text, const std::string& field) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
    if (line.rfind("STAT " + field + " ", 0) == 0) return std::stoll(line.substr(field.size() + 6));
  }
  return -1;
}

long long redis_command_calls(int port, const std::string& cmd) {
  std::string text = redis_info(port, "commandstats");
  std::string key = "cmdstat_" + cmd + ":calls=";
  auto pos = text.find(key);
  if (pos == std::string::npos) return 0;
  return std::stoll(text.substr(pos + key.size()));
}

}  // namespace kv::test
