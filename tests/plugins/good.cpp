// A well-behaved plugin built with the C++ SDK. What it does depends on the input value, so the
// tests can drive every path of the ABI:
//   "none"          emits nothing, ok
//   "skip"          skips, with a reason
//   "error"         fails, with a message
//   "many:N"        emits N records, values "0".."N-1", keys kept
//   "partition:P"   emits one record to partition P
//   "count:NAME"    adds 1 to the counter NAME (whatever NAME is), emits nothing, ok
//   "crash"         kills the process with SIGSEGV, as a plugin's bad pointer would
//   null            emits one record with a null value
//   anything else   emits value + suffix, key and headers kept, plus a header "offset"
#include <exactly/sdk.hpp>

#include <csignal>
#include <string>

namespace {

class Good {
 public:
  explicit Good(const exactly::sdk::Config& config)
      : suffix_(config.get_string("suffix", "")), host_(config.host()) {
    host_.info("created with suffix '" + suffix_ + "'");
  }

  exactly::sdk::Status process(const exactly::sdk::Record& record, exactly::sdk::Emitter& out) {
    host_.counter_add("records");
    const auto value = record.value();
    if (!value) {
      out.emit(exactly::sdk::Output{record.key(), std::nullopt, {}, std::nullopt});
      return exactly::sdk::Status::ok();
    }
    const std::string text{*value};
    if (text == "none") {
      return exactly::sdk::Status::ok();
    }
    if (text.rfind("count:", 0) == 0) {
      host_.counter_add(text.substr(6));
      return exactly::sdk::Status::ok();
    }
    if (text == "crash") {
      std::raise(SIGSEGV);
    }
    if (text == "skip") {
      return exactly::sdk::Status::skip("asked to skip");
    }
    if (text == "error") {
      host_.counter_add("errors", 2);
      return exactly::sdk::Status::error("asked to fail at offset " +
                                         std::to_string(record.offset()));
    }
    if (text.rfind("many:", 0) == 0) {
      const int n = std::stoi(text.substr(5));
      for (int i = 0; i < n; ++i) {
        const std::string v = std::to_string(i);
        out.emit(exactly::sdk::Output{record.key(), v, {}, std::nullopt});
      }
      return exactly::sdk::Status::ok();
    }
    if (text.rfind("partition:", 0) == 0) {
      out.emit(exactly::sdk::Output{record.key(), text, {}, std::stoi(text.substr(10))});
      return exactly::sdk::Status::ok();
    }
    const std::string new_value = text + suffix_;
    const std::string offset = std::string{record.topic()} + "/" +
                               std::to_string(record.partition()) + "/" +
                               std::to_string(record.offset());
    std::vector<exactly::sdk::Header> headers = record.headers();
    headers.push_back({"offset", offset});
    out.emit(exactly::sdk::Output{record.key(), new_value, headers, std::nullopt});
    return exactly::sdk::Status::ok();
  }

 private:
  std::string suffix_;
  exactly::sdk::Host host_;
};

}  // namespace

EXACTLY_REGISTER_PLUGIN(Good, "good", "1.2.3", {{"suffix", "text appended to every value"}})
