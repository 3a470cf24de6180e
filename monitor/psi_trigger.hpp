// Opt-in PSI triggers (--psi-trigger): the kernel wakes kvmon the moment a pressure stall
// passes a threshold within a window, instead of kvmon seeing it in the next avg10 poll. Setting
// a trigger is a write to the pressure file (kvmon's one write; without CAP_SYS_RESOURCE Linux
// 6.5+ accepts only windows of whole multiples of 2 s, older kernels none: EINVAL / EPERM, said
// in one warning, and kvmon goes on polling); each trigger is one open descriptor that polls
// POLLPRI when it fires (Documentation/accounting/psi.rst). The host's /proc/pressure/<resource>,
// or with "cgroup:" each target's cgroup v2 <resource>.pressure (set again when the target moves
// or restarts); the kernel rate-limits a trigger to one event per window.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kv::mon {

struct PsiTriggerSpec {
  bool cgroup = false;    // on each target's cgroup (v2), not the host
  std::string resource;   // memory, io, cpu
  std::string kind;       // some, full
  int64_t stall_us = 0;   // the stall that fires the trigger within...
  int64_t window_us = 0;  // ...this window (the kernel allows 500ms..10s)
  // "memory some >= 150ms within 1s"
  std::string describe() const;
};

// "[cgroup:]RESOURCE:KIND:STALL/WINDOW", e.g. "memory:some:150ms/1s", "io:full:50ms/2s" or
// "cgroup:cpu:some:200ms/2s". Throws UsageError naming what is wrong (a resource other than
// memory/io/cpu, a kind other than some/full, "full" for the host's cpu, a window outside
// 500ms..10s, a stall not below the window).
PsiTriggerSpec parse_psi_trigger(std::string_view text);

// One trigger set on a pressure file, kept open. Move-only.
class PsiTrigger {
 public:
  PsiTrigger() = default;
  // Opens `path` read-write and writes the trigger; on failure fd() is -1 and error() says why.
  PsiTrigger(const std::string& path, const PsiTriggerSpec& spec);
  PsiTrigger(PsiTrigger&& other) noexcept;
  PsiTrigger& operator=(PsiTrigger&& other) noexcept;
  PsiTrigger(const PsiTrigger&) = delete;
  PsiTrigger& operator=(const PsiTrigger&) = delete;
  ~PsiTrigger();

  int fd() const { return fd_; }
  const std::string& error() const { return error_; }
  const PsiTriggerSpec& spec() const { return spec_; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
  PsiTriggerSpec spec_;
  std::string error_;
};

}  // namespace kv::mon
