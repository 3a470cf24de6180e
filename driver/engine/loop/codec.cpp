#include "engine/loop/codec.hpp"

namespace kv::drive::loop {
namespace {

namespace st = store;

size_t decimal_digits(size_t v) {
  size_t d = 1;
  for (; v >= 10; v /= 10) ++d;
  return d;
}

// The bytes of a RESP SET before its value's data: "*3\r\n$3\r\nSET\r\n" (or *5, with PX
// after the value), the key's bulk string, then "$<length>\r\n".
size_t resp_set_head(size_t key, size_t value) {
  return 13 + (1 + decimal_digits(key) + 2 + key + 2) + (1 + decimal_digits(value) + 2);
}

st::mc::TextOp text_op(st::Op op) {
  return op == st::Op::set ? st::mc::TextOp::storage : st::mc::TextOp::get;
}

}  // namespace

Codec::Codec(Wire wire) : wire_(wire) { reset(); }

bool Codec::append(std::string& out, bool is_set, std::string_view key, std::string_view value,
                   uint32_t ttl_s) {
  switch (wire_) {
    case Wire::resp:
      if (is_set)
        st::resp::append_set(out, key, value, uint64_t{ttl_s} * 1000);
      else
        st::resp::append_get(out, key);
      return true;
    case Wire::text:
      return is_set ? st::mc::append_text_set(out, key, value, 0, ttl_s)
                    : st::mc::append_text_get(out, key);
    case Wire::binary:
      return is_set ? st::mc::append_binary_set(out, key, value, opaque_++, 0, ttl_s)
                    : st::mc::append_binary_get(out, key, opaque_++);
  }
  return false;
}

size_t Codec::set_head(size_t appended, std::string_view key, std::string_view value) const {
  switch (wire_) {
    case Wire::resp:
      return resp_set_head(key.size(), value.size());
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
      }
      break;
    case Wire::text:
      s = text_->next(text_op(op), &text_reply_);
      if (s == st::ReadStatus::reply) {
        *verdict = st::mc::text_verdict(text_op(op), text_reply_);
        *value = text_reply_.value;
      }
      break;
    case Wire::binary:
      s = binary_->next(&binary_reply_);
      if (s == st::ReadStatus::reply) {
        *verdict = st::mc::binary_verdict(op, binary_reply_);
        *value = binary_reply_.value;
      }
      break;
  }
  return s;
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
