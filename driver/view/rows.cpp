// A query's result read whole: see rows.hpp.
#include "view/rows.hpp"

namespace kv::drive {

std::optional<int64_t> Row::column_opt_int(int col) const {
  const Cell& c = cell(col);
  return c.null ? std::nullopt : std::optional<int64_t>(c.i);
}

std::optional<double> Row::column_opt_double(int col) const {
  const Cell& c = cell(col);
  return c.null ? std::nullopt : std::optional<double>(c.d);
}

Rows Rows::read(Statement& s) {
  Rows out;
  const int n = s.column_count();
  for (int c = 0; c < n; ++c) out.columns.push_back(s.column_name(c));
  while (s.step()) {
    Row row;
    row.cells_.resize(static_cast<size_t>(n));
    for (int c = 0; c < n; ++c) {
      Row::Cell& cell = row.cells_[static_cast<size_t>(c)];
      cell.null = s.is_null(c);
      if (cell.null) continue;
      // Numbers first: reading a number's text adds a text form and keeps the number.
      cell.i = s.column_int(c);
      cell.d = s.column_double(c);
      cell.text = s.column_text(c);
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

Rows Rows::query(Database& db, std::string_view sql, int64_t id) {
  auto s = db.prepare(sql);
  s.bind(1, id);
  return read(s);
}

}  // namespace kv::drive
