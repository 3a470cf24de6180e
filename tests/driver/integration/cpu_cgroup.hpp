// A CPU cgroup (v1 or v2) holding processes to a share of one core: a store made slow, or a
// kvdrive starved of CPU. Needs root.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

namespace kv::test {

inline bool write_cgroup_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

// A CPU cgroup limited to quota/period of one core, removed on destruction (declare it before
// the processes it holds, so they are gone first).
class CpuCgroup {
 public:
  CpuCgroup(int64_t quota_us, int64_t period_us, std::string* why) {
    const std::string name =
        "kvbench-test-" + std::to_string(::getpid()) + "-" + std::to_string(next_id());
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists("/sys/fs/cgroup/cpu/cgroup.procs", ec)) {  // v1
      dir_ = "/sys/fs/cgroup/cpu/" + name;
      fs::create_directory(dir_, ec);
      if (!ec && write_cgroup_file(dir_ + "/cpu.cfs_period_us", std::to_string(period_us)) &&
          write_cgroup_file(dir_ + "/cpu.cfs_quota_us", std::to_string(quota_us)))
        return;
    } else if (fs::exists("/sys/fs/cgroup/cgroup.controllers", ec)) {  // v2
      write_cgroup_file("/sys/fs/cgroup/cgroup.subtree_control", "+cpu");
      dir_ = "/sys/fs/cgroup/" + name;
      fs::create_directory(dir_, ec);
      if (!ec && write_cgroup_file(dir_ + "/cpu.max",
                                   std::to_string(quota_us) + " " + std::to_string(period_us)))
        return;
    }
    *why = "no CPU cgroup can be made (needs root and a cgroup v1 cpu or v2 cpu controller)";
    dir_.clear();
  }
  ~CpuCgroup() {
    if (dir_.empty()) return;
    // Empty once its processes have exited (a store stopped by its own destructor first).
    for (int i = 0; i < 50 && ::rmdir(dir_.c_str()) != 0; ++i) ::usleep(100'000);
  }
  bool ok() const { return !dir_.empty(); }
  bool add(pid_t pid) { return write_cgroup_file(procs_file(), std::to_string(pid)); }
  std::string procs_file() const { return dir_ + "/cgroup.procs"; }
  // `argv` run inside the cgroup: a shell joins it, then becomes argv[0], so every thread of
  // the program is born inside.
  std::vector<std::string> command(const std::vector<std::string>& argv) const {
    std::vector<std::string> out = {"/bin/sh", "-c", "echo $$ > \"$0\" && exec \"$@\"",
                                    procs_file()};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }

 private:
  static int next_id() {
    static int n = 0;
    return ++n;
  }
  std::string dir_;
};

}  // namespace kv::test
