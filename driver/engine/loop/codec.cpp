#include "engine/loop/codec.hpp"

#include <algorithm>
#include <charconv>

namespace kv::drive::loop {
namespace {

namespace st = store;

size_t decimal_digits(size_t v) {
  size_t d = 1;
  for (; v >= 10; v /= 10) ++d;
  return d;
}

// The bytes of a RESP SET before its value's data: "*3\r\n$3\r\nSET\r\n" (or *4-*6, with NX /
// XX / PX after the value; APPEND: "*3\r\n$6\r\nAPPEND\r\n"), the key's bulk string, then
// "$<length>\r\n".
size_t resp_set_head(OpType op, size_t key, size_t value) {
  return (op == OpType::append ? 16 : 13) + (1 + decimal_digits(key) + 2 + key + 2) +
         (1 + decimal_digits(value) + 2);
}

st::mc::TextOp text_op(st::Op op) {
  switch (op) {
    case st::Op::set:
    case st::Op::append:
      return st::mc::TextOp::storage;
    case st::Op::del:
      return st::mc::TextOp::del;
    case st::Op::arith:
      return st::mc::TextOp::arith;
    case st::Op::touch:
      return st::mc::TextOp::touch;
    case st::Op::mget:
      return st::mc::TextOp::multi_get;
    case st::Op::get:
    case st::Op::other:    // as before there were other kinds (a text link sends no handshake)
    case st::Op::command:  // Redis only
      break;
  }
  return st::mc::TextOp::get;
}

// A --command: each argument a bulk string, its placeholders replaced by `key` and `value`.
void append_command(std::string& out, const CommandTemplate& c, std::string_view key,
                    std::string_view value) {
  using Kind = CommandTemplate::Part::Kind;
  const auto bytes = [&](const CommandTemplate::Part& p) {
    return p.kind == Kind::text ? std::string_view(p.text) : p.kind == Kind::key ? key : value;
  };
  st::resp::append_array_header(out, c.args.size());
  for (const CommandTemplate::Arg& arg : c.args) {
    if (arg.size() == 1) {
      st::resp::append_bulk(out, bytes(arg.front()));
      continue;
    }
    size_t n = 0;
    for (const auto& part : arg) n += bytes(part).size();
    out += '$';
    st::append_decimal(out, n);
    out += "\r\n";
    for (const auto& part : arg) out.append(bytes(part));
    out += "\r\n";
  }
}

bool append_resp(std::string& out, OpType op, std::string_view key, std::string_view value,
                 uint32_t ttl_s) {
  namespace r = st::resp;
  const uint64_t px = uint64_t{ttl_s} * 1000;
  switch (op) {
    case OpType::set:
    case OpType::backfill:
      r::append_set(out, key, value, px);
      return true;
    case OpType::get:
      r::append_get(out, key);
      return true;
    case OpType::del:
      r::append_key_command(out, "DEL", key);
      return true;
    case OpType::incr:
      r::append_key_command(out, "INCR", key);
      return true;
    case OpType::decr:
      r::append_key_command(out, "DECR", key);
      return true;
    case OpType::add:
    case OpType::replace:
      r::append_set_if(out, key, value, op == OpType::replace, px);
      return true;
    case OpType::append:
      r::append_key_value_command(out, "APPEND", key, value);
      return true;
    case OpType::touch: {
      char digits[10];
      auto d = std::to_chars(digits, digits + sizeof digits, ttl_s);
      r::append_key_value_command(out, "EXPIRE", key,
                                  std::string_view(digits, static_cast<size_t>(d.ptr - digits)));
      return true;
    }
    case OpType::mget:  // `key`: the keys, separated by spaces
      r::append_array_header(out, static_cast<size_t>(std::count(key.begin(), key.end(), ' ')) + 2);
      r::append_bulk(out, "MGET");
      return st::for_each_key(key, [&](std::string_view k) {
        r::append_bulk(out, k);
        return true;
      });
    case OpType::prepend:
      break;  // no Redis command (refused before a run: run_checks)
    default:
      break;  // a --command: Codec::append
  }
  return false;
}

bool append_text(std::string& out, OpType op, std::string_view key, std::string_view value,
                 uint32_t ttl_s, uint64_t cas) {
  namespace mc = st::mc;
  switch (op) {
    case OpType::set:
    case OpType::backfill:
      return mc::append_text_set(out, key, value, 0, ttl_s);
    case OpType::get:
      return mc::append_text_get(out, key);
    case OpType::del:
      return mc::append_text_delete(out, key);
    case OpType::incr:
    case OpType::decr:
      return mc::append_text_arith(out, op == OpType::incr, key, 1);
    case OpType::add:
    case OpType::replace:
    case OpType::append:
    case OpType::prepend:
      return mc::append_text_store(out, op_name(op), key, value, 0, ttl_s);
    case OpType::touch:
      return mc::append_text_touch(out, key, ttl_s);
    case OpType::gets:
      return mc::append_text_gets(out, key);
    case OpType::cas:
      return mc::append_text_cas(out, key, value, cas, 0, ttl_s);
    case OpType::mget:  // `key`: the keys, separated by spaces
      return mc::append_text_multi_get(out, key);
    default:
      break;  // a --command: Redis only (refused before a run: run_checks)
  }
  return false;
}

// An mget: a quiet getk of each key (answered only when found), then a noop (always answered:
// the end of the batch). Nothing appended when a key is invalid.
bool append_binary_multi_get(std::string& out, std::string_view keys, uint32_t& opaque) {
  const size_t before = out.size();
  if (!st::for_each_key(keys, [&](std::string_view k) {
        return st::mc::append_binary_getkq(out, k, opaque++);
      })) {
    out.resize(before);
    return false;
  }
  st::mc::append_binary_noop(out, opaque++);
  return true;
}

bool append_binary(std::string& out, OpType op, std::string_view key, std::string_view value,
                   uint32_t ttl_s, uint64_t cas, uint32_t opaque) {
  namespace mc = st::mc;
  switch (op) {
    case OpType::set:
    case OpType::backfill:
      return mc::append_binary_set(out, key, value, opaque, 0, ttl_s);
    case OpType::get:
      return mc::append_binary_get(out, key, opaque);
    case OpType::del:
      return mc::append_binary_delete(out, key, opaque);
    case OpType::incr:
    case OpType::decr:
      return mc::append_binary_arith(out, op == OpType::incr, key, 1, opaque);
    case OpType::add:
      return mc::append_binary_store(out, mc::BinaryOpcode::add, key, value, opaque, 0, ttl_s);
    case OpType::replace:
      return mc::append_binary_store(out, mc::BinaryOpcode::replace, key, value, opaque, 0, ttl_s);
    case OpType::append:
      return mc::append_binary_store(out, mc::BinaryOpcode::append, key, value, opaque);
    case OpType::prepend:
      return mc::append_binary_store(out, mc::BinaryOpcode::prepend, key, value, opaque);
    case OpType::touch:
      return mc::append_binary_touch(out, key, ttl_s, opaque);
    case OpType::gets:  // a binary get's reply always holds the cas unique
      return mc::append_binary_get(out, key, opaque);
    case OpType::cas:  // a set with the unique: 0 would make it a plain set (the caller's never 0)
      return mc::append_binary_set(out, key, value, opaque, 0, ttl_s, cas);
    default:
      break;  // a --command: Redis only (refused before a run: run_checks)
  }
  return false;
}

}  // namespace

Codec::Codec(Wire wire, const std::vector<CommandTemplate>* commands)
    : wire_(wire), commands_(commands) {
  reset();
}

bool Codec::append(std::string& out, OpType op, std::string_view key, std::string_view value,
                   uint32_t ttl_s, uint64_t cas) {
  if (op_is_command(op)) {
    if (wire_ != Wire::resp || commands_ == nullptr || command_index(op) >= commands_->size())
      return false;
    append_command(out, (*commands_)[command_index(op)], key, value);
    return true;
  }
  switch (wire_) {
    case Wire::resp:
      return append_resp(out, op, key, value, ttl_s);
    case Wire::text:
      return append_text(out, op, key, value, ttl_s, cas);
    case Wire::binary:
      if (op == OpType::mget) return append_binary_multi_get(out, key, opaque_);
      return append_binary(out, op, key, value, ttl_s, cas, opaque_++);
  }
  return false;
}

bool Codec::append_mset(std::string& out, std::string_view keys,
                        const std::vector<std::string_view>& values) const {
  if (wire_ != Wire::resp || keys.empty()) return false;
  if (static_cast<size_t>(std::count(keys.begin(), keys.end(), ' ')) + 1 != values.size())
    return false;
  namespace r = st::resp;
  r::append_array_header(out, 1 + 2 * values.size());
  r::append_bulk(out, "MSET");
  size_t i = 0;
  return st::for_each_key(keys, [&](std::string_view k) {
    r::append_bulk(out, k);
    r::append_bulk(out, values[i++]);
    return true;
  });
}

st::Op Codec::reply_kind(OpType op) noexcept {
  switch (op) {
    case OpType::get:
    case OpType::gets:
      return st::Op::get;
    case OpType::set:
    case OpType::cas:
    case OpType::add:
    case OpType::replace:
    case OpType::backfill:
    case OpType::mset:  // +OK
      return st::Op::set;
    case OpType::del:
      return st::Op::del;
    case OpType::incr:
    case OpType::decr:
      return st::Op::arith;
    case OpType::touch:
      return st::Op::touch;
    case OpType::append:
    case OpType::prepend:
      return st::Op::append;
    case OpType::mget:
      return st::Op::mget;
    default:
      break;
  }
  return op_is_command(op) ? st::Op::command : st::Op::other;
}

size_t Codec::set_head(OpType op, size_t appended, std::string_view key,
                       std::string_view value) const {
  switch (wire_) {
    case Wire::resp:
      return resp_set_head(op, key.size(), value.size());
    case Wire::text:
      return appended - value.size() - 2;  // the data block, then CRLF
    case Wire::binary:
      return appended - value.size();
  }
  return appended;
}

bool Codec::feed(std::string_view bytes) {
  switch (wire_) {
    case Wire::resp:
      return resp_->feed(bytes);
    case Wire::text:
      text_->feed(bytes);
      return true;
    case Wire::binary:
      binary_->feed(bytes);
      return true;
  }
  return false;
}

st::ReadStatus Codec::next(st::Op op, st::Verdict* verdict, std::string_view* value) {
  st::ReadStatus s = st::ReadStatus::protocol_error;
  switch (wire_) {
    case Wire::resp:
      s = resp_->next(&resp_reply_);
      if (s == st::ReadStatus::reply) {
        *verdict = st::resp_verdict(op, resp_reply_);
        *value = resp_reply_.text;
        multi_ = {resp_reply_.bulks, resp_reply_.bulk_bytes};
      }
      break;
    case Wire::text:
      s = text_->next(text_op(op), &text_reply_);
      if (s == st::ReadStatus::reply) {
        *verdict = st::mc::text_verdict(text_op(op), text_reply_);
        *value = text_reply_.value;
        multi_ = {text_reply_.values, text_reply_.value_bytes};
      }
      break;
    case Wire::binary:
      if (op == st::Op::mget) return next_binary_multi(verdict, value);
      s = binary_->next(&binary_reply_);
      if (s == st::ReadStatus::reply) {
        *verdict = st::mc::binary_verdict(op, binary_reply_);
        *value = binary_reply_.value;
      }
      break;
  }
  return s;
}

st::ReadStatus Codec::next_binary_multi(st::Verdict* verdict, std::string_view* value) {
  namespace mc = st::mc;
  for (;;) {
    const st::ReadStatus s = binary_->next(&binary_reply_);
    if (s != st::ReadStatus::reply) return s;  // need_more: what was counted stays counted
    const auto opcode = static_cast<mc::BinaryOpcode>(binary_reply_.opcode);
    if (opcode == mc::BinaryOpcode::getkq) {
      if (binary_reply_.status == mc::status::kOk) {
        ++pending_multi_.found;
        pending_multi_.bytes += binary_reply_.value.size();
      } else {
        pending_multi_.failed = true;  // a quiet get answers only a hit, or an error
      }
      continue;
    }
    multi_ = {pending_multi_.found, pending_multi_.bytes};
    const bool failed = pending_multi_.failed;
    pending_multi_ = {};
    *value = {};
    if (opcode != mc::BinaryOpcode::noop)
      *verdict = st::Verdict::mismatch;
    else if (failed || binary_reply_.status != mc::status::kOk)
      *verdict = st::Verdict::error;
    else
      *verdict = multi_.found > 0 ? st::Verdict::hit : st::Verdict::miss;
    return st::ReadStatus::reply;
  }
}

uint64_t Codec::last_cas() const {
  switch (wire_) {
    case Wire::resp:
      break;
    case Wire::text:
      return text_reply_.has_cas ? text_reply_.cas : 0;
    case Wire::binary:
      return binary_reply_.cas;
  }
  return 0;
}

size_t Codec::buffered() const {
  switch (wire_) {
    case Wire::resp:
      return resp_->buffered();
    case Wire::text:
      return text_->buffered();
    case Wire::binary:
      return binary_->buffered();
  }
  return 0;
}

void Codec::reset() {
  multi_ = {};
  pending_multi_ = {};
  switch (wire_) {
    case Wire::resp:
      resp_ = std::make_unique<st::RespDecoder>(size_t{64} << 10);
      break;
    case Wire::text:
      text_.emplace();
      break;
    case Wire::binary:
      binary_.emplace();
      break;
  }
}

}  // namespace kv::drive::loop
