#include "ops/http_server.h"

#include <CivetServer.h>
#include <civetweb.h>

#include <exception>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "ops/health.h"
#include "ops/metrics.h"

namespace exactly::ops {
namespace {

// civetweb's listening_ports from our "host:port". civetweb reads a port followed by 's' as TLS
// and by 'r' as a redirect, and a comma as a second address, so only digits may follow the last
// ':' and no comma may appear anywhere.
std::optional<std::string> civetweb_port(std::string_view listen, std::string& problem) {
  const auto colon = listen.rfind(':');
  if (colon == std::string_view::npos) {
    problem = "not host:port";
    return std::nullopt;
  }
  const std::string_view host = listen.substr(0, colon);
  const std::string_view port = listen.substr(colon + 1);
  int value = 0;
  for (const char c : port) {
    if (c < '0' || c > '9' || value > 65535) {
      value = 65536;
      break;
    }
    value = value * 10 + (c - '0');
  }
  if (port.empty() || value > 65535) {
    problem = "the port is not a number from 0 to 65535";
    return std::nullopt;
  }
  if (host.find(',') != std::string_view::npos) {
    problem = "the host has a comma";
    return std::nullopt;
  }
  constexpr unsigned ipv6_feature = 8;  // civetweb.h, mg_check_feature
  if (host.starts_with('[') && mg_check_feature(ipv6_feature) == 0) {
    problem = "the civetweb library here has no IPv6 support (Debian 12's has none)";
    return std::nullopt;
  }
  // An empty host is every interface, which civetweb writes as the bare port.
  return host.empty() ? std::string{port} : std::string{listen};
}

// civetweb's own account of a failed start (CivetServer's exception only says "possible problem
// binding to port"): set while the calling thread starts a server, since civetweb reports
// start-up problems on that thread.
thread_local std::string* startup_messages = nullptr;

int log_message(const mg_connection* /*conn*/, const char* message) noexcept {
  try {
    if (startup_messages != nullptr) {
      if (!startup_messages->empty()) startup_messages->append("; ");
      startup_messages->append(message);
    } else {
      spdlog::debug("http server: {}", message);
    }
  } catch (...) {
  }
  return 1;  // handled: civetweb writes nothing itself
}

void respond(mg_connection* conn, int status, const char* content_type, std::string_view body) {
  const char* text = status == 200   ? "OK"
                     : status == 404 ? "Not Found"
                     : status == 503 ? "Service Unavailable"
                                     : "Internal Server Error";
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
            status, text, content_type, body.size());
  mg_write(conn, body.data(), body.size());
}

}  // namespace

class HttpServer::Handler final : public CivetHandler {
 public:
  Handler(const Metrics& metrics, const Health& health) : metrics_(metrics), health_(health) {}

  using CivetHandler::handleGet;
  // Runs on a civetweb thread: nothing may be thrown into its C code.
  bool handleGet(CivetServer* /*server*/, mg_connection* conn, int* status_code) override {
    int status = 500;
    try {
      status = serve(conn);
    } catch (...) {
      try {
        respond(conn, 500, "text/plain; charset=utf-8", "internal error\n");
      } catch (...) {
      }
    }
    if (status_code != nullptr) *status_code = status;
    return true;
  }

 private:
  int serve(mg_connection* conn) {
    const mg_request_info* info = mg_get_request_info(conn);
    const std::string_view path =
        info != nullptr && info->local_uri != nullptr ? info->local_uri : "";
    constexpr const char* plain = "text/plain; charset=utf-8";
    if (path == "/metrics") {
      respond(conn, 200, "text/plain; version=0.0.4; charset=utf-8", metrics_.serialize());
      return 200;
    }
    if (path == "/healthz" || path == "/readyz") {
      const auto now = Health::Clock::now();
      const Health::Verdict v = path == "/healthz" ? health_.liveness(now) : health_.readiness(now);
      if (v.ok) {
        respond(conn, 200, plain, "ok\n");
        return 200;
      }
      respond(conn, 503, plain, v.reason + "\n");
      return 503;
    }
    // civetweb hands sub-paths of a handler's path to it too (/metrics/x).
    respond(conn, 404, plain, "not found\n");
    return 404;
  }

  const Metrics& metrics_;
  const Health& health_;
};

std::unique_ptr<HttpServer> HttpServer::start(std::string_view listen, const Metrics& metrics,
                                              const Health& health, std::string& error) {
  std::string problem;
  const auto ports = civetweb_port(listen, problem);
  if (!ports) {
    error = fmt::format("cannot listen on '{}': {}", listen, problem);
    return nullptr;
  }
  // Scrapes and probes are short and few: a handful of threads is plenty.
  const std::vector<std::string> options{
      "listening_ports", *ports,  //
      "num_threads", "4",         //
      "request_timeout_ms", "10000"};
  std::unique_ptr<HttpServer> server{new HttpServer()};
  server->handler_ = std::make_unique<Handler>(metrics, health);
  CivetCallbacks callbacks;
  callbacks.log_message = log_message;
  std::string messages;
  startup_messages = &messages;
  try {
    server->server_ = std::make_unique<CivetServer>(options, &callbacks);
  } catch (const std::exception& e) {
    startup_messages = nullptr;
    error = fmt::format("cannot listen on '{}': {}", listen,
                        messages.empty() ? e.what() : messages);
    return nullptr;
  }
  startup_messages = nullptr;
  for (const char* path : {"/metrics", "/healthz", "/readyz"}) {
    server->server_->addHandler(path, *server->handler_);
  }
  const std::vector<int> bound = server->server_->getListeningPorts();
  if (bound.empty()) {
    error = fmt::format("cannot listen on '{}': civetweb reports no listening port", listen);
    return nullptr;
  }
  server->port_ = bound.front();
  return server;
}

HttpServer::~HttpServer() {
  // close() joins civetweb's threads, so no request still uses the handler after this.
  if (server_) server_->close();
}

}  // namespace exactly::ops
