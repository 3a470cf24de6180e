#include "psi_trigger.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"

namespace kv::mon {

std::string PsiTriggerSpec::describe() const {
  return resource + " " + kind + " >= " + format_duration_us(stall_us) + " within " +
         format_duration_us(window_us);
}

PsiTriggerSpec parse_psi_trigger(std::string_view text) {
  const std::string what = "--psi-trigger '" + std::string(text) + "'";
  auto bad = [&](const std::string& why) { return UsageError(what + ": " + why); };
  PsiTriggerSpec s;
  if (text.starts_with("cgroup:")) {
    s.cgroup = true;
    text.remove_prefix(7);
  }
  size_t c1 = text.find(':');
  size_t c2 = c1 == std::string_view::npos ? c1 : text.find(':', c1 + 1);
  size_t slash = c2 == std::string_view::npos ? c2 : text.find('/', c2 + 1);
  if (slash == std::string_view::npos) {
    throw bad("expected [cgroup:]RESOURCE:KIND:STALL/WINDOW, e.g. memory:some:150ms/1s");
  }
  s.resource = std::string(text.substr(0, c1));
  s.kind = std::string(text.substr(c1 + 1, c2 - c1 - 1));
  if (s.resource != "memory" && s.resource != "io" && s.resource != "cpu") {
    throw bad("the resource must be memory, io or cpu");
  }
  if (s.kind != "some" && s.kind != "full") throw bad("the kind must be some or full");
  // A cgroup's cpu.pressure has a full line (5.13+); the host's is always zero.
  if (s.resource == "cpu" && s.kind == "full" && !s.cgroup) {
    throw bad("the host has no cpu full stall (a cgroup has: cgroup:cpu:full:...)");
  }
  try {
    s.stall_us = parse_duration_us(std::string(text.substr(c2 + 1, slash - c2 - 1)));
    s.window_us = parse_duration_us(std::string(text.substr(slash + 1)));
  } catch (const std::exception& e) {
    throw bad(e.what());
  }
  if (s.window_us < 500'000 || s.window_us > 10'000'000) {
    throw bad("the window must be from 500ms to 10s (the kernel's bounds)");
  }
  if (s.stall_us <= 0 || s.stall_us >= s.window_us) {
    throw bad("the stall must be above 0 and below the window");
  }
  return s;
}

PsiTrigger::PsiTrigger(const std::string& path, const PsiTriggerSpec& spec)
    : path_(path), spec_(spec) {
  fd_ = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    error_ = std::strerror(errno);
    return;
  }
  const std::string line =
      spec.kind + " " + std::to_string(spec.stall_us) + " " + std::to_string(spec.window_us);
  // the kernel wants the trigger with its terminating NUL
  if (::write(fd_, line.c_str(), line.size() + 1) < 0) {
    error_ = std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
  }
}

PsiTrigger::PsiTrigger(PsiTrigger&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      spec_(std::move(other.spec_)),
      error_(std::move(other.error_)) {}

PsiTrigger& PsiTrigger::operator=(PsiTrigger&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    spec_ = std::move(other.spec_);
    error_ = std::move(other.error_);
  }
  return *this;
}

PsiTrigger::~PsiTrigger() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace kv::mon
