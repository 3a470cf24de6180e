// Listening sockets, shared by kvmon's sample server (server.cpp, --listen) and its Prometheus
// endpoint (metrics_server.cpp, --metrics).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <string>

namespace kv::mon {

// Opens `acceptor` on address:port (an IP literal; port 0: any), SO_REUSEADDR, the system's
// backlog. Throws std::runtime_error naming the address and, for any option but --listen,
// `option` ("--metrics").
void open_listener(boost::asio::ip::tcp::acceptor& acceptor, const std::string& address, int port,
                   const std::string& option);

// Whether `address` (an IP literal) is a loopback address; false if it does not parse.
bool is_loopback_address(const std::string& address);

}  // namespace kv::mon
