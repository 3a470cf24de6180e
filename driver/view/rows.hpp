// A query's result read whole, so what renders it holds no statement: the column names and every
// row, each value as SQLite gives it (NULL kept apart from 0 and ""). Read with the accessors of
// kvbench/sqlite.hpp's Statement, by the column's position in the loader's SELECT, which the
// loader's declaration lists.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

class Row {
 public:
  bool is_null(int col) const { return cell(col).null; }
  int64_t column_int(int col) const { return cell(col).i; }                 // 0 for NULL
  double column_double(int col) const { return cell(col).d; }               // 0 for NULL
  const std::string& column_text(int col) const { return cell(col).text; }  // "" for NULL
  std::optional<int64_t> column_opt_int(int col) const;
  std::optional<double> column_opt_double(int col) const;
  int column_count() const { return static_cast<int>(cells_.size()); }

 private:
  friend struct Rows;
  struct Cell {
    bool null = true;
    int64_t i = 0;
    double d = 0;
    std::string text;
  };
  const Cell& cell(int col) const { return cells_.at(static_cast<size_t>(col)); }
  std::vector<Cell> cells_;
};

struct Rows {
  std::vector<std::string> columns;  // as the SELECT names them
  std::vector<Row> rows;
  bool empty() const { return rows.empty(); }
  // Every row of `s` (bound, not yet stepped), stepped to its end.
  static Rows read(Statement& s);
  // Every row of `sql`, whose one parameter (?1) is `id`.
  static Rows query(Database& db, std::string_view sql, int64_t id);
};

}  // namespace kv::drive
