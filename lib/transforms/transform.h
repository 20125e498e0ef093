// The transform interface: what the engine calls for every input record.
//
// It mirrors the C plugin ABI (<exactly/plugin.h>), which wraps it (lib/plugin/adapter.h): a read-only view of the input whose buffers are
// borrowed for the duration of one call, an emitter that copies what it is given, and a status.
//
// process() may run again for the same record after a transaction aborts (the engine rewinds the
// partition and replays the range), so it must be deterministic and must not have side effects
// outside the transaction.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

namespace exactly::transforms {

struct Header {
  std::string_view name;
  std::optional<std::string_view> value;  // nullopt: a header with a null value
};

// A read-only view of one input record. Every view points into the consumer's message buffer and
// is valid only during the process() call that receives it.
struct RecordView {
  std::string_view topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::int64_t timestamp_ms = -1;           // -1 when the record carries none
  std::optional<std::string_view> key;      // nullopt: a null key
  std::optional<std::string_view> value;    // nullopt: a null value (tombstone)
  std::span<const Header> headers;
};

// One output record. The emitter copies it, so the views only need to outlive the emit() call.
struct OutputView {
  std::optional<std::string_view> key;
  std::optional<std::string_view> value;
  std::span<const Header> headers;
  std::optional<std::int32_t> partition;    // nullopt: the pipeline's partitioning decides
};

class Emitter {
 public:
  virtual ~Emitter() = default;
  virtual void emit(const OutputView& output) = 0;
};

enum class StatusCode { ok, skip, error };

struct Status {
  StatusCode code = StatusCode::ok;
  std::string message;  // why, when code is error (or skip, optionally)

  static Status ok() { return {}; }
  static Status skip(std::string why = {}) { return {StatusCode::skip, std::move(why)}; }
  static Status error(std::string why) { return {StatusCode::error, std::move(why)}; }
};

class Transform {
 public:
  virtual ~Transform() = default;
  // Called for every input record, in offset order within a partition.
  virtual Status process(const RecordView& record, Emitter& out) = 0;
};

// Why a transform could not be created: the message names the offending key.
struct CreateResult {
  std::unique_ptr<Transform> transform;
  std::string error;
};

// Creates a built-in transform by name from its own config table ([transform.config]).
// An unknown name is an error that lists the known ones.
// Defined in lib/plugin/builtins.cpp (link exactly::plugin, or exactly::core): every built-in is a
// C ABI descriptor there and runs through the same adapter as a loaded plugin.
CreateResult create_builtin(std::string_view name, const toml::table& config);

// Names of the built-in transforms, sorted.
std::vector<std::string> builtin_names();

}  // namespace exactly::transforms
