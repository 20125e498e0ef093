// uppercase: upper-cases the ASCII letters of every record value, keeping key and headers.
// A null value (tombstone) passes through as null. Deterministic and free of side effects, as
// every transform must be: it may run again for the same record after an aborted transaction.
#include <exactly/sdk.hpp>

#include <string>

namespace {

class Uppercase {
 public:
  explicit Uppercase(const exactly::sdk::Config& config)
      : prefix_(config.get_string("prefix", "")), host_(config.host()) {}

  exactly::sdk::Status process(const exactly::sdk::Record& record, exactly::sdk::Emitter& out) {
    const auto value = record.value();
    if (!value) {
      out.emit(record, std::nullopt);
      return exactly::sdk::Status::ok();
    }
    std::string upper = prefix_;
    upper.reserve(prefix_.size() + value->size());
    for (const char c : *value) {
      upper += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    }
    host_.counter_add("bytes", value->size());
    out.emit(record, upper);
    return exactly::sdk::Status::ok();
  }

 private:
  std::string prefix_;
  exactly::sdk::Host host_;
};

}  // namespace

EXACTLY_REGISTER_PLUGIN(Uppercase, "uppercase", "1.0.0",
                        {{"prefix", "text put before every value (default: none)"}})
