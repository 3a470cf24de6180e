#include "engine/process_group.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "engine/loop/event_client.hpp"
#include "kvbench/log.hpp"
#include "kvbench/schema.hpp"

namespace kv::drive {

GroupRecord run_process_group(const RunOptions& opts, int argc, char** argv) {
  // As in run_benchmark: bad options and unreachable stores stop the group before the file is
  // created, not in each process after it.
  for (const auto& spec : check_run_options(opts)) {
    if (spec.tls.enabled || spec.cluster)
      connect_event_clients(spec, 1, opts.client);
    else
      connect_clients(spec, 1, opts.client);
  }
  open_results_db(opts.db_path);  // create and migrate once, before N processes race to
  // Exec the binary by its real path, so the processes are named kvdrive (the dead-writer check
  // in open_results_db looks at /proc/PID/comm).
  char self[4096] = {};
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) throw std::runtime_error("cannot find this kvdrive's own path (/proc/self/exe)");
  std::vector<pid_t> children;
  for (int i = 0; i < opts.process_count; ++i) {
    std::vector<std::string> args(argv, argv + argc);
    args.insert(args.end(), {"--run-group", opts.run_group, "--process-index", std::to_string(i)});
    std::vector<char*> cargs;
    for (auto& a : args) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      execv(self, cargs.data());
      _exit(127);
    }
    children.push_back(pid);
  }
  log_info() << opts.process_count << " kvdrive processes running as group " << opts.run_group;
  int worst = kExitOk;
  std::vector<std::string> failures;  // one line per process that did not complete
  for (size_t i = 0; i < children.size(); ++i) {
    int status = 0;
    while (waitpid(children[i], &status, 0) < 0 && errno == EINTR) {
    }
    std::string who = "process " + std::to_string(i) + " of " + std::to_string(children.size()) +
                      " (pid " + std::to_string(children[i]) + ")";
    int code = kExitOk;
    if (WIFEXITED(status)) {
      code = WEXITSTATUS(status);
      if (code == kExitFailed)
        failures.push_back(who + " failed (exit 1): see its run's error");
      else if (code == kExitInterrupted)
        failures.push_back(who + " was interrupted");
      else if (code != kExitOk)
        failures.push_back(who + " exited with code " + std::to_string(code));
    } else {
      // Killed (kill -9, the OOM killer, a crash): its run is left running, which the open
      // below marks incomplete. The group failed.
      const int sig = WTERMSIG(status);
      failures.push_back(who + " was killed by signal " + std::to_string(sig) + " (" +
                         strsignal(sig) + "): its run is marked incomplete");
      code = kExitFailed;
    }
    if (code != kExitOk && (worst == kExitOk || code == kExitFailed)) worst = code;
  }
  return GroupRecord{worst, static_cast<int>(children.size()), std::move(failures),
                     open_results_db(opts.db_path)};  // marks the runs of killed processes
}

}  // namespace kv::drive
