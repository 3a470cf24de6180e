// memcached text and binary codecs (see the header for the contract).
#include "store/memcached_codec.hpp"

#include <charconv>

namespace kv::drive::store::mc {

void InputBuffer::feed(std::string_view bytes) {
  if (pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  } else if (pos_ > 0) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  buf_.append(bytes.data(), bytes.size());
}

namespace {

// Parses a whole token of decimal digits (no sign, no spaces) into *v; false otherwise.
template <typename T>
bool parse_uint(std::string_view s, T* v) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// The next space-separated token of *rest (single spaces, as memcached writes them).
std::string_view token(std::string_view* rest) {
  size_t sp = rest->find(' ');
  std::string_view t = rest->substr(0, sp);
  *rest = sp == std::string_view::npos ? std::string_view() : rest->substr(sp + 1);
  return t;
}

// "WORD" or "WORD message": true (and *message = the rest) when line is one of them.
bool word_with_message(std::string_view line, std::string_view word, std::string_view* message) {
  if (line.substr(0, word.size()) != word) return false;
  if (line.size() == word.size()) {
    *message = {};
    return true;
  }
  if (line[word.size()] != ' ') return false;
  *message = line.substr(word.size() + 1);
  return true;
}

bool valid_text_key(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeyBytes) return false;
  for (char c : key)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return false;
  return true;
}

constexpr std::string_view kEnd = "END\r\n";

// The one-line reply to a delete, incr/decr or touch (found or NOT_FOUND) into *out; false for
// any other line.
bool key_op_reply(TextOp op, std::string_view line, TextReply* out) {
  uint64_t number = 0;
  if (line == "NOT_FOUND")
    out->kind = TextKind::not_found;
  else if (op == TextOp::del && line == "DELETED")
    out->kind = TextKind::deleted;
  else if (op == TextOp::touch && line == "TOUCHED")
    out->kind = TextKind::touched;
  else if (op == TextOp::arith && parse_uint(line, &number)) {
    out->kind = TextKind::number;
    out->text = line;
  } else {
    return false;
  }
  return true;
}

}  // namespace

const char* text_kind_name(TextKind k) {
  switch (k) {
    case TextKind::stored:
      return "stored";
    case TextKind::not_stored:
      return "not_stored";
    case TextKind::exists:
      return "exists";
    case TextKind::not_found:
      return "not_found";
    case TextKind::value:
      return "value";
    case TextKind::end:
      return "end";
    case TextKind::version:
      return "version";
    case TextKind::error:
      return "error";
    case TextKind::client_error:
      return "client_error";
    case TextKind::server_error:
      return "server_error";
    case TextKind::deleted:
      return "deleted";
    case TextKind::touched:
      return "touched";
    case TextKind::number:
      return "number";
  }
  return "?";
}

Verdict text_verdict(TextOp op, const TextReply& reply) {
  switch (reply.kind) {
    case TextKind::error:
    case TextKind::client_error:
    case TextKind::server_error:
      return Verdict::error;
    default:
      break;
  }
  switch (op) {
    case TextOp::storage:
      if (reply.kind == TextKind::stored) return Verdict::ok;
      if (reply.kind == TextKind::not_stored || reply.kind == TextKind::exists ||
          reply.kind == TextKind::not_found)
        return Verdict::not_stored;
      return Verdict::mismatch;
    case TextOp::get:
    case TextOp::gets:
    case TextOp::multi_get:
      if (reply.kind == TextKind::value) return Verdict::hit;
      if (reply.kind == TextKind::end) return Verdict::miss;
      return Verdict::mismatch;
    case TextOp::version:
      return reply.kind == TextKind::version ? Verdict::ok : Verdict::mismatch;
    case TextOp::del:
    case TextOp::arith:
    case TextOp::touch: {
      const TextKind found = op == TextOp::del     ? TextKind::deleted
                             : op == TextOp::touch ? TextKind::touched
                                                   : TextKind::number;
      if (reply.kind == found) return Verdict::hit;
      if (reply.kind == TextKind::not_found) return Verdict::miss;
      return Verdict::mismatch;
    }
  }
  return Verdict::mismatch;
}

bool TextDecoder::value_line(std::string_view line, TextReply* out, uint64_t* bytes) {
  std::string_view rest = line.substr(6);
  out->key = token(&rest);
  if (out->key.empty() || out->key.size() > kMaxKeyBytes ||
      !parse_uint(token(&rest), &out->flags) || !parse_uint(token(&rest), bytes))
    return false;
  if (rest.empty()) return true;
  if (!parse_uint(token(&rest), &out->cas) || !rest.empty()) return false;
  out->has_cas = true;
  return true;
}

ReadStatus TextDecoder::next_multi(std::string_view u, TextReply* out) {
  size_t used = 0;
  for (;;) {
    const size_t eol = u.substr(used, kMaxLineBytes + 2).find("\r\n");
    if (eol == std::string_view::npos) {
      if (u.size() - used >= kMaxLineBytes + 2) return fail("reply line longer than 2048 bytes");
      return ReadStatus::need_more;
    }
    const std::string_view line = u.substr(used, eol);
    used += eol + 2;
    if (line == "END") break;
    uint64_t bytes = 0;
    if (line.substr(0, 6) != "VALUE ") return fail("unexpected reply to a multi-key get");
    if (!value_line(line, out, &bytes)) return fail("malformed VALUE line");
    if (bytes > max_value_) return fail("VALUE larger than the decoder's limit");
    const auto n = static_cast<size_t>(bytes);
    if (u.size() - used < n + 2) return ReadStatus::need_more;
    if (u.substr(used + n, 2) != "\r\n") return fail("value not followed by CRLF");
    out->value = u.substr(used, n);
    ++out->values;
    out->value_bytes += n;
    used += n + 2;
  }
  out->kind = out->values > 0 ? TextKind::value : TextKind::end;
  in_.consume(used);
  return ReadStatus::reply;
}

ReadStatus TextDecoder::fail(const char* why) {
  failed_ = true;
  error_ = why;
  return ReadStatus::protocol_error;
}

ReadStatus TextDecoder::next(TextOp op, TextReply* out) {
  if (failed_) return ReadStatus::protocol_error;
  std::string_view u = in_.unread();
  size_t eol = u.substr(0, kMaxLineBytes + 2).find("\r\n");
  if (eol == std::string_view::npos) {
    if (u.size() >= kMaxLineBytes + 2) return fail("reply line longer than 2048 bytes");
    return ReadStatus::need_more;
  }
  std::string_view line = u.substr(0, eol);
  size_t used = eol + 2;
  *out = TextReply{};
  std::string_view message;
  if (line == "ERROR") {
    out->kind = TextKind::error;
  } else if (word_with_message(line, "CLIENT_ERROR", &message)) {
    out->kind = TextKind::client_error;
    out->text = message;
  } else if (word_with_message(line, "SERVER_ERROR", &message)) {
    out->kind = TextKind::server_error;
    out->text = message;
  } else if (op == TextOp::storage) {
    if (line == "STORED")
      out->kind = TextKind::stored;
    else if (line == "NOT_STORED")
      out->kind = TextKind::not_stored;
    else if (line == "EXISTS")
      out->kind = TextKind::exists;
    else if (line == "NOT_FOUND")
      out->kind = TextKind::not_found;
    else
      return fail("unexpected reply to a storage command");
  } else if (op == TextOp::del || op == TextOp::touch || op == TextOp::arith) {
    if (!key_op_reply(op, line, out))
      return fail("unexpected reply to a delete, incr, decr or touch");
  } else if (op == TextOp::version) {
    if (!word_with_message(line, "VERSION", &message)) return fail("unexpected reply to version");
    out->kind = TextKind::version;
    out->text = message;
  } else if (line == "END") {
    out->kind = TextKind::end;
  } else if (op == TextOp::multi_get) {
    return next_multi(u, out);
  } else if (line.substr(0, 6) == "VALUE ") {
    // VALUE <key> <flags> <bytes>[ <cas>]\r\n<data>\r\nEND\r\n
    uint64_t bytes = 0;
    if (!value_line(line, out, &bytes)) return fail("malformed VALUE line");
    if (bytes > max_value_) return fail("VALUE larger than the decoder's limit");
    size_t n = static_cast<size_t>(bytes);
    if (u.size() - used < n + 2) return ReadStatus::need_more;
    if (u.substr(used + n, 2) != "\r\n") return fail("value not followed by CRLF");
    std::string_view tail = u.substr(used + n + 2, kEnd.size());
    if (tail != kEnd.substr(0, tail.size())) return fail("VALUE not followed by END");
    if (tail.size() < kEnd.size()) return ReadStatus::need_more;
    out->kind = TextKind::value;
    out->value = u.substr(used, n);
    used += n + 2 + kEnd.size();
  } else {
    return fail("unexpected reply to a get");
  }
  in_.consume(used);
  return ReadStatus::reply;
}

namespace {

// "<command> <key> <flags> <exptime> <bytes>[ <cas unique>]\r\n<data>\r\n"
bool append_text_storage(std::string& out, std::string_view command, std::string_view key,
                         std::string_view value, uint32_t flags, uint32_t exptime_s,
                         const uint64_t* unique) {
  if (!valid_text_key(key)) return false;
  out.append(command.data(), command.size());
  out.push_back(' ');
  out.append(key.data(), key.size());
  out.push_back(' ');
  append_decimal(out, flags);
  out.push_back(' ');
  append_decimal(out, exptime_s);
  out.push_back(' ');
  append_decimal(out, value.size());
  if (unique != nullptr) {
    out.push_back(' ');
    append_decimal(out, *unique);
  }
  out.append("\r\n", 2);
  out.append(value.data(), value.size());
  out.append("\r\n", 2);
  return true;
}

}  // namespace

bool append_text_cas(std::string& out, std::string_view key, std::string_view value,
                     uint64_t unique, uint32_t flags, uint32_t exptime_s) {
  return append_text_storage(out, "cas", key, value, flags, exptime_s, &unique);
}

bool append_text_store(std::string& out, std::string_view command, std::string_view key,
                       std::string_view value, uint32_t flags, uint32_t exptime_s) {
  return append_text_storage(out, command, key, value, flags, exptime_s, nullptr);
}

bool append_text_set(std::string& out, std::string_view key, std::string_view value, uint32_t flags,
                     uint32_t exptime_s) {
  return append_text_store(out, "set", key, value, flags, exptime_s);
}

bool append_text_delete(std::string& out, std::string_view key) {
  if (!valid_text_key(key)) return false;
  out.append("delete ", 7);
  out.append(key.data(), key.size());
  out.append("\r\n", 2);
  return true;
}

bool append_text_arith(std::string& out, bool increment, std::string_view key, uint64_t delta) {
  if (!valid_text_key(key)) return false;
  out.append(increment ? "incr " : "decr ", 5);
  out.append(key.data(), key.size());
  out.push_back(' ');
  append_decimal(out, delta);
  out.append("\r\n", 2);
  return true;
}

bool append_text_touch(std::string& out, std::string_view key, uint32_t exptime_s) {
  if (!valid_text_key(key)) return false;
  out.append("touch ", 6);
  out.append(key.data(), key.size());
  out.push_back(' ');
  append_decimal(out, exptime_s);
  out.append("\r\n", 2);
  return true;
}

static bool append_text_retrieval(std::string& out, std::string_view cmd, std::string_view key) {
  if (!valid_text_key(key)) return false;
  out.append(cmd.data(), cmd.size());
  out.append(key.data(), key.size());
  out.append("\r\n", 2);
  return true;
}

bool append_text_get(std::string& out, std::string_view key) {
  return append_text_retrieval(out, "get ", key);
}

bool append_text_gets(std::string& out, std::string_view key) {
  return append_text_retrieval(out, "gets ", key);
}

bool append_text_multi_get(std::string& out, std::string_view keys) {
  if (!for_each_key(keys, valid_text_key)) return false;  // an empty one too
  out.append("get ", 4);
  out.append(keys.data(), keys.size());
  out.append("\r\n", 2);
  return true;
}

void append_text_version(std::string& out) { out.append("version\r\n"); }

// ---- binary ----

namespace {

uint32_t get_be(std::string_view s, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

void put_be(char* at, uint64_t v, size_t n) {
  for (size_t i = n; i-- > 0; v >>= 8) at[i] = static_cast<char>(v & 0xff);
}

// The 24-byte request header, built on the stack and appended in one piece.
void put_header(std::string& out, BinaryOpcode opcode, size_t key_len, size_t extras_len,
                size_t body_len, uint32_t opaque, uint64_t cas) {
  char h[kBinaryHeaderBytes] = {};
  h[0] = static_cast<char>(0x80);
  h[1] = static_cast<char>(opcode);
  put_be(h + 2, key_len, 2);
  h[4] = static_cast<char>(extras_len);  // h[5] data type, h[6..7] vbucket: 0
  put_be(h + 8, body_len, 4);
  put_be(h + 12, opaque, 4);
  put_be(h + 16, cas, 8);
  out.append(h, sizeof h);
}

bool valid_binary_key(std::string_view key) { return !key.empty() && key.size() <= kMaxKeyBytes; }

}  // namespace

Verdict binary_verdict(Op op, const BinaryReply& reply) {
  auto opcode = static_cast<BinaryOpcode>(reply.opcode);
  switch (op) {
    case Op::get:
      if (opcode != BinaryOpcode::get && opcode != BinaryOpcode::getk) return Verdict::mismatch;
      if (reply.status == status::kOk) return Verdict::hit;
      if (reply.status == status::kKeyNotFound) return Verdict::miss;
      return Verdict::error;
    case Op::set:
    case Op::append: {
      const bool matches = op == Op::set
                               ? opcode == BinaryOpcode::set || opcode == BinaryOpcode::add ||
                                     opcode == BinaryOpcode::replace
                               : opcode == BinaryOpcode::append || opcode == BinaryOpcode::prepend;
      if (!matches) return Verdict::mismatch;
      if (reply.status == status::kOk) return Verdict::ok;
      if (reply.status == status::kKeyExists || reply.status == status::kNotStored ||
          reply.status == status::kKeyNotFound)
        return Verdict::not_stored;
      return Verdict::error;
    }
    case Op::del:
    case Op::arith:
    case Op::touch: {
      const bool matches = op == Op::del     ? opcode == BinaryOpcode::del
                           : op == Op::touch ? opcode == BinaryOpcode::touch
                                             : opcode == BinaryOpcode::increment ||
                                                   opcode == BinaryOpcode::decrement;
      if (!matches) return Verdict::mismatch;
      if (reply.status == status::kOk) return Verdict::hit;
      if (reply.status == status::kKeyNotFound) return Verdict::miss;
      return Verdict::error;
    }
    case Op::other:
      return reply.status == status::kOk ? Verdict::ok : Verdict::error;
    case Op::command:  // Redis only
    case Op::mget:     // getkq replies then a noop's: the caller counts them (loop::Codec)
      break;
  }
  return Verdict::mismatch;
}

ReadStatus BinaryDecoder::fail(const char* why) {
  failed_ = true;
  error_ = why;
  return ReadStatus::protocol_error;
}

ReadStatus BinaryDecoder::next(BinaryReply* out) {
  if (failed_) return ReadStatus::protocol_error;
  std::string_view u = in_.unread();
  if (!u.empty() && static_cast<unsigned char>(u[0]) != 0x81)
    return fail("binary response without magic 0x81");
  if (u.size() < kBinaryHeaderBytes) return ReadStatus::need_more;
  size_t key_len = get_be(u, 2, 2);
  size_t extras_len = static_cast<unsigned char>(u[4]);
  size_t body = get_be(u, 8, 4);
  if (extras_len + key_len > body) return fail("binary response: extras + key exceed the body");
  if (body > max_body_) return fail("binary response body larger than the decoder's limit");
  if (u.size() - kBinaryHeaderBytes < body) return ReadStatus::need_more;
  *out = BinaryReply{};
  out->opcode = static_cast<uint8_t>(u[1]);
  out->status = static_cast<uint16_t>(get_be(u, 6, 2));
  out->opaque = get_be(u, 12, 4);
  out->cas = (uint64_t{get_be(u, 16, 4)} << 32) | get_be(u, 20, 4);
  out->extras = u.substr(kBinaryHeaderBytes, extras_len);
  out->key = u.substr(kBinaryHeaderBytes + extras_len, key_len);
  out->value = u.substr(kBinaryHeaderBytes + extras_len + key_len, body - extras_len - key_len);
  if (extras_len == 4) out->flags = get_be(out->extras, 0, 4);
  in_.consume(kBinaryHeaderBytes + body);
  return ReadStatus::reply;
}

bool append_binary_set(std::string& out, std::string_view key, std::string_view value,
                       uint32_t opaque, uint32_t flags, uint32_t exptime_s, uint64_t cas) {
  if (!valid_binary_key(key) || value.size() > 0xffffffffULL - 8 - key.size()) return false;
  put_header(out, BinaryOpcode::set, key.size(), 8, 8 + key.size() + value.size(), opaque, cas);
  char extras[8];
  put_be(extras, flags, 4);
  put_be(extras + 4, exptime_s, 4);
  out.append(extras, sizeof extras);
  out.append(key.data(), key.size());
  out.append(value.data(), value.size());
  return true;
}

bool append_binary_store(std::string& out, BinaryOpcode opcode, std::string_view key,
                         std::string_view value, uint32_t opaque, uint32_t flags,
                         uint32_t exptime_s) {
  const bool extras = opcode != BinaryOpcode::append && opcode != BinaryOpcode::prepend;
  const size_t extras_len = extras ? 8 : 0;
  if (!valid_binary_key(key) || value.size() > 0xffffffffULL - extras_len - key.size())
    return false;
  put_header(out, opcode, key.size(), extras_len, extras_len + key.size() + value.size(), opaque,
             0);
  if (extras) {
    char e[8];
    put_be(e, flags, 4);
    put_be(e + 4, exptime_s, 4);
    out.append(e, sizeof e);
  }
  out.append(key.data(), key.size());
  out.append(value.data(), value.size());
  return true;
}

bool append_binary_delete(std::string& out, std::string_view key, uint32_t opaque) {
  if (!valid_binary_key(key)) return false;
  put_header(out, BinaryOpcode::del, key.size(), 0, key.size(), opaque, 0);
  out.append(key.data(), key.size());
  return true;
}

bool append_binary_arith(std::string& out, bool increment, std::string_view key, uint64_t delta,
                         uint32_t opaque) {
  if (!valid_binary_key(key)) return false;
  put_header(out, increment ? BinaryOpcode::increment : BinaryOpcode::decrement, key.size(), 20,
             20 + key.size(), opaque, 0);
  char e[20];
  put_be(e, delta, 8);
  put_be(e + 8, 0, 8);            // initial: unused (never created)
  put_be(e + 16, 0xffffffff, 4);  // expiration all ones: a missing key is not created
  out.append(e, sizeof e);
  out.append(key.data(), key.size());
  return true;
}

bool append_binary_touch(std::string& out, std::string_view key, uint32_t exptime_s,
                         uint32_t opaque) {
  if (!valid_binary_key(key)) return false;
  put_header(out, BinaryOpcode::touch, key.size(), 4, 4 + key.size(), opaque, 0);
  char e[4];
  put_be(e, exptime_s, 4);
  out.append(e, sizeof e);
  out.append(key.data(), key.size());
  return true;
}

bool append_binary_get(std::string& out, std::string_view key, uint32_t opaque) {
  if (!valid_binary_key(key)) return false;
  put_header(out, BinaryOpcode::get, key.size(), 0, key.size(), opaque, 0);
  out.append(key.data(), key.size());
  return true;
}

bool append_binary_getk(std::string& out, std::string_view key, uint32_t opaque) {
  if (!valid_binary_key(key)) return false;
  put_header(out, BinaryOpcode::getk, key.size(), 0, key.size(), opaque, 0);
  out.append(key.data(), key.size());
  return true;
}

bool append_binary_getkq(std::string& out, std::string_view key, uint32_t opaque) {
  if (!valid_binary_key(key)) return false;
  put_header(out, BinaryOpcode::getkq, key.size(), 0, key.size(), opaque, 0);
  out.append(key.data(), key.size());
  return true;
}

void append_binary_noop(std::string& out, uint32_t opaque) {
  put_header(out, BinaryOpcode::noop, 0, 0, 0, opaque, 0);
}

void append_binary_version(std::string& out, uint32_t opaque) {
  put_header(out, BinaryOpcode::version, 0, 0, 0, opaque, 0);
}

}  // namespace kv::drive::store::mc
