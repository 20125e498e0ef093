// What the librdkafka clients of this process reported through their error callback, for the
// callers that wait on the cluster: a refused login is never transient, so the service stops on it
// with librdkafka's reason instead of retrying until a timeout that explains nothing.
//
// librdkafka serves the error callback from rd_kafka_poll() (or the consumer's poll); a client that
// is never polled reports nothing here. Reasons name the broker and the mechanism, never a secret.
#pragma once

#include <optional>
#include <string>

namespace exactly::kafka {

struct ClientError {
  std::string name;    // librdkafka's error name, e.g. "_AUTHENTICATION"
  std::string reason;  // librdkafka's text
};

// The first authentication failure (RD_KAFKA_RESP_ERR__AUTHENTICATION) any client reported.
std::optional<ClientError> authentication_failure();

// The latest error any client reported, transient ones included.
std::optional<ClientError> last_client_error();

// Called by the error callback of every client made by make_conf().
void note_client_error(int code, const char* name, const char* reason);

// Forgets what was reported (tests).
void reset_client_errors();

// A hint for a refused login with these client properties, or empty: librdkafka before 2.6.1 sends
// a SCRAM final message that Kafka 4.x brokers reject (the client nonce repeated; librdkafka issue
// 4895), whatever the password.
std::string authentication_hint(const std::string& mechanism);

}  // namespace exactly::kafka
