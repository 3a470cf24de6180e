// A run's answer in a few sentences, for the top of a report: what each search found, which
// store was faster by how much at what latency, and whether the figures are the store's (the
// run's status, errors, dropped requests, seconds whose latency was mostly kvdrive's own).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "report/report_tables.hpp"

namespace kv::drive {

struct Headline {
  std::vector<std::string> answers;   // the findings, most important first
  std::vector<std::string> validity;  // can they be trusted, and what to keep in mind
  bool valid = true;                  // false: failed, errors, dropped requests or client stalls
  bool searched = false;              // a capacity search: its steps are not one per-store figure
};

// `tables`: the run's run_tables (its "stores" table, when there is one, gives the comparison).
Headline run_headline(Database& db, const RunView& view, const std::vector<ReportTable>& tables);

}  // namespace kv::drive
