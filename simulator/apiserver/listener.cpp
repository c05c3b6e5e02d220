// The listening socket; see listener.h.
#include "simulator/apiserver/listener.h"

#include "core/base/errors.h"

namespace gpuops::simulator {

std::string listen_on(boost::asio::ip::tcp::acceptor& acceptor, const boost::asio::ip::address& address, uint16_t port,
                      const std::string& what, const std::string& address_text) {
  namespace asio = boost::asio;
  asio::ip::tcp::endpoint ep(address, port);
  boost::system::error_code ec;
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw core::ClusterError(what + ": cannot listen on " + address_text + ":" + std::to_string(port) + ": " +
                             ec.message());
  const std::string host = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  return host + ":" + std::to_string(acceptor.local_endpoint().port());
}

}  // namespace gpuops::simulator
