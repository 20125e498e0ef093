// Sample payment events, as in the exercise the project grew from: deterministic ids
// (UUIDv5 in the DNS namespace of "payment-{i}"), amounts from $10 to $510, 20 merchants.
#pragma once

#include <cstdint>
#include <string>

namespace exactly::sample {

// uuid5(NAMESPACE_DNS, "payment-{i}") in canonical lower-case form.
std::string payment_id(std::uint64_t i);

// {"payment_id": ..., "amount_cents": (i % 500) * 100 + 1000, "merchant_id": "merchant-%03d" (i % 20),
//  "event_time": event_time_s} as compact JSON.
std::string payment_json(std::uint64_t i, double event_time_s);

}  // namespace exactly::sample
