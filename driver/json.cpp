#include "json.hpp"

#include <cmath>
#include <cstdio>

namespace kv::drive {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", *v);
  return buf;
}

}  // namespace kv::drive
