#include "kvbench/protocol.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace kv::proto {
namespace {

bool is_name(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameBytes) return false;
  if (s[0] < 'a' || s[0] > 'z') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

bool needs_escape(unsigned char c) { return c <= 0x20 || c >= 0x7f || c == '%'; }

void escape_into(std::string_view value, std::string& out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char ch : value) {
    auto c = static_cast<unsigned char>(ch);
    if (needs_escape(c)) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += ch;
    }
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

Result<std::string> unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '%') {
      if (i + 2 >= text.size()) return Error{"bad %XX escape"};
      int hi = hex_digit(text[i + 1]);
      int lo = hex_digit(text[i + 2]);
      if (hi < 0 || lo < 0) return Error{"bad %XX escape"};
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (needs_escape(c)) {
      return Error{"unescaped control or non-ASCII byte"};
    } else {
      out += text[i];
    }
  }
  return out;
}

Result<Field> parse_field(std::string_view token) {
  size_t eq = token.find('=');
  if (eq == std::string_view::npos) return Error{"field without '='"};
  std::string_view key = token.substr(0, eq);
  if (!is_name(key)) return Error{"bad field name"};
  auto value = unescape(token.substr(eq + 1));
  if (!value) return value.error();
  return Field{std::string(key), std::move(value).value()};
}

}  // namespace

Message& Message::add(std::string_view key, std::string_view value) {
  fields.push_back({std::string(key), std::string(value)});
  return *this;
}

Message& Message::add(std::string_view key, int64_t value) {
  return add(key, std::string_view(std::to_string(value)));
}

Message& Message::add(std::string_view key, double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  if (ec != std::errc() || !std::isfinite(value)) return *this;  // NaN/inf: unknown
  return add(key, std::string_view(buf, static_cast<size_t>(end - buf)));
}

const std::string* Message::find(std::string_view key) const {
  for (const Field& f : fields) {
    if (f.key == key) return &f.value;
  }
  return nullptr;
}

std::optional<int64_t> Message::get_int(std::string_view key) const {
  const std::string* v = find(key);
  if (!v || v->empty()) return std::nullopt;
  int64_t out = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size()) return std::nullopt;
  return out;
}

std::optional<double> Message::get_real(std::string_view key) const {
  const std::string* v = find(key);
  if (!v || v->empty()) return std::nullopt;
  double out = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size() || !std::isfinite(out)) {
    return std::nullopt;
  }
  return out;
}

std::string Message::get_text(std::string_view key) const {
  const std::string* v = find(key);
  return v ? *v : std::string();
}

std::string encode(const Message& m) {
  std::string out = m.verb;
  for (const Field& f : m.fields) {
    out += ' ';
    out += f.key;
    out += '=';
    escape_into(f.value, out);
  }
  out += '\n';
  return out;
}

Result<Message> parse_message(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return Error{"empty line"};
  size_t space = line.find(' ');
  Message m(line.substr(0, space));
  if (!is_name(m.verb)) return Error{"bad verb"};
  while (space != std::string_view::npos) {
    line.remove_prefix(space + 1);
    space = line.find(' ');
    std::string_view token = line.substr(0, space);
    if (token.empty()) return Error{"empty field (two spaces or a trailing space)"};
    if (m.fields.size() == kMaxFields) return Error{"too many fields"};
    auto field = parse_field(token);
    if (!field) return field.error();
    if (m.has(field.value().key)) return Error{"duplicate field " + field.value().key};
    m.fields.push_back(std::move(field).value());
  }
  return m;
}

Message error_message(std::string_view code, std::string_view text) {
  Message m("error");
  m.add("code", code).add("msg", text);
  return m;
}

LineFramer::Status LineFramer::next(std::string* line) {
  if (broken_) return Status::too_long;
  std::string_view rest(buf_);
  rest.remove_prefix(pos_);
  size_t nl = rest.find('\n');
  if (nl == std::string_view::npos) {
    if (rest.size() > max_) {
      broken_ = true;
      return Status::too_long;
    }
    if (pos_ > 0) {  // compact: keep only the partial line
      buf_.erase(0, pos_);
      pos_ = 0;
    }
    return Status::need_more;
  }
  if (nl > max_) {
    broken_ = true;
    return Status::too_long;
  }
  line->assign(rest.substr(0, nl));
  pos_ += nl + 1;
  return Status::line;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Walks the longer length so timing tells nothing about the first differing byte.
  size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < n; ++i) {
    auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

Result<HostPort> split_host_port(std::string_view text, int default_port) {
  if (text.empty()) return Error{"missing host:port"};
  HostPort hp;
  std::string_view host, port;
  bool has_port = true;
  if (text.front() == '[') {  // [::1]:6379
    const size_t close = text.find(']');
    const bool alone = close + 1 == text.size() && default_port > 0;
    if (close == std::string_view::npos ||
        (!alone && (close + 1 >= text.size() || text[close + 1] != ':'))) {
      return Error{"expected [IPv6]:port"};
    }
    host = text.substr(1, close - 1);
    has_port = !alone;
    if (has_port) port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    host = text.substr(0, colon);
    if (colon == std::string_view::npos) {
      if (default_port <= 0) return Error{"missing port in '" + std::string(text) + "'"};
      has_port = false;
    } else {
      port = text.substr(colon + 1);
    }
    if (host.find(':') != std::string_view::npos) return Error{"IPv6 addresses need [brackets]"};
  }
  if (host.empty()) return Error{"missing host"};
  for (char c : host) {
    auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == 0x7f)
      return Error{"space or control character in host '" + std::string(host) + "'"};
  }
  hp.host = std::string(host);
  if (!has_port) {
    hp.port = default_port;
    return hp;
  }
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), hp.port);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || hp.port < 1 ||
      hp.port > 65535) {
    return Error{"port '" + std::string(port) + "' is not a number from 1 to 65535"};
  }
  return hp;
}

}  // namespace kv::proto
