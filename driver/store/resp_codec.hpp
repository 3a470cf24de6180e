// RESP (Redis protocol) codec without a socket: command writers that append to a caller-owned
// output buffer, and a decoder that parses replies through hiredis 0.14's own reader
// (redisReader, <hiredis/read.h>) and hands out one small RespReply per reply. The reader runs
// with custom reply-object functions that allocate nothing: a reply's text is copied into one
// reusable buffer (docs/performance.md "Codecs" has the figures against hiredis's default
// objects). hiredis is included only by resp_codec.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "store/codec_common.hpp"

namespace kv::drive::store {

enum class RespKind : uint8_t { status, bulk, nil, error, integer, array };

const char* resp_kind_name(RespKind k);

// One top-level reply. `text` views the status line, the bulk string's bytes or the error
// message (empty for nil / integer / array); it is valid until the next feed() or next() on the
// decoder that produced it, or the decoder's destruction. `integer`: an integer reply's value,
// an array's element count (a nil array is RespKind::nil). Array elements are parsed (and
// checked) but not handed out; an array's bulk strings are counted (an MGET's keys found).
struct RespReply {
  RespKind kind = RespKind::nil;
  std::string_view text;
  long long integer = 0;
  uint32_t bulks = 0;       // array: its elements that are bulk strings (not nested deeper)
  uint64_t bulk_bytes = 0;  // and their bytes
};

// The verdict of `reply` for a request of kind `op`: GET: bulk = hit, nil = miss; SET: status
// (+OK) = ok, nil = not_stored (NX/XX); any op: error reply = error; other kinds = mismatch
// (for Op::other every non-error reply is ok); MGET: an array with some bulk = hit, without = miss.
Verdict resp_verdict(Op op, const RespReply& reply);

// Decodes a stream of RESP replies. Move-only; not thread-safe (one connection, one thread).
// Memory: hiredis's read buffer (kept up to max_idle_buffer_bytes when empty, so steady traffic
// does not free and reallocate it) plus one text buffer as large as the largest reply text;
// nothing is allocated per reply once both have grown.
class RespDecoder {
 public:
  // Throws std::bad_alloc if hiredis cannot allocate its reader.
  explicit RespDecoder(size_t max_idle_buffer_bytes = 1 << 20);
  ~RespDecoder();
  RespDecoder(RespDecoder&&) noexcept;
  RespDecoder& operator=(RespDecoder&&) noexcept;
  RespDecoder(const RespDecoder&) = delete;
  RespDecoder& operator=(const RespDecoder&) = delete;

  // Copies `bytes` (as read from the socket; any split) into the reader's buffer. False after a
  // protocol error (nothing is taken then) or if memory ran out. Feed what one read returned
  // (up to ~16 KiB) and drain next() before feeding more: hiredis memmoves its unread bytes to
  // the front after every reply, so a whole 160 KB batch of 10 KB values fed at once costs
  // ~1.4 us per reply instead of ~0.45 (docs/performance.md "Codecs").
  bool feed(std::string_view bytes);
  // Takes the next whole reply out of the fed bytes into *out. need_more: the bytes so far end
  // inside a reply (nothing consumed). protocol_error: sticky; error() says why.
  ReadStatus next(RespReply* out);
  // Bytes fed and not yet taken out as replies (part of a reply, or replies not asked for).
  size_t buffered() const;
  // hiredis's description of the protocol error; empty if none.
  std::string_view error() const;

  struct State;  // the reader and the text buffer; opaque (defined in resp_codec.cpp)

 private:
  std::unique_ptr<State> state_;
};

// Command writers: each appends one whole command, in RESP's array-of-bulk-strings form, to
// `out` (the connection's output buffer, owned by the caller). The key and value bytes are
// copied once, into `out`; nothing else is built, and nothing is allocated once out's capacity
// suffices. Binary-safe: keys and values may hold any bytes. Never fail.
namespace resp {

// SET key value, or SET key value PX px_ms when px_ms > 0.
void append_set(std::string& out, std::string_view key, std::string_view value, uint64_t px_ms = 0);
void append_get(std::string& out, std::string_view key);
// SET key value NX (exists false: memcached's add) or XX (true: replace) [PX px_ms].
void append_set_if(std::string& out, std::string_view key, std::string_view value, bool exists,
                   uint64_t px_ms = 0);
// COMMAND key (DEL, INCR, DECR, ...), COMMAND key value (APPEND, EXPIRE with its seconds).
void append_key_command(std::string& out, std::string_view command, std::string_view key);
void append_key_value_command(std::string& out, std::string_view command, std::string_view key,
                              std::string_view value);
// AUTH password (user empty) or AUTH user password (Redis 6 ACL).
void append_auth(std::string& out, std::string_view user, std::string_view password);
void append_select(std::string& out, uint32_t db);
void append_ping(std::string& out);
// INFO, or INFO section when section is not empty.
void append_info(std::string& out, std::string_view section = {});
// The pieces, for other commands: "*n\r\n" then n bulk strings "$len\r\nbytes\r\n".
void append_array_header(std::string& out, size_t n);
void append_bulk(std::string& out, std::string_view bytes);

}  // namespace resp
}  // namespace kv::drive::store
