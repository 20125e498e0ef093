// A plugin whose C++ code throws: from the constructor when the config asks, and from process()
// for the values "std" (a std::exception) and "int" (not a std::exception). The SDK must turn each
// into an error with the message, never an unwinding into the host.
#include <exactly/sdk.hpp>

#include <stdexcept>

namespace {

class Throwing {
 public:
  explicit Throwing(const exactly::sdk::Config& config) {
    if (config.get_bool("throw_in_create", false)) {
      throw std::runtime_error("the constructor says no");
    }
    if (config.get_bool("throw_int_in_create", false)) {
      throw 7;
    }
  }

  exactly::sdk::Status process(const exactly::sdk::Record& record, exactly::sdk::Emitter& out) {
    const auto value = record.value().value_or("");
    if (value == "std") {
      out.emit(record, "partial output, to be discarded");
      throw std::runtime_error("process says no");
    }
    if (value == "int") {
      throw 42;
    }
    out.emit(record, value);
    return exactly::sdk::Status::ok();
  }
};

}  // namespace

EXACTLY_REGISTER_PLUGIN(Throwing, "throwing", "0.1.0",
                        {{"throw_in_create", "throw a std::runtime_error from the constructor"},
                         {"throw_int_in_create", "throw an int from the constructor"}})
