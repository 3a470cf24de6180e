#include "kvbench/samples.hpp"

#include "kvbench/protocol.hpp"
#include "kvbench/sqlite.hpp"

namespace kv {

std::string to_string(const ProcessKey& key) {
  return std::to_string(key.pid) + "@" + std::to_string(key.start_ticks);
}

template <typename S>
std::string insert_sql(const SampleTable<S>& t, std::initializer_list<const char*> own) {
  std::string columns;
  std::string values;
  auto add = [&](const char* column) {
    columns += columns.empty() ? "" : ", ";
    columns += column;
    values += values.empty() ? "?" : ", ?";
  };
  for (const char* column : own) add(column);
  for (const SampleField<S>& f : t.fields) add(f.column);
  return std::string("INSERT OR REPLACE INTO ") + t.table + " (" + columns + ") VALUES (" + values +
         ")";
}

template <typename S>
int bind_fields(Statement& st, int first, const SampleTable<S>& t, const S& s) {
  for (const SampleField<S>& f : t.fields) {
    std::visit([&](auto member) { st.bind(first++, s.*member); }, f.member);
  }
  return first;
}

template <typename S>
int bind_fields(Statement& st, int first, const SampleTable<S>& t, const proto::Message& m) {
  for (const SampleField<S>& f : t.fields) {
    std::visit(
        [&](auto member) {
          using T = std::remove_cvref_t<decltype(std::declval<const S&>().*member)>;
          if constexpr (std::is_same_v<T, std::string>) {
            st.bind(first, m.get_text(f.column));
          } else if constexpr (std::is_same_v<T, OptReal>) {
            st.bind(first, m.get_real(f.column));
          } else {
            st.bind(first, m.get_int(f.column));
          }
        },
        f.member);
    ++first;
  }
  return first;
}

template <typename S>
void add_fields(proto::Message& m, const SampleTable<S>& t, const S& s) {
  for (const SampleField<S>& f : t.fields) {
    std::visit([&](auto member) { m.add(f.column, s.*member); }, f.member);
  }
}

#define KV_SAMPLE_FUNCTIONS(S)                                                                \
  template std::string insert_sql(const SampleTable<S>&, std::initializer_list<const char*>); \
  template int bind_fields(Statement&, int, const SampleTable<S>&, const S&);                 \
  template int bind_fields(Statement&, int, const SampleTable<S>&, const proto::Message&);    \
  template void add_fields(proto::Message&, const SampleTable<S>&, const S&);
KV_SAMPLE_FUNCTIONS(ProcessSample)
KV_SAMPLE_FUNCTIONS(HostSample)
KV_SAMPLE_FUNCTIONS(DiskStat)
#undef KV_SAMPLE_FUNCTIONS

}  // namespace kv
