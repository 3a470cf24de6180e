// Finds runs and monitor sessions whose writer died without closing them (kill -9, power loss)
// and marks them `incomplete`, so a reader never mistakes them for ones still going.
#pragma once

#include "kvbench/sqlite.hpp"

namespace kv {

// Marks `running` runs and monitor sessions written on this host by a process that no longer
// exists as `incomplete`, ending them at their last recorded row. Returns how many were marked.
// Rows from other hosts are left alone (their writers cannot be checked from here).
// Also marks phases still `running` under a run that has ended (its writer recorded the run's
// end but not the phase's, e.g. on a full disk) with the run's status (`incomplete` under a
// completed run), from any host.
int mark_abandoned(Database& db);

}  // namespace kv
