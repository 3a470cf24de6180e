#include "store/store_client.hpp"

#include <sys/socket.h>

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

}  // namespace kv::drive
