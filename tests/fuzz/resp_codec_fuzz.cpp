// libFuzzer target for the RESP decoder (driver/store/resp_codec.hpp: hiredis's reader with
// kvdrive's allocation-free reply objects). Invariants: never a crash; the same bytes fed whole,
// split at one offset, or in small chunks give the same replies and the same final state; a
// reply's text lies inside the input; no more replies than input bytes / 3 ("+\r\n" is the
// shortest). The first byte chooses the split, the rest is the stream. docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "store/resp_codec.hpp"

namespace {

using kv::drive::store::ReadStatus;

struct Decoded {
  std::vector<std::string> replies;
  ReadStatus last = ReadStatus::need_more;
  bool operator==(const Decoded& o) const { return replies == o.replies && last == o.last; }
};

Decoded decode(std::string_view input, size_t chunk) {
  kv::drive::store::RespDecoder d;
  Decoded out;
  for (size_t at = 0; at < input.size() && out.last != ReadStatus::protocol_error; at += chunk) {
    d.feed(input.substr(at, chunk));
    kv::drive::store::RespReply r;
    while ((out.last = d.next(&r)) == ReadStatus::reply) {
      if (!r.text.empty() && input.find(r.text) == std::string_view::npos) std::abort();
      out.replies.push_back(std::to_string(static_cast<int>(r.kind)) + ":" +
                            std::to_string(r.integer) + ":" + std::to_string(r.bulks) + ":" +
                            std::to_string(r.bulk_bytes) + ":" + std::string(r.text));
    }
  }
  return out;
}

Decoded decode_split(std::string_view input, size_t cut) {
  kv::drive::store::RespDecoder d;
  Decoded out;
  for (std::string_view piece : {input.substr(0, cut), input.substr(cut)}) {
    if (out.last == ReadStatus::protocol_error) break;
    d.feed(piece);
    kv::drive::store::RespReply r;
    while ((out.last = d.next(&r)) == ReadStatus::reply)
      out.replies.push_back(std::to_string(static_cast<int>(r.kind)) + ":" +
                            std::to_string(r.integer) + ":" + std::to_string(r.bulks) + ":" +
                            std::to_string(r.bulk_bytes) + ":" + std::string(r.text));
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  Decoded whole = decode(input, input.size() + 1);
  if (whole.replies.size() > input.size() / 3) std::abort();
  if (!(decode_split(input, data[0] * input.size() / 256) == whole)) std::abort();
  if (!(decode(input, data[0] % 7 + 1) == whole)) std::abort();
  return 0;
}
