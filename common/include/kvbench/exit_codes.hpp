// The exit codes of kvdrive and kvmon: one table for both programs, used by both mains and
// documented in README.md ("Errors and exit codes") and the man pages (packaging/man/*.h2m).
#pragma once

#include <array>

namespace kv {

constexpr int kExitOk = 0;             // done; --help, --version; kvmon: stopped by SIGINT/SIGTERM
constexpr int kExitFailed = 1;         // a failure after the command line was accepted
constexpr int kExitUsage = 2;          // bad input: one line on stderr, nothing written
constexpr int kExitRegression = 4;     // kvdrive check: a regression shown with confidence
constexpr int kExitIndeterminate = 5;  // kvdrive check: not enough evidence either way
constexpr int kExitInterrupted = 130;  // kvdrive: interrupted by Ctrl-C (128 + SIGINT)

struct ExitCodeInfo {
  int code;
  const char* kvdrive;  // what it means for kvdrive; nullptr: kvdrive never exits with it
  const char* kvmon;    // likewise for kvmon
};

// Every code either program exits with, in order; a test checks the docs name each one.
constexpr std::array<ExitCodeInfo, 6> kExitCodes{{
    {kExitOk, "done; --help, --version", "stopped by SIGINT/SIGTERM; --help, --version"},
    {kExitFailed, "a store or kvmon unreachable at start, or the run failed",
     "the results file cannot be opened at start, or --listen or --metrics cannot listen"},
    {kExitUsage, "bad input: nothing written", "bad input: nothing written"},
    {kExitRegression, "check: a regression beyond an objective, shown with confidence", nullptr},
    {kExitIndeterminate, "check: not enough evidence either way", nullptr},
    {kExitInterrupted, "interrupted by Ctrl-C: the run is marked interrupted", nullptr},
}};

}  // namespace kv
