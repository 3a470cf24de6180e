#include "store/store_client.hpp"

#include <sys/socket.h>

#include <stdexcept>

#include "store/memcached_client.hpp"
#include "store/redis_client.hpp"

namespace kv::drive {

void StoreClient::Sockets::publish(std::vector<int> fds) {
  std::lock_guard<std::mutex> lock(mu_);
  fds_ = std::move(fds);
  if (interrupted()) {
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);  // connected after the interrupt
  }
}

void StoreClient::Sockets::interrupt() {
  std::lock_guard<std::mutex> lock(mu_);
  interrupted_.store(true, std::memory_order_relaxed);
  for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
}

std::unique_ptr<StoreClient> make_store_client(const TargetSpec& spec, const ClientOptions& opts) {
  if (spec.protocol == Protocol::redis) return make_redis_client(spec, opts);
  return make_memcached_client(spec, opts);
}

std::vector<std::unique_ptr<StoreClient>> connect_clients(const TargetSpec& spec, int n,
                                                          const ClientOptions& opts) {
  std::vector<std::unique_ptr<StoreClient>> clients;
  for (int i = 0; i < n; ++i) {
    auto c = make_store_client(spec, opts);
    if (auto r = c->connect(); !r.ok()) throw std::runtime_error(r.error().message);
    clients.push_back(std::move(c));
  }
  return clients;
}

}  // namespace kv::drive
