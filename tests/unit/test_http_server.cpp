// The operations endpoint over a real loopback socket: /metrics, /healthz, /readyz, 404, and
// addresses it cannot listen on. Loopback only; no broker.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <civetweb.h>

#include <chrono>
#include <string>

#include "ops/health.h"
#include "ops/http_server.h"
#include "ops/metrics.h"

using namespace exactly::ops;
using namespace std::chrono_literals;

namespace {

struct Response {
  int status = 0;  // 0: no HTTP answer
  std::string body;
};

// A minimal HTTP/1.0 client: one request, read to EOF. Enough for status line and body.
Response get(int port, const std::string& path) {
  Response r;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return r;
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string raw;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    raw.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  // "HTTP/1.1 200 OK\r\n...\r\n\r\nbody"
  if (raw.rfind("HTTP/1.", 0) != 0 || raw.size() < 12) return r;
  r.status = std::stoi(raw.substr(9, 3));
  const auto end = raw.find("\r\n\r\n");
  if (end != std::string::npos) r.body = raw.substr(end + 4);
  return r;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("one port serves /metrics, /healthz and /readyz; anything else is 404") {
  Metrics metrics;
  const auto now = Health::Clock::now();
  Health health(60s, 60s, now);
  std::string error;
  auto server = HttpServer::start("127.0.0.1:0", metrics, health, error);
  REQUIRE_MESSAGE(server, error);
  REQUIRE(server->port() > 0);

  metrics.transaction_aborted(AbortReason::watchdog);
  metrics.transaction_aborted(AbortReason::watchdog);
  const Response m = get(server->port(), "/metrics");
  CHECK(m.status == 200);
  CHECK(contains(m.body, "exactly_build_info{version="));
  CHECK(contains(m.body, "exactly_transactions_aborted_total{reason=\"watchdog\"} 2"));

  // Alive (fresh), not ready (nothing assigned): 503 with the reason.
  const Response live = get(server->port(), "/healthz");
  CHECK(live.status == 200);
  CHECK(live.body == "ok\n");
  Response ready = get(server->port(), "/readyz");
  CHECK(ready.status == 503);
  CHECK(ready.body == "no partitions assigned\n");

  health.set_assignment(1);
  health.set_producers_ready(1);
  health.polled(Health::Clock::now(), false);
  ready = get(server->port(), "/readyz");
  CHECK(ready.status == 200);
  CHECK(ready.body == "ok\n");

  health.set_fatal("producer fenced");
  const Response dead = get(server->port(), "/healthz");
  CHECK(dead.status == 503);
  CHECK(dead.body == "fatal error: producer fenced\n");

  CHECK(get(server->port(), "/").status == 404);
  CHECK(get(server->port(), "/nothing").status == 404);
  CHECK(get(server->port(), "/metrics/extra").status == 404);
  CHECK(get(server->port(), "/metrics?name=x").status == 200);
}

TEST_CASE("an address it cannot listen on is an error that names it") {
  Metrics metrics;
  Health health(60s, 60s, Health::Clock::now());
  std::string error;
  auto first = HttpServer::start("127.0.0.1:0", metrics, health, error);
  REQUIRE_MESSAGE(first, error);

  SUBCASE("the port is taken") {
    const std::string taken = "127.0.0.1:" + std::to_string(first->port());
    CHECK_FALSE(HttpServer::start(taken, metrics, health, error));
    CHECK(contains(error, "cannot listen on '" + taken + "'"));
    CHECK(contains(error, "Address already in use"));  // civetweb's account, not just "failed"
  }
  SUBCASE("the address is not this host's") {
    CHECK_FALSE(HttpServer::start("192.0.2.1:0", metrics, health, error));  // TEST-NET-1
    CHECK(contains(error, "'192.0.2.1:0'"));
  }
  SUBCASE("not host:port, or a port civetweb would read as an option") {
    for (const char* bad : {"", "9464", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:80s",
                            "127.0.0.1:80r", "127.0.0.1:80,127.0.0.1:81"}) {
      CAPTURE(bad);
      error.clear();
      CHECK_FALSE(HttpServer::start(bad, metrics, health, error));
      CHECK(contains(error, std::string{"cannot listen on '"} + bad + "'"));
    }
  }
  SUBCASE("IPv6 without civetweb's IPv6 support (Debian 12) is refused with that reason") {
    if (mg_check_feature(8) == 0) {
      CHECK_FALSE(HttpServer::start("[::1]:0", metrics, health, error));
      CHECK(contains(error, "cannot listen on '[::1]:0'"));
      CHECK(contains(error, "IPv6"));
    }
  }
}
