// exactly/sdk.hpp: write an exactly transform plugin in C++, header-only, on top of <exactly/plugin.h>.
//
// !! process() MAY RUN AGAIN FOR THE SAME RECORD. When a transaction aborts, the host rewinds the
// !! partition and replays the range, so process() must be deterministic (same record, same
// !! outputs) and must have no side effects outside the transaction: no writes to databases,
// !! files, caches or other topics, no state carried from one record to the next that a replay
// !! would see differently.
//
//   class MyTransform {
//    public:
//     explicit MyTransform(const exactly::sdk::Config& config);   // may throw to reject config
//     exactly::sdk::Status process(const exactly::sdk::Record& record, exactly::sdk::Emitter& out);
//   };
//   EXACTLY_REGISTER_PLUGIN(MyTransform, "my-transform", "1.0.0",
//                           {{"prefix", "text put before every value"}})
//
// The keys listed at registration are the only ones accepted: any other key in the config is
// rejected with a message that lists them. Every exception thrown by the constructor or by
// process() (std::exception or anything else) becomes an error with its message; nothing unwinds
// into the host. Record and its views are valid only during process(); Emitter::emit copies.
// One instance is called from one thread at a time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <exactly/plugin.h>

namespace exactly::sdk {

// A config that cannot be used: the message names the key.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A JSON value as parsed from the config. Numbers keep whether they were written as integers.
class Value {
 public:
  enum class Type { null, boolean, integer, floating, string, array, object };

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::null; }
  bool as_bool() const { return bool_; }
  std::int64_t as_int() const { return int_; }
  double as_double() const { return type_ == Type::integer ? static_cast<double>(int_) : double_; }
  const std::string& as_string() const { return string_; }
  const std::vector<Value>& as_array() const { return array_; }
  // Members of an object, in their order in the text.
  const std::vector<std::pair<std::string, Value>>& as_object() const { return object_; }

  // The member named `key` of an object, or nullptr.
  const Value* find(std::string_view key) const {
    for (const auto& member : object_) {
      if (member.first == key) {
        return &member.second;
      }
    }
    return nullptr;
  }

  // How messages name a type: in TOML's words, as users write the config in TOML.
  static const char* type_name(Type type) {
    switch (type) {
      case Type::null: return "null";
      case Type::boolean: return "a boolean";
      case Type::integer: return "an integer";
      case Type::floating: return "a float";
      case Type::string: return "a string";
      case Type::array: return "an array";
      case Type::object: return "a table";
    }
    return "unknown";
  }

  // Parses one JSON text (RFC 8259; nesting limited to 64 levels). Throws ConfigError.
  static Value parse(std::string_view text);

 private:
  friend class JsonParser;
  Type type_ = Type::null;
  bool bool_ = false;
  std::int64_t int_ = 0;
  double double_ = 0.0;
  std::string string_;
  std::vector<Value> array_;
  std::vector<std::pair<std::string, Value>> object_;
};

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : text_(text) {}

  Value document() {
    Value value = parse_value(0);
    skip_space();
    if (pos_ != text_.size()) {
      fail("unexpected text after the JSON value");
    }
    return value;
  }

 private:
  static constexpr int max_depth = 64;

  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError("config is not valid JSON at byte " + std::to_string(pos_) + ": " + what);
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) == word) {
      pos_ += word.size();
      return true;
    }
    return false;
  }

  Value parse_value(int depth) {
    if (depth >= max_depth) {
      fail("nests deeper than 64 levels");
    }
    skip_space();
    if (pos_ >= text_.size()) {
      fail("unexpected end");
    }
    Value value;
    const char c = text_[pos_];
    if (c == '{') {
      ++pos_;
      value.type_ = Value::Type::object;
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return value;
      }
      for (;;) {
        skip_space();
        if (pos_ >= text_.size() || text_[pos_] != '"') {
          fail("expected a string as object key");
        }
        std::string key = parse_string();
        skip_space();
        if (pos_ >= text_.size() || text_[pos_] != ':') {
          fail("expected ':'");
        }
        ++pos_;
        value.object_.emplace_back(std::move(key), parse_value(depth + 1));
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
        } else if (pos_ < text_.size() && text_[pos_] == '}') {
          ++pos_;
          return value;
        } else {
          fail("expected ',' or '}'");
        }
      }
    }
    if (c == '[') {
      ++pos_;
      value.type_ = Value::Type::array;
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return value;
      }
      for (;;) {
        value.array_.push_back(parse_value(depth + 1));
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
        } else if (pos_ < text_.size() && text_[pos_] == ']') {
          ++pos_;
          return value;
        } else {
          fail("expected ',' or ']'");
        }
      }
    }
    if (c == '"') {
      value.type_ = Value::Type::string;
      value.string_ = parse_string();
      return value;
    }
    if (consume("true")) {
      value.type_ = Value::Type::boolean;
      value.bool_ = true;
      return value;
    }
    if (consume("false")) {
      value.type_ = Value::Type::boolean;
      return value;
    }
    if (consume("null")) {
      return value;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      return parse_number();
    }
    fail(std::string{"unexpected character '"} + c + "'");
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  Value parse_number() {
    const std::size_t start = pos_;
    bool integral = true;
    if (text_[pos_] == '-') {
      ++pos_;
    }
    if (pos_ < text_.size() && text_[pos_] == '0') {
      ++pos_;
    } else if (pos_ < text_.size() && is_digit(text_[pos_])) {
      while (pos_ < text_.size() && is_digit(text_[pos_])) {
        ++pos_;
      }
    } else {
      fail("expected a digit");
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      integral = false;
      ++pos_;
      if (pos_ >= text_.size() || !is_digit(text_[pos_])) {
        fail("expected a digit after '.'");
      }
      while (pos_ < text_.size() && is_digit(text_[pos_])) {
        ++pos_;
      }
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      integral = false;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
        ++pos_;
      }
      if (pos_ >= text_.size() || !is_digit(text_[pos_])) {
        fail("expected a digit in the exponent");
      }
      while (pos_ < text_.size() && is_digit(text_[pos_])) {
        ++pos_;
      }
    }
    const std::string token{text_.substr(start, pos_ - start)};
    Value value;
    if (integral) {
      // Digit by digit, so overflow is detected rather than undefined.
      const bool negative = token[0] == '-';
      std::uint64_t magnitude = 0;
      const std::uint64_t limit =
          negative ? std::uint64_t{9223372036854775808ULL} : std::uint64_t{9223372036854775807ULL};
      for (std::size_t i = negative ? 1 : 0; i < token.size(); ++i) {
        const auto digit = static_cast<std::uint64_t>(token[i] - '0');
        if (magnitude > (limit - digit) / 10) {
          fail("integer " + token + " does not fit in 64 bits");
        }
        magnitude = magnitude * 10 + digit;
      }
      value.type_ = Value::Type::integer;
      value.int_ = negative ? static_cast<std::int64_t>(0 - magnitude)  // two's complement wrap
                            : static_cast<std::int64_t>(magnitude);
      return value;
    }
    value.type_ = Value::Type::floating;
    char* end = nullptr;
    value.double_ = std::strtod(token.c_str(), &end);
    return value;
  }

  unsigned parse_hex4() {
    if (text_.size() - pos_ < 4) {
      fail("truncated \\u escape");
    }
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[pos_++];
      code <<= 4;
      if (h >= '0' && h <= '9') {
        code |= static_cast<unsigned>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        code |= static_cast<unsigned>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        code |= static_cast<unsigned>(h - 'A' + 10);
      } else {
        fail("bad hex digit in \\u escape");
      }
    }
    return code;
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  // At the opening quote; returns the decoded string and leaves pos_ after the closing quote.
  std::string parse_string() {
    ++pos_;
    std::string out;
    for (;;) {
      if (pos_ >= text_.size()) {
        fail("unterminated string");
      }
      const char c = text_[pos_++];
      if (c == '"') {
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        fail("control character in string");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) {
        fail("unterminated escape");
      }
      const char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned code = parse_hex4();
          if (code >= 0xD800 && code <= 0xDBFF) {
            if (!consume("\\u")) {
              fail("lone high surrogate in \\u escape");
            }
            const unsigned low = parse_hex4();
            if (low < 0xDC00 || low > 0xDFFF) {
              fail("bad low surrogate in \\u escape");
            }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          } else if (code >= 0xDC00 && code <= 0xDFFF) {
            fail("lone low surrogate in \\u escape");
          }
          append_utf8(out, code);
          break;
        }
        default: fail(std::string{"bad escape '\\"} + e + "'");
      }
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

inline Value Value::parse(std::string_view text) { return JsonParser{text}.document(); }

// Logging and counters, provided by the host. Cheap to copy; valid for the instance's lifetime.
class Host {
 public:
  Host() = default;
  explicit Host(const exactly_host_api_t* api) : api_(api) {}

  void log(int level, const std::string& message) const {
    if (api_ != nullptr && api_->log != nullptr) {
      api_->log(api_->host_ctx, level, message.c_str());
    }
  }
  void debug(const std::string& message) const { log(EXACTLY_LOG_DEBUG, message); }
  void info(const std::string& message) const { log(EXACTLY_LOG_INFO, message); }
  void warn(const std::string& message) const { log(EXACTLY_LOG_WARN, message); }
  void error(const std::string& message) const { log(EXACTLY_LOG_ERROR, message); }

  // Counters are not transactional: a replayed record counts again.
  void counter_add(const std::string& name, std::uint64_t delta = 1) const {
    if (api_ != nullptr && api_->counter_add != nullptr) {
      api_->counter_add(api_->host_ctx, name.c_str(), delta);
    }
  }

 private:
  const exactly_host_api_t* api_ = nullptr;
};

// The transform's config ([transform.config] in TOML, received as JSON), read-only.
// Getters throw ConfigError naming the key; the SDK turns that into a rejected config.
class Config {
 public:
  // `json` must be an object.
  explicit Config(std::string_view json, Host host = Host{}) : root_(Value::parse(json)), host_(host) {
    if (root_.type() != Value::Type::object) {
      throw ConfigError(std::string{"config must be a JSON object, got "} +
                        Value::type_name(root_.type()));
    }
  }

  bool has(std::string_view key) const { return root_.find(key) != nullptr; }
  const Value* find(std::string_view key) const { return root_.find(key); }
  const Value& root() const { return root_; }
  const Host& host() const { return host_; }

  std::vector<std::string> keys() const {
    std::vector<std::string> names;
    for (const auto& member : root_.as_object()) {
      names.push_back(member.first);
    }
    return names;
  }

  std::string get_string(std::string_view key) const {
    return typed(key, Value::Type::string, "a string").as_string();
  }
  std::string get_string(std::string_view key, std::string fallback) const {
    return has(key) ? get_string(key) : std::move(fallback);
  }
  std::int64_t get_int(std::string_view key) const {
    return typed(key, Value::Type::integer, "an integer").as_int();
  }
  std::int64_t get_int(std::string_view key, std::int64_t fallback) const {
    return has(key) ? get_int(key) : fallback;
  }
  // An integer is accepted where a float is asked for.
  double get_double(std::string_view key) const {
    const Value& value = require(key);
    if (value.type() != Value::Type::floating && value.type() != Value::Type::integer) {
      throw wrong_type(key, "a float", value);
    }
    return value.as_double();
  }
  double get_double(std::string_view key, double fallback) const {
    return has(key) ? get_double(key) : fallback;
  }
  bool get_bool(std::string_view key) const {
    return typed(key, Value::Type::boolean, "a boolean").as_bool();
  }
  bool get_bool(std::string_view key, bool fallback) const {
    return has(key) ? get_bool(key) : fallback;
  }
  std::vector<std::string> get_string_list(std::string_view key) const {
    std::vector<std::string> out;
    for (const Value& item : typed(key, Value::Type::array, "an array of strings").as_array()) {
      if (item.type() != Value::Type::string) {
        throw ConfigError("config key '" + std::string{key} + "' must be an array of strings, " +
                          "got an element that is " + Value::type_name(item.type()));
      }
      out.push_back(item.as_string());
    }
    return out;
  }

 private:
  const Value& require(std::string_view key) const {
    const Value* value = root_.find(key);
    if (value == nullptr) {
      throw ConfigError("config key '" + std::string{key} + "' is missing");
    }
    return *value;
  }
  static ConfigError wrong_type(std::string_view key, const char* expected, const Value& value) {
    return ConfigError("config key '" + std::string{key} + "' must be " + expected + ", got " +
                       Value::type_name(value.type()));
  }
  const Value& typed(std::string_view key, Value::Type type, const char* expected) const {
    const Value& value = require(key);
    if (value.type() != type) {
      throw wrong_type(key, expected, value);
    }
    return value;
  }

  Value root_;
  Host host_;
};

struct Header {
  std::string_view name;
  std::optional<std::string_view> value;  // nullopt: a null value
};

// One input record; every view is borrowed and valid only during process().
class Record {
 public:
  explicit Record(const exactly_record_t& raw) : raw_(raw) {}

  std::string_view topic() const { return view(raw_.topic, raw_.topic_len); }
  std::int32_t partition() const { return raw_.partition; }
  std::int64_t offset() const { return raw_.offset; }
  std::int64_t timestamp_ms() const { return raw_.timestamp_ms; }
  std::optional<std::string_view> key() const {
    if (raw_.key_is_null != 0) {
      return std::nullopt;
    }
    return view(raw_.key, raw_.key_len);
  }
  std::optional<std::string_view> value() const {
    if (raw_.value_is_null != 0) {
      return std::nullopt;
    }
    return view(raw_.value, raw_.value_len);
  }
  std::size_t header_count() const { return raw_.header_count; }
  Header header(std::size_t i) const {
    const exactly_header_t& h = raw_.headers[i];
    return {view(h.name, h.name_len),
            h.value_is_null != 0 ? std::nullopt
                                 : std::optional<std::string_view>{view(h.value, h.value_len)}};
  }
  std::vector<Header> headers() const {
    std::vector<Header> out;
    out.reserve(raw_.header_count);
    for (std::size_t i = 0; i < raw_.header_count; ++i) {
      out.push_back(header(i));
    }
    return out;
  }
  // The first header with this name, if any (the outer optional); its value may be null.
  std::optional<std::optional<std::string_view>> find_header(std::string_view name) const {
    for (std::size_t i = 0; i < raw_.header_count; ++i) {
      const Header h = header(i);
      if (h.name == name) {
        return h.value;
      }
    }
    return std::nullopt;
  }
  const exactly_record_t& raw() const { return raw_; }

 private:
  static std::string_view view(const char* data, std::size_t len) {
    return len == 0 ? std::string_view{} : std::string_view{data, len};
  }
  const exactly_record_t& raw_;
};

// One output record. The views must stay valid until emit() returns; the host copies them.
struct Output {
  std::optional<std::string_view> key;
  std::optional<std::string_view> value;
  std::vector<Header> headers;
  std::optional<std::int32_t> partition;  // nullopt: the pipeline's partitioner decides
};

// The host could not take an output; process() fails with this message.
class EmitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Emitter {
 public:
  explicit Emitter(exactly_emitter_t* raw) : raw_(raw) {}

  void emit(const Output& output) {
    headers_.clear();
    for (const Header& h : output.headers) {
      headers_.push_back(exactly_header_t{h.name.data(), h.name.size(),
                                          h.value ? h.value->data() : nullptr,
                                          h.value ? h.value->size() : 0, h.value ? 0 : 1});
    }
    exactly_output_t out{};
    out.struct_size = sizeof(exactly_output_t);
    out.key = output.key ? output.key->data() : nullptr;
    out.key_len = output.key ? output.key->size() : 0;
    out.key_is_null = output.key ? 0 : 1;
    out.value = output.value ? output.value->data() : nullptr;
    out.value_len = output.value ? output.value->size() : 0;
    out.value_is_null = output.value ? 0 : 1;
    out.headers = headers_.empty() ? nullptr : headers_.data();
    out.header_count = headers_.size();
    out.has_partition = output.partition ? 1 : 0;
    out.partition = output.partition.value_or(0);
    if (raw_->emit(raw_, &out) != 0) {
      throw EmitError("the host refused an output record");
    }
  }

  // Emits the input's key and headers with a new value.
  void emit(const Record& record, std::optional<std::string_view> value) {
    emit(Output{record.key(), value, record.headers(), std::nullopt});
  }

 private:
  exactly_emitter_t* raw_;
  std::vector<exactly_header_t> headers_;
};

class Status {
 public:
  static Status ok() { return Status{EXACTLY_OK, {}}; }
  static Status skip(std::string why = {}) { return Status{EXACTLY_SKIP, std::move(why)}; }
  static Status error(std::string why) { return Status{EXACTLY_ERROR, std::move(why)}; }

  exactly_status_t code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Status(exactly_status_t code, std::string message) : code_(code), message_(std::move(message)) {}
  exactly_status_t code_;
  std::string message_;
};

namespace detail {

// Copies a message into the host's buffer, truncated to fit, always NUL-terminated.
inline void write_error(char* buffer, std::size_t size, const char* message) noexcept {
  if (buffer == nullptr || size == 0) {
    return;
  }
  const std::size_t n = std::min(std::strlen(message), size - 1);
  std::memcpy(buffer, message, n);
  buffer[n] = '\0';
}

// The current exception's message; call only inside a catch block.
inline void write_current_exception(char* buffer, std::size_t size, const char* context) noexcept {
  char message[1024];
  try {
    throw;
  } catch (const std::exception& e) {
    std::snprintf(message, sizeof message, "%s%s", context, e.what());
  } catch (...) {
    std::snprintf(message, sizeof message, "%san exception that is not a std::exception", context);
  }
  write_error(buffer, size, message);
}

template <typename T>
struct Instance {
  explicit Instance(const Config& config) : transform(config) {}
  T transform;
};

template <typename T>
exactly_status_t create(const exactly_config_key_t* keys, const char* json, std::size_t len,
                        const exactly_host_api_t* host, void** instance_out, char* error,
                        std::size_t error_len) noexcept {
  try {
    Config config{std::string_view{json, len}, Host{host}};
    // Only declared keys: a setting meant for something else is an error, not silently ignored.
    for (const auto& member : config.root().as_object()) {
      bool known = false;
      std::string list;
      for (const exactly_config_key_t* k = keys; k != nullptr && k->name != nullptr; ++k) {
        known = known || member.first == k->name;
        list += list.empty() ? "" : ", ";
        list += k->name;
      }
      if (!known) {
        throw ConfigError("unknown config key '" + member.first + "'; " +
                          (list.empty() ? std::string{"this plugin takes no config"}
                                        : "the keys are: " + list));
      }
    }
    *instance_out = new Instance<T>{config};
    return EXACTLY_OK;
  } catch (...) {
    write_current_exception(error, error_len, "");
    return EXACTLY_ERROR;
  }
}

template <typename T>
exactly_status_t process(void* instance, const exactly_record_t* record,
                         exactly_emitter_t* emitter, char* error, std::size_t error_len) noexcept {
  try {
    Record view{*record};
    Emitter out{emitter};
    const Status status = static_cast<Instance<T>*>(instance)->transform.process(view, out);
    if (status.code() != EXACTLY_OK) {
      write_error(error, error_len, status.message().c_str());
    }
    return status.code();
  } catch (...) {
    write_current_exception(error, error_len, "");
    return EXACTLY_ERROR;
  }
}

template <typename T>
void destroy(void* instance) noexcept {
  // A destructor that throws would terminate here rather than unwind into the host.
  delete static_cast<Instance<T>*>(instance);
}

}  // namespace detail
}  // namespace exactly::sdk

// Defines the plugin's entry point for transform class T. The last argument is the list of config
// keys with one-line descriptions, in braces: {{"key", "description"}, ...} or {}.
#define EXACTLY_REGISTER_PLUGIN(T, plugin_name, plugin_version, ...)                              \
  extern "C" EXACTLY_PLUGIN_EXPORT const exactly_plugin_descriptor_t* EXACTLY_PLUGIN_ENTRY(void) { \
    try {                                                                                          \
      static const std::vector<exactly_config_key_t> keys = [] {                                   \
        std::vector<exactly_config_key_t> list = __VA_ARGS__;                                      \
        list.push_back(exactly_config_key_t{nullptr, nullptr});                                    \
        return list;                                                                               \
      }();                                                                                         \
      static const exactly_plugin_descriptor_t descriptor{                                         \
          sizeof(exactly_plugin_descriptor_t),                                                     \
          EXACTLY_PLUGIN_ABI_VERSION,                                                              \
          plugin_name,                                                                             \
          plugin_version,                                                                          \
          keys.data(),                                                                             \
          [](const char* json, std::size_t len, const exactly_host_api_t* host, void** out,        \
             char* error, std::size_t error_len) noexcept {                                        \
            return ::exactly::sdk::detail::create<T>(keys.data(), json, len, host, out, error,     \
                                                     error_len);                                   \
          },                                                                                       \
          &::exactly::sdk::detail::process<T>,                                                     \
          &::exactly::sdk::detail::destroy<T>,                                                     \
      };                                                                                           \
      return &descriptor;                                                                          \
    } catch (...) {                                                                                \
      return nullptr;                                                                              \
    }                                                                                              \
  }
