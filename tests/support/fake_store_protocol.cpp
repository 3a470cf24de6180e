// FakeStore's protocols (fake_store.hpp): requests cut from a connection's input and answered in
// RESP, memcached text and memcached binary, over one key space with expiry times. The server
// thread that calls them, and the scripts: fake_store.cpp.
#include <arpa/inet.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fake_store.hpp"
#include "fake_store_impl.hpp"
#include "kvbench/text_fields.hpp"

namespace kv::test {
using namespace fake_store_detail;  // NOLINT(google-build-using-namespace): FakeStore's insides

namespace {

constexpr const char* kMemcachedVersion = "1.6.18";

bool to_int(std::string_view s, int64_t* v) {
  if (s.empty() || s.size() > 18) return false;
  bool neg = s[0] == '-';
  if (neg) s.remove_prefix(1);
  if (s.empty()) return false;
  int64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
  }
  *v = neg ? -n : n;
  return true;
}

uint32_t be32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return ntohl(v);
}
uint16_t be16(const char* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return ntohs(v);
}
void put32(std::string& out, uint32_t v) {
  v = htonl(v);
  out.append(reinterpret_cast<const char*>(&v), 4);
}
void put16(std::string& out, uint16_t v) {
  v = htons(v);
  out.append(reinterpret_cast<const char*>(&v), 2);
}

std::string bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}

// RESP: an array of bulk strings (what hiredis sends).
Cut cut_resp(std::string_view in, size_t* used, Request* r) {
  size_t pos = 0;
  auto line = [&](std::string_view* out) {
    size_t e = in.find("\r\n", pos);
    if (e == std::string_view::npos) return false;
    *out = in.substr(pos, e - pos);
    pos = e + 2;
    return true;
  };
  std::string_view l;
  int64_t n = 0;
  if (!line(&l)) return in.size() > 64 * 1024 ? Cut::bad : Cut::incomplete;
  if (!to_int(l.substr(1), &n) || n < 1 || n > 1024) return Cut::bad;
  for (int64_t i = 0; i < n; ++i) {
    int64_t len = 0;
    if (!line(&l)) return Cut::incomplete;
    if (l.empty() || l[0] != '$' || !to_int(l.substr(1), &len) || len < 0) return Cut::bad;
    if (in.size() < pos + static_cast<size_t>(len) + 2) return Cut::incomplete;
    r->args.push_back(in.substr(pos, static_cast<size_t>(len)));
    pos += static_cast<size_t>(len) + 2;
  }
  r->wire = Wire::resp;
  *used = pos;
  return Cut::ok;
}

bool is_storage(std::string_view cmd) {
  return cmd == "set" || cmd == "add" || cmd == "replace" || cmd == "append" || cmd == "prepend" ||
         cmd == "cas";
}

// memcached text: a command line, and for storage commands the data block after it.
Cut cut_text(std::string_view in, size_t* used, Request* r) {
  size_t nl = in.find('\n');
  if (nl == std::string_view::npos) return in.size() > 8192 ? Cut::bad : Cut::incomplete;
  std::string_view line = in.substr(0, nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  r->wire = Wire::text;
  r->args = split_fields(line);  // on spaces and tabs (memcached: spaces; no test sends a tab)
  size_t pos = nl + 1;
  int64_t bytes = 0;
  if (!r->args.empty() && is_storage(r->args[0]) && r->args.size() >= 5 &&
      to_int(r->args[4], &bytes) && bytes >= 0) {
    if (in.size() < pos + static_cast<size_t>(bytes) + 2) return Cut::incomplete;
    r->data = in.substr(pos, static_cast<size_t>(bytes));
    if (in.substr(pos + static_cast<size_t>(bytes), 2) != "\r\n") return Cut::bad;
    pos += static_cast<size_t>(bytes) + 2;
  }
  *used = pos;
  return Cut::ok;
}

// memcached binary: a 24-byte header and its body (extras, key, value).
Cut cut_binary(std::string_view in, size_t* used, Request* r) {
  if (in.size() < 24) return Cut::incomplete;
  const char* h = in.data();
  uint32_t body = be32(h + 8);
  uint16_t keylen = be16(h + 2);
  auto extlen = static_cast<uint8_t>(h[4]);
  if (body > (64u << 20) || size_t{keylen} + extlen > body) return Cut::bad;
  if (in.size() < 24 + size_t{body}) return Cut::incomplete;
  r->wire = Wire::binary;
  r->header = h;
  r->extras = in.substr(24, extlen);
  r->key = in.substr(24 + extlen, keylen);
  r->value = in.substr(24 + extlen + keylen, body - extlen - keylen);
  *used = 24 + body;
  return Cut::ok;
}

// A binary response: the request's opcode and opaque echoed.
std::string bin_reply(const char* req, uint16_t status, std::string_view extras = {},
                      std::string_view key = {}, std::string_view value = {}, uint64_t cas = 0) {
  std::string out;
  out += static_cast<char>(0x81);
  out += req[1];
  put16(out, static_cast<uint16_t>(key.size()));
  out += static_cast<char>(extras.size());
  out += '\0';
  put16(out, status);
  put32(out, static_cast<uint32_t>(extras.size() + key.size() + value.size()));
  out.append(req + 12, 4);
  put32(out, static_cast<uint32_t>(cas >> 32));
  put32(out, static_cast<uint32_t>(cas));
  out.append(extras).append(key).append(value);
  return out;
}

}  // namespace

namespace fake_store_detail {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Cut cut_request(std::string_view in, size_t* used, Request* r) {
  if (static_cast<unsigned char>(in[0]) == 0x80) return cut_binary(in, used, r);
  if (in[0] == '*') return cut_resp(in, used, r);
  return cut_text(in, used, r);
}

const char* binary_name(uint8_t op) {
  switch (op) {
    case 0x00:
      return "get";
    case 0x01:
      return "set";
    case 0x04:
      return "delete";
    case 0x07:
      return "quit";
    case 0x09:
      return "getq";
    case 0x0a:
      return "noop";
    case 0x0b:
      return "version";
    case 0x0c:
      return "getk";
    case 0x0d:
      return "getkq";
    case 0x10:
      return "stat";
    case 0x11:
      return "setq";
    case 0x14:
      return "deleteq";
    case 0x17:
      return "quitq";
    default:
      return "unknown";
  }
}

}  // namespace fake_store_detail

// ---- the key space ----
const Item* FakeStore::Impl::find(const std::string& key) {
  auto it = items.find(key);
  if (it == items.end()) return nullptr;
  if (it->second.expires_us != 0 && it->second.expires_us <= now_us()) {
    items.erase(it);
    return nullptr;
  }
  return &it->second;
}
const Item* FakeStore::Impl::lookup(const std::string& key) {
  const Item* i = find(key);
  ++(i ? hits : misses);
  return i;
}
void FakeStore::Impl::store(std::string_view key, std::string_view value, uint32_t flags,
                            int64_t ttl_us) {
  Item& i = items[std::string(key)];
  i.value.assign(value);
  i.flags = flags;
  i.expires_us = ttl_us > 0 ? now_us() + ttl_us : 0;
  i.cas = next_cas++;
}

// ---- RESP ----
std::string FakeStore::Impl::info_text() const {
  std::map<std::string, int64_t> calls;
  for (const auto& c : counters)
    for (const auto& [cmd, n] : c.requests) calls[cmd] += n;
  int64_t used = 0;
  for (const auto& [k, v] : items) used += static_cast<int64_t>(k.size() + v.value.size());
  std::string t =
      "# Server\r\nredis_version:7.0.0\r\nredis_mode:standalone\r\n"
      "# Clients\r\nconnected_clients:" +
      std::to_string(conns.size()) + "\r\n# Memory\r\nused_memory:" + std::to_string(used) +
      "\r\n# Stats\r\nkeyspace_hits:" + std::to_string(hits) +
      "\r\nkeyspace_misses:" + std::to_string(misses) + "\r\n# Commandstats\r\n";
  for (const auto& [cmd, n] : calls)
    t += "cmdstat_" + cmd + ":calls=" + std::to_string(n) + ",usec=0,usec_per_call=0.00\r\n";
  t += "# Keyspace\r\ndb0:keys=" + std::to_string(items.size()) + ",expires=0,avg_ttl=0\r\n";
  return t;
}

std::string FakeStore::Impl::resp(Conn& c, const Request& r) {
  const std::string cmd = lower(r.args[0]);
  count(c, cmd);
  const auto& a = r.args;
  if (cmd == "ping") return a.size() > 1 ? bulk(a[1]) : "+PONG\r\n";
  if (cmd == "auth" || cmd == "select") return "+OK\r\n";
  if (cmd == "quit") {
    c.closing = true;
    return "+OK\r\n";
  }
  if (cmd == "info") return bulk(info_text());
  if (cmd == "config") return "*0\r\n";
  if (cmd == "get" && a.size() == 2) {
    const Item* i = lookup(std::string(a[1]));
    return i ? bulk(i->value) : "$-1\r\n";
  }
  if (cmd == "del" && a.size() >= 2) {
    int64_t n = 0;
    for (size_t k = 1; k < a.size(); ++k) n += items.erase(std::string(a[k])) ? 1 : 0;
    return ":" + std::to_string(n) + "\r\n";
  }
  if (cmd == "set" && a.size() >= 3) {
    int64_t ttl_us = 0, v = 0;
    for (size_t k = 3; k < a.size(); ++k) {
      std::string opt = lower(a[k]);
      if ((opt == "ex" || opt == "px") && k + 1 < a.size() && to_int(a[k + 1], &v) && v > 0) {
        ttl_us = opt == "ex" ? v * 1'000'000 : v * 1000;
        ++k;
      } else {
        return "-ERR syntax error\r\n";
      }
    }
    if (c.b.refuse_sets == Refusal::out_of_memory)
      return "-OOM command not allowed when used memory > 'maxmemory'.\r\n";
    if (c.b.refuse_sets == Refusal::read_only)
      return "-READONLY You can't write against a read only replica.\r\n";
    store(a[1], a[2], 0, ttl_us);
    return "+OK\r\n";
  }
  return "-ERR unknown command '" + std::string(a[0]) + "' (fake store)\r\n";
}

// ---- memcached text ----
std::vector<std::pair<std::string, std::string>> FakeStore::Impl::stats(
    const Behavior& behavior) const {
  int64_t bytes = 0;
  for (const auto& [k, v] : items) bytes += static_cast<int64_t>(k.size() + v.value.size());
  auto sum = [&](const char* a, const char* b) {
    int64_t n = 0;
    for (const auto& c : counters) {
      for (const char* name : {a, b}) {
        auto it = c.requests.find(name);
        if (it != c.requests.end()) n += it->second;
      }
    }
    return std::to_string(n);
  };
  const std::string version = behavior.version.empty() ? kMemcachedVersion : behavior.version;
  if (!behavior.set_counters)
    return {{"pid", std::to_string(::getpid())},
            {"version", version},
            {"cmd_get", sum("get", "gets")},
            {"curr_items", std::to_string(items.size())},
            {"bytes", std::to_string(bytes)}};
  return {{"pid", std::to_string(::getpid())},
          {"version", version},
          {"curr_connections", std::to_string(conns.size())},
          {"total_connections", std::to_string(counters.size())},
          {"cmd_get", sum("get", "gets")},
          {"cmd_set", sum("set", "setq")},
          {"get_hits", std::to_string(hits)},
          {"get_misses", std::to_string(misses)},
          {"store_too_large", "0"},
          {"store_no_memory", std::to_string(refused_no_memory)},
          {"curr_items", std::to_string(items.size())},
          {"bytes", std::to_string(bytes)}};
}

// memcached's exptime: relative seconds, or a unix time past 30 days.
int64_t FakeStore::Impl::ttl_us_of(int64_t exptime) {
  if (exptime > 30 * 24 * 3600) exptime -= static_cast<int64_t>(::time(nullptr));
  if (exptime == 0) return 0;
  return exptime < 0 ? 1 : exptime * 1'000'000;
}

std::string FakeStore::Impl::text(Conn& c, const Request& r) {
  if (r.args.empty()) {
    count(c, "");
    return "ERROR\r\n";
  }
  const std::string cmd = lower(r.args[0]);
  const auto& a = r.args;
  if (cmd == "get" || cmd == "gets") {
    std::string out;
    for (size_t k = 1; k < a.size(); ++k) {
      count(c, cmd);
      const Item* i = lookup(std::string(a[k]));
      if (!i) continue;
      out += "VALUE " + std::string(a[k]) + " " + std::to_string(i->flags) + " " +
             std::to_string(i->value.size());
      if (cmd == "gets") out += " " + std::to_string(i->cas);
      out += "\r\n" + i->value + "\r\n";
    }
    return out + "END\r\n";
  }
  count(c, cmd);
  if (cmd == "version")
    return "VERSION " + (c.b.version.empty() ? std::string(kMemcachedVersion) : c.b.version) +
           "\r\n";
  if (cmd == "quit") {
    c.closing = true;
    return "";
  }
  if (cmd == "stats") {
    std::string out;
    for (const auto& [k, v] : stats(c.b)) out += "STAT " + k + " " + v + "\r\n";
    return out + "END\r\n";
  }
  if (cmd == "delete" && a.size() >= 2) {
    bool gone = items.erase(std::string(a[1])) > 0;
    if (a.size() > 2 && a.back() == "noreply") return "";
    return gone ? "DELETED\r\n" : "NOT_FOUND\r\n";
  }
  if (cmd == "set") {
    int64_t flags = 0, exptime = 0, bytes = 0;
    if (a.size() < 5 || !to_int(a[2], &flags) || !to_int(a[3], &exptime) || !to_int(a[4], &bytes)) {
      c.closing = true;  // the data block cannot be found: memcached drops such a client too
      return "CLIENT_ERROR bad command line format\r\n";
    }
    // Errors are sent even with noreply (memcached's out_errstring does the same).
    if (c.b.refuse_sets == Refusal::out_of_memory) {
      ++refused_no_memory;
      return "SERVER_ERROR out of memory storing object\r\n";
    }
    if (c.b.refuse_sets == Refusal::read_only) return "NOT_STORED\r\n";
    store(a[1], r.data, static_cast<uint32_t>(flags), ttl_us_of(exptime));
    return a.size() > 5 && a[5] == "noreply" ? "" : "STORED\r\n";
  }
  return "ERROR\r\n";
}

// ---- memcached binary ----
std::string FakeStore::Impl::binary(Conn& c, const Request& r) {
  const auto op = static_cast<uint8_t>(r.header[1]);
  count(c, binary_name(op));
  const std::string key(r.key);
  switch (op) {
    case 0x00:
    case 0x09:
    case 0x0c:
    case 0x0d: {  // get, getq, getk, getkq
      bool quiet = op == 0x09 || op == 0x0d, with_key = op == 0x0c || op == 0x0d;
      const Item* i = lookup(key);
      if (!i)
        return quiet ? "" : bin_reply(r.header, 0x0001, {}, with_key ? r.key : "", "Not found");
      std::string flags;
      put32(flags, i->flags);
      return bin_reply(r.header, 0, flags, with_key ? r.key : "", i->value, i->cas);
    }
    case 0x01:
    case 0x11: {                                                     // set, setq
      if (r.extras.size() != 8) return bin_reply(r.header, 0x0004);  // invalid arguments
      if (c.b.refuse_sets == Refusal::out_of_memory) {
        ++refused_no_memory;
        return bin_reply(r.header, 0x0082);
      }
      if (c.b.refuse_sets == Refusal::read_only) return bin_reply(r.header, 0x0005);
      store(r.key, r.value, be32(r.extras.data()), ttl_us_of(be32(r.extras.data() + 4)));
      return op == 0x11 ? "" : bin_reply(r.header, 0, {}, {}, {}, next_cas - 1);
    }
    case 0x04:
    case 0x14: {  // delete, deleteq
      bool gone = items.erase(key) > 0;
      if (gone && op == 0x14) return "";
      return bin_reply(r.header, gone ? 0 : 0x0001);
    }
    case 0x0a:
      return bin_reply(r.header, 0);
    case 0x0b:
      return bin_reply(r.header, 0, {}, {},
                       c.b.version.empty() ? std::string(kMemcachedVersion) : c.b.version);
    case 0x10: {
      std::string out;
      for (const auto& [k, v] : stats(c.b)) out += bin_reply(r.header, 0, {}, k, v);
      return out + bin_reply(r.header, 0);
    }
    case 0x07:
    case 0x17:
      c.closing = true;
      return op == 0x07 ? bin_reply(r.header, 0) : "";
    default:
      return bin_reply(r.header, 0x0081);
  }
}

}  // namespace kv::test
