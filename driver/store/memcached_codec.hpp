// memcached codecs without a socket, text and binary protocol: command writers that append to a
// caller-owned output buffer, and incremental decoders that take bytes in any split and hand
// out every reply, in order (libmemcached has no asynchronous API, and its text protocol keeps
// only the last of a batch of buffered replies). Small and defensive: a reply split at any byte
// boundary decodes identically, a line longer than the protocol allows or a malformed header is
// a protocol error (sticky), never a crash or a loop; values are extracted by their declared
// length (binary-safe). Fuzzed by tests/fuzz/memcached_codec_fuzz.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "store/codec_common.hpp"

namespace kv::drive::store::mc {

inline constexpr size_t kMaxKeyBytes = 250;  // memcached's KEY_MAX_LENGTH

// The decoders' input buffer: bytes fed and not yet consumed, compacted on feed().
class InputBuffer {
 public:
  // Appends a copy of bytes. Consumed bytes are dropped first (one memmove of the unconsumed
  // tail), so views handed out earlier become invalid.
  void feed(std::string_view bytes);
  std::string_view unread() const { return std::string_view(buf_).substr(pos_); }
  void consume(size_t n) { pos_ += n; }
  size_t buffered() const { return buf_.size() - pos_; }

 private:
  std::string buf_;
  size_t pos_ = 0;
};

// ---- text protocol ----

// What a text request expects back. storage: set (add/replace/append/prepend answer the same
// way); get / gets: exactly one key (VALUE ... END or END); version: VERSION x; del: DELETED
// or NOT_FOUND; arith (incr/decr): the new value's digits or NOT_FOUND; touch: TOUCHED or
// NOT_FOUND; multi_get: a get of several keys (a VALUE block per key found, then END).
enum class TextOp : uint8_t { storage, get, gets, version, del, arith, touch, multi_get };

enum class TextKind : uint8_t {
  stored,  // the storage replies: stored ... not_found
  not_stored,
  exists,
  not_found,
  value,         // a get's hit (VALUE ... END)
  end,           // a get's miss (END alone)
  version,       // VERSION x (text = x)
  error,         // ERROR (unknown command)
  client_error,  // CLIENT_ERROR text
  server_error,  // SERVER_ERROR text (too large, out of memory, ...)
  deleted,       // DELETED
  touched,       // TOUCHED
  number,        // incr/decr's new value (text = its digits)
};

const char* text_kind_name(TextKind k);

// One reply. Views (`text`, `key`, `value`) point into the decoder's buffer and are valid until
// the next feed() or next() on that decoder, or its destruction. text: the message of
// CLIENT_ERROR / SERVER_ERROR, the version of VERSION; key / value / flags / cas: a hit (cas only
// when the server sent it, has_cas).
struct TextReply {
  TextKind kind = TextKind::end;
  std::string_view text;
  std::string_view key;
  std::string_view value;
  uint32_t flags = 0;
  uint64_t cas = 0;
  bool has_cas = false;
  // multi_get: the VALUE blocks (keys found) and their data bytes (`key`, `value`: the last's)
  uint32_t values = 0;
  uint64_t value_bytes = 0;
};

// Verdict of a text reply for its request: storage: stored = ok, not_stored / exists /
// not_found = not_stored; get(s): value = hit, end = miss; version: version = ok; del /
// arith / touch: deleted / number / touched = hit, not_found = miss; ERROR / CLIENT_ERROR /
// SERVER_ERROR = error; any other kind = mismatch. multi_get: as get (a hit: some key found).
Verdict text_verdict(TextOp op, const TextReply& reply);

// Decodes text replies. The protocol is not self-describing (STORED and END mean nothing
// without the request), so next() takes what the oldest request in flight expects.
// Not thread-safe. Limits: a reply line of at most kMaxLineBytes, a value of at most
// max_value_bytes (larger is a protocol error: a store never sends one back).
class TextDecoder {
 public:
  static constexpr size_t kMaxLineBytes = 2048;
  explicit TextDecoder(size_t max_value_bytes = size_t{1} << 30) : max_value_(max_value_bytes) {}
  // Copies bytes in (any split). Invalidates views handed out before.
  void feed(std::string_view bytes) { in_.feed(bytes); }
  // Takes the reply to a request of kind `op` into *out. need_more: nothing consumed, feed more.
  // protocol_error: sticky; error() says why.
  ReadStatus next(TextOp op, TextReply* out);
  std::string_view error() const { return error_; }
  size_t buffered() const { return in_.buffered(); }

 private:
  ReadStatus fail(const char* why);
  // The VALUE blocks of a multi-key get's reply from the start of `u`, through its END.
  ReadStatus next_multi(std::string_view u, TextReply* out);
  // A VALUE line's key, flags, length and cas into *out (length into *bytes); false: malformed.
  static bool value_line(std::string_view line, TextReply* out, uint64_t* bytes);
  InputBuffer in_;
  size_t max_value_;
  const char* error_ = "";
  bool failed_ = false;
};

// Text writers: each appends one whole command to `out`. They return false and append nothing
// when the key is not a valid memcached text key (empty, longer than 250 bytes, or holding a
// space or a control byte): memcached would answer CLIENT_ERROR and then read the value as a
// command, putting the connection out of step. Values are binary-safe.
bool append_text_set(std::string& out, std::string_view key, std::string_view value,
                     uint32_t flags = 0, uint32_t exptime_s = 0);
bool append_text_get(std::string& out, std::string_view key);
bool append_text_gets(std::string& out, std::string_view key);
// get k1 k2 … kN: `keys` holds them separated by single spaces (each a valid key, as above).
bool append_text_multi_get(std::string& out, std::string_view keys);
// `command` is add, replace, append or prepend (set: append_text_set): as a set.
bool append_text_store(std::string& out, std::string_view command, std::string_view key,
                       std::string_view value, uint32_t flags = 0, uint32_t exptime_s = 0);
// cas: stored only if the key's cas unique is still `unique` (STORED; EXISTS when it changed,
// NOT_FOUND when the key is gone).
bool append_text_cas(std::string& out, std::string_view key, std::string_view value,
                     uint64_t unique, uint32_t flags = 0, uint32_t exptime_s = 0);
bool append_text_delete(std::string& out, std::string_view key);
// incr or decr (decr: !increment) by `delta`.
bool append_text_arith(std::string& out, bool increment, std::string_view key, uint64_t delta);
bool append_text_touch(std::string& out, std::string_view key, uint32_t exptime_s);
void append_text_version(std::string& out);

// ---- binary protocol ----

enum class BinaryOpcode : uint8_t {
  get = 0x00,
  set = 0x01,
  add = 0x02,
  replace = 0x03,
  del = 0x04,
  increment = 0x05,
  decrement = 0x06,
  noop = 0x0a,
  version = 0x0b,
  getk = 0x0c,
  getkq = 0x0d,  // quiet: only a hit is answered
  append = 0x0e,
  prepend = 0x0f,
  touch = 0x1c,
};

// Response statuses (the memcached binary protocol's table).
namespace status {
inline constexpr uint16_t kOk = 0x0000;
inline constexpr uint16_t kKeyNotFound = 0x0001;
inline constexpr uint16_t kKeyExists = 0x0002;
inline constexpr uint16_t kValueTooLarge = 0x0003;
inline constexpr uint16_t kInvalidArguments = 0x0004;
inline constexpr uint16_t kNotStored = 0x0005;
inline constexpr uint16_t kNonNumeric = 0x0006;
inline constexpr uint16_t kUnknownCommand = 0x0081;
inline constexpr uint16_t kOutOfMemory = 0x0082;
}  // namespace status

inline constexpr size_t kBinaryHeaderBytes = 24;

// One binary response. Views (`extras`, `key`, `value`) point into the decoder's buffer, valid
// until the next feed() or next() or the decoder's destruction. flags: from a get's 4-byte
// extras (0 otherwise). For an error status, `value` holds the server's message.
struct BinaryReply {
  uint8_t opcode = 0;
  uint16_t status = 0;
  uint32_t opaque = 0;
  uint64_t cas = 0;
  uint32_t flags = 0;
  std::string_view extras;
  std::string_view key;
  std::string_view value;
};

// Verdict of a binary reply for a request of kind `op`: the opcode must be the request's (get
// or getk for Op::get; set, add or replace for Op::set; append or prepend for Op::append;
// delete, increment or decrement, touch), else mismatch. Status 0 = ok (stores) or hit (get,
// del, arith, touch); key not found = miss (get, del, arith, touch) or not_stored (replace,
// append, prepend); key exists / not stored = not_stored; anything else = error.
Verdict binary_verdict(Op op, const BinaryReply& reply);

// Decodes binary responses (self-delimiting: a 24-byte header then total-body bytes). Not
// thread-safe. A header whose magic is not 0x81, whose extras + key exceed its body, or whose
// body exceeds max_body_bytes is a protocol error (sticky).
class BinaryDecoder {
 public:
  explicit BinaryDecoder(size_t max_body_bytes = size_t{1} << 30) : max_body_(max_body_bytes) {}
  void feed(std::string_view bytes) { in_.feed(bytes); }
  ReadStatus next(BinaryReply* out);
  std::string_view error() const { return error_; }
  size_t buffered() const { return in_.buffered(); }

 private:
  ReadStatus fail(const char* why);
  InputBuffer in_;
  size_t max_body_;
  const char* error_ = "";
  bool failed_ = false;
};

// Binary writers: each appends one 24-byte request header and its body to `out`; `opaque` comes
// back in the response (use it to check the order). They return false and append nothing when
// the key is empty or longer than 250 bytes (or the value is 4 GiB or more).
bool append_binary_set(std::string& out, std::string_view key, std::string_view value,
                       uint32_t opaque, uint32_t flags = 0, uint32_t exptime_s = 0,
                       uint64_t cas = 0);
// add, replace (as a set: flags and expiry) or append, prepend (no extras: value only).
bool append_binary_store(std::string& out, BinaryOpcode opcode, std::string_view key,
                         std::string_view value, uint32_t opaque, uint32_t flags = 0,
                         uint32_t exptime_s = 0);
bool append_binary_delete(std::string& out, std::string_view key, uint32_t opaque);
// increment / decrement by `delta`; a missing key is not created (expiration 0xffffffff):
// NOT_FOUND, as the text protocol answers.
bool append_binary_arith(std::string& out, bool increment, std::string_view key, uint64_t delta,
                         uint32_t opaque);
bool append_binary_touch(std::string& out, std::string_view key, uint32_t exptime_s,
                         uint32_t opaque);
bool append_binary_get(std::string& out, std::string_view key, uint32_t opaque);
bool append_binary_getk(std::string& out, std::string_view key, uint32_t opaque);
bool append_binary_getkq(std::string& out, std::string_view key, uint32_t opaque);
void append_binary_noop(std::string& out, uint32_t opaque);
void append_binary_version(std::string& out, uint32_t opaque);

}  // namespace kv::drive::store::mc
