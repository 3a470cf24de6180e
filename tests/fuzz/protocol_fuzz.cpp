// libFuzzer target for the wire protocol (docs/protocol.md): the line framer and the message
// parser must never crash, hang or overflow on any bytes, and whatever parses must survive an
// encode/parse round trip unchanged. Build and run: docs/protocol.md, "Fuzzing".
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kvbench/protocol.hpp"

namespace {

bool same(const kv::proto::Message& a, const kv::proto::Message& b) {
  if (a.verb != b.verb || a.fields.size() != b.fields.size()) return false;
  for (size_t i = 0; i < a.fields.size(); ++i) {
    if (a.fields[i].key != b.fields[i].key || a.fields[i].value != b.fields[i].value) return false;
  }
  return true;
}

void check_line(const std::string& line) {
  auto m = kv::proto::parse_message(line);
  if (!m) return;
  (void)m.value().get_int("id");
  (void)m.value().get_real("load1");
  std::string again = kv::proto::encode(m.value());
  auto round = kv::proto::parse_message(std::string_view(again).substr(0, again.size() - 1));
  if (!round || !same(m.value(), round.value())) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // The first byte picks where the stream is split, as reads would split it.
  size_t cut = size > 0 ? data[0] % (size + 1) : 0;
  kv::proto::LineFramer framer(kv::proto::kMaxRequestBytes);
  std::string line;
  framer.feed(input.substr(0, cut));
  while (framer.next(&line) == kv::proto::LineFramer::Status::line) check_line(line);
  framer.feed(input.substr(cut));
  while (framer.next(&line) == kv::proto::LineFramer::Status::line) check_line(line);
  auto hp = kv::proto::split_host_port(input);
  (void)hp;
  (void)kv::proto::constant_time_equal(input, "token");
  return 0;
}
