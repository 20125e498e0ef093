// The operations endpoint: GET /metrics (Prometheus text format), /healthz and /readyz (200 "ok"
// or 503 with the reason) on one port. Anything else is 404.
//
// prometheus-cpp's Exposer cannot answer 503, and a second port for health would be one more
// thing to configure and expose, so this serves all three with civetweb, the server the Exposer
// itself is built on.
#pragma once

#include <memory>
#include <string>
#include <string_view>

class CivetServer;

namespace exactly::ops {

class Health;
class Metrics;

class HttpServer {
 public:
  // Listens on `listen`: "host:port" or ":port" (all IPv4 interfaces); the host is an IPv4
  // address or a name that resolves to one. "[v6 address]:port" only where civetweb is built
  // with IPv6, which Debian 12's is not. Port 0 takes any free port (see port()).
  // Null with `error` naming the address when it cannot listen. `metrics` and `health` must
  // outlive the server.
  static std::unique_ptr<HttpServer> start(std::string_view listen, const Metrics& metrics,
                                           const Health& health, std::string& error);
  ~HttpServer();  // stops listening and waits for requests in progress
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port actually listened on.
  [[nodiscard]] int port() const { return port_; }

 private:
  class Handler;  // the civetweb request handler (http_server.cpp)

  HttpServer() = default;
  std::unique_ptr<Handler> handler_;
  std::unique_ptr<CivetServer> server_;  // declared last: stopped before the handler goes
  int port_ = 0;
};

}  // namespace exactly::ops
