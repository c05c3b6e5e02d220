// simulator/apiserver/listener.h: the listening socket of `gpuops serve`'s API server
// and of its placement view (--ui), opened one way.
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include <cstdint>
#include <string>

namespace gpuops::simulator {

// Opens `acceptor` on `address`:`port` (port 0: a free one the kernel
// picks), with SO_REUSEADDR and the system's listen backlog. Returns the
// address and the port bound as a URL writes them ("127.0.0.1:41235",
// "[::1]:41235"). Throws core::ClusterError "<what>: cannot listen on
// <address_text>:<port>: <reason>" when it cannot (address_text: the
// address as the user gave it).
std::string listen_on(boost::asio::ip::tcp::acceptor& acceptor, const boost::asio::ip::address& address, uint16_t port,
                      const std::string& what, const std::string& address_text);

}  // namespace gpuops::simulator
