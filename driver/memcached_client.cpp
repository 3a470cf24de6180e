#include "memcached_client.hpp"

#include <libmemcached/memcached.h>

#include <time.h>

#include <string>

namespace kv::drive {
namespace {

struct MemcFree {
  void operator()(memcached_st* m) const noexcept { memcached_free(m); }
};

// A failed request's status. When no server answered at all (down, or disabled until its
// retry timeout), pause 10 ms: libmemcached fails those at once, and a worker must not spin.
OpStatus classify(memcached_return_t rc) {
  switch (rc) {
    case MEMCACHED_TIMEOUT:
      return OpStatus::timeout;
    case MEMCACHED_CONNECTION_FAILURE:
    case MEMCACHED_SERVER_TEMPORARILY_DISABLED:
    case MEMCACHED_SERVER_MARKED_DEAD:
    case MEMCACHED_NO_SERVERS:
    case MEMCACHED_ERRNO: {
      timespec pause{0, 10'000'000};
      nanosleep(&pause, nullptr);
      return OpStatus::error;
    }
    default:
      return OpStatus::error;
  }
}

class MemcachedClient final : public StoreClient {
 public:
  MemcachedClient(TargetSpec spec, ClientOptions opts) : spec_(std::move(spec)), opts_(opts) {}
  ~MemcachedClient() override {
    if (result_) memcached_result_free(result_);
  }
  MemcachedClient(const MemcachedClient&) = delete;
  MemcachedClient& operator=(const MemcachedClient&) = delete;

  Result<void> connect() override {
    std::unique_ptr<memcached_st, MemcFree> mc(memcached_create(nullptr));
    if (!mc) return Error{"memcached_create failed"};
    auto ms = static_cast<uint64_t>(opts_.timeout_us / 1000);
    memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_TCP_NODELAY, spec_.tcp_nodelay ? 1 : 0);
    memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, spec_.binary_protocol);
    memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_POLL_TIMEOUT, ms);
    memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, ms);
    // A failed server is retried after 1 s rather than dropped from the pool: a benchmark
    // counts the errors of a dead server instead of silently moving its keys elsewhere.
    memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, 1);
    memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS, 0);
    if (spec_.servers.size() > 1) {
      memcached_behavior_set(mc.get(), MEMCACHED_BEHAVIOR_DISTRIBUTION,
                             MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA);
    }
    for (const auto& s : spec_.servers) {
      auto port = static_cast<in_port_t>(s.port);
      memcached_return_t rc = memcached_server_add(mc.get(), s.host.c_str(), port);
      if (rc != MEMCACHED_SUCCESS)
        return Error{"cannot add memcached server " + s.host + ":" + std::to_string(s.port) +
                     ": " + memcached_strerror(mc.get(), rc)};
    }
    // libmemcached connects lazily: ask every server for its version to know they are there.
    memcached_return_t rc = memcached_version(mc.get());
    if (rc != MEMCACHED_SUCCESS) {
      return Error{"cannot connect to memcached " + spec_.display + ": " +
                   memcached_last_error_message(mc.get())};
    }
    // The result lives inside this object (not allocated by libmemcached): at the end of a
    // fetch libmemcached frees an allocated result but only resets an embedded one, so it can
    // be reused for every get without a malloc.
    if (result_) memcached_result_free(result_);
    result_ = nullptr;
    mc_ = std::move(mc);
    result_ = memcached_result_create(mc_.get(), &result_storage_);
    if (!result_) return Error{"memcached_result_create failed"};
    return {};
  }

  OpStatus set(std::string_view key, std::string_view value, uint32_t ttl_s) override {
    memcached_return_t rc =
        memcached_set(mc_.get(), key.data(), key.size(), value.data(), value.size(), ttl_s, 0);
    return rc == MEMCACHED_SUCCESS ? OpStatus::ok : classify(rc);
  }

  OpStatus get(std::string_view key, std::string_view* value) override {
    // mget + fetch into a reused result: memcached_get would malloc every value.
    const char* keys[] = {key.data()};
    size_t lens[] = {key.size()};
    memcached_return_t rc = memcached_mget(mc_.get(), keys, lens, 1);
    if (rc != MEMCACHED_SUCCESS) return classify(rc);
    OpStatus status = OpStatus::miss;
    // Drain to the end marker, as the protocol requires before the next request.
    while (memcached_fetch_result(mc_.get(), result_, &rc) != nullptr) {
      *value = std::string_view(memcached_result_value(result_), memcached_result_length(result_));
      status = OpStatus::hit;
    }
    if (rc == MEMCACHED_END || rc == MEMCACHED_NOTFOUND || rc == MEMCACHED_SUCCESS) return status;
    return classify(rc);
  }

  std::string server_version() override {
    const memcached_instance_st* s = memcached_server_instance_by_position(mc_.get(), 0);
    if (!s) return "";
    return "memcached " + std::to_string(memcached_server_major_version(s)) + "." +
           std::to_string(memcached_server_minor_version(s)) + "." +
           std::to_string(memcached_server_micro_version(s));
  }

 private:
  TargetSpec spec_;
  ClientOptions opts_;
  std::unique_ptr<memcached_st, MemcFree> mc_;
  memcached_result_st result_storage_{};
  memcached_result_st* result_ = nullptr;  // &result_storage_ once created
};

}  // namespace

std::unique_ptr<StoreClient> make_memcached_client(const TargetSpec& spec,
                                                   const ClientOptions& opts) {
  return std::make_unique<MemcachedClient>(spec, opts);
}

}  // namespace kv::drive
