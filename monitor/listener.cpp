#include "listener.hpp"

#include <boost/asio/ip/address.hpp>
#include <stdexcept>

namespace kv::mon {

void open_listener(boost::asio::ip::tcp::acceptor& acceptor, const std::string& address, int port,
                   const std::string& option) {
  namespace asio = boost::asio;
  using asio::ip::tcp;
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(address, ec);
  std::string where = address;
  where += ':';
  where += std::to_string(port);
  if (ec) throw std::runtime_error(option + " " + where + ": not an IP address");
  tcp::endpoint ep(addr, static_cast<unsigned short>(port));
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) return;
  std::string why = "cannot listen on ";
  why += where;
  if (option != "--listen") why += " (" + option + ")";
  why += ": ";
  why += ec.message();
  throw std::runtime_error(why);
}

bool is_loopback_address(const std::string& address) {
  boost::system::error_code ec;
  auto addr = boost::asio::ip::make_address(address, ec);
  return !ec && addr.is_loopback();
}

}  // namespace kv::mon
