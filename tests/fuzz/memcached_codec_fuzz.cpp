// libFuzzer target for the memcached text and binary decoders (driver/store/memcached_codec.hpp).
// Invariants: never a crash or a loop; the same bytes fed whole, split at one offset, or in
// small chunks give the same replies and the same final state; a reply's key and value lie
// inside the input; no more replies than the shortest reply allows (text: incr's "0\r\n", 3 bytes;
// binary: the 24-byte header). Byte 0: bit 0 picks the protocol, the rest the split; byte 1
// seeds the text requests' expected kinds; the rest is the stream. docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "store/memcached_codec.hpp"

namespace {

using kv::drive::store::ReadStatus;
namespace mc = kv::drive::store::mc;

struct Decoded {
  std::vector<std::string> replies;
  ReadStatus last = ReadStatus::need_more;
  bool operator==(const Decoded& o) const { return replies == o.replies && last == o.last; }
};

void inside(std::string_view input, std::string_view part) {
  if (!part.empty() && input.find(part) == std::string_view::npos) std::abort();
}

// The text op expected by the i-th reply: a fixed pseudo-random sequence from the seed.
mc::TextOp text_op(uint8_t seed, size_t i) {
  uint32_t x = (seed + 1u) * 2654435761u ^ static_cast<uint32_t>(i) * 40503u;
  return static_cast<mc::TextOp>((x >> 13) % 8);  // every TextOp, storage through multi_get
}

// Feeds input in pieces cut at `cuts` (ascending) and decodes after each piece.
Decoded decode(bool binary, uint8_t seed, std::string_view input, const std::vector<size_t>& cuts) {
  mc::TextDecoder text;
  mc::BinaryDecoder bin(1 << 16);
  Decoded out;
  size_t at = 0;
  for (size_t k = 0; k <= cuts.size() && out.last != ReadStatus::protocol_error; ++k) {
    size_t end = k < cuts.size() ? cuts[k] : input.size();
    std::string_view piece = input.substr(at, end - at);
    at = end;
    if (binary) {
      bin.feed(piece);
      mc::BinaryReply r;
      while ((out.last = bin.next(&r)) == ReadStatus::reply) {
        inside(input, r.key);
        inside(input, r.value);
        out.replies.push_back(std::to_string(r.opcode) + "/" + std::to_string(r.status) + "/" +
                              std::to_string(r.opaque) + "/" + std::to_string(r.cas) + "/" +
                              std::string(r.extras) + "/" + std::string(r.key) + "/" +
                              std::string(r.value));
      }
    } else {
      text.feed(piece);
      mc::TextReply r;
      while ((out.last = text.next(text_op(seed, out.replies.size()), &r)) == ReadStatus::reply) {
        inside(input, r.key);
        inside(input, r.value);
        inside(input, r.text);
        out.replies.push_back(std::to_string(static_cast<int>(r.kind)) + "/" +
                              std::to_string(r.flags) + "/" + std::to_string(r.cas) + "/" +
                              std::to_string(r.values) + "/" + std::to_string(r.value_bytes) + "/" +
                              std::string(r.text) + "/" + std::string(r.key) + "/" +
                              std::string(r.value));
      }
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  bool binary = (data[0] & 1) != 0;
  uint8_t seed = data[1];
  std::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);
  Decoded whole = decode(binary, seed, input, {});
  // The shortest text reply is incr's "0\r\n"; a binary one is its header.
  if (whole.replies.size() > input.size() / (binary ? mc::kBinaryHeaderBytes : 3)) std::abort();
  if (!(decode(binary, seed, input, {(data[0] >> 1) * input.size() / 128}) == whole)) std::abort();
  std::vector<size_t> chunks;
  for (size_t at = data[0] % 5 + 1; at < input.size(); at += data[0] % 5 + 1) chunks.push_back(at);
  if (!(decode(binary, seed, input, chunks) == whole)) std::abort();
  return 0;
}
