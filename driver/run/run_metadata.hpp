// What a run ran on, for run_metadata: kvdrive's build and its host, and each target's own
// settings (read_store_settings, store/stats_sources.hpp).
#pragma once

#include <string>

#include "results/results_writer.hpp"

namespace kv::drive {

// kvbench_version, git_revision, kernel (uname: sysname release version), machine, cpu_model
// (/proc/cpuinfo's first "model name"), cpu_count (online CPUs), mem_total_kib (MemTotal of
// /proc/meminfo). A fact that cannot be read is nullopt. `proc_root` is "/proc" (tests: a
// fixture).
ResultsWriter::Metadata host_metadata(const std::string& proc_root = "/proc");

// The kernel's view of this host's clock discipline (adjtimex, which chrony and ntpd steer):
// clock_synchronized (yes / no: the kernel's STA_UNSYNC flag), clock_maxerror_us and
// clock_esterror_us (the daemon's own error bounds; NULL when unsynchronized or unreadable).
// Recorded for runs that share an instant with other hosts (--start-at, --segment).
ResultsWriter::Metadata clock_metadata();

}  // namespace kv::drive
