// What `kvdrive merge` copies: every table of the results file with how its rows are found (by
// run or kvmon session) and which of its columns hold ids the merge renumbers. Internal to
// results/ (merge.cpp); a new table needs a row here (MergeTables checks the schema's).
#pragma once

#include <utility>
#include <vector>

namespace kv::drive::merge_spec {

// The integer ids the merge renumbers.
enum Id { kRun, kTarget, kPhase, kSession, kInstance, kEvent, kIdKinds };
enum class Owner { run, session, none };

// How the rows of one table are found and copied. `where` selects the rows of one run or
// session of the input (?1: its id there); `id_column` is the table's own renumbered id (its
// INTEGER PRIMARY KEY), or null; `refs` are the columns holding ids of other rows.
struct TableSpec {
  const char* name;
  Owner owner;
  const char* where;
  const char* id_column;
  Id id_kind;
  std::vector<std::pair<const char*, Id>> refs;
};

// Every table, in the order the merge copies them (referenced rows first).
const std::vector<TableSpec>& specs();

}  // namespace kv::drive::merge_spec
