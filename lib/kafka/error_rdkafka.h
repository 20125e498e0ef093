// Building an Error from librdkafka's error objects (lib/kafka internal).
#pragma once

#include <librdkafka/rdkafka.h>

#include <string_view>

#include "kafka/error.h"

namespace exactly::kafka {

// Takes ownership of `error` (may be null: success). `transactional_call` marks the calls of the
// transaction API, whose unclassified errors are treated as fatal.
Error make_error(rd_kafka_error_t* error, bool transactional_call);

// From a plain response code; kind is `other`, or `retriable` for the transient codes.
Error make_error(rd_kafka_resp_err_t code, std::string_view context = {});

bool is_fencing_code(rd_kafka_resp_err_t code);

}  // namespace exactly::kafka
