// libFuzzer target: the JSON built-ins (json-filter, json-project, payment-enricher), created and
// run through the same C ABI adapter as a loaded plugin. The input is one selector byte (which
// transform), the transform's config as TOML, a NUL byte, then the record's value. Whatever the
// bytes, creation fails with a message or succeeds, and processing returns ok, skip or an error
// with a message; an ok record emits valid JSON; nothing crashes, leaks or throws. And for any
// value, the enricher's flat path either declines or writes the general path's bytes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "transforms/payment_enricher.h"
#include "transforms/transform.h"

namespace {

using namespace exactly::transforms;

void expect(bool holds, const char* what) {
  if (!holds) {
    std::fprintf(stderr, "fuzz_transforms: broken invariant: %s\n", what);
    std::abort();
  }
}

struct Collect final : Emitter {
  std::vector<std::optional<std::string>> values;
  void emit(const OutputView& output) override {
    values.emplace_back(output.value ? std::optional<std::string>{std::string{*output.value}}
                                     : std::nullopt);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static constexpr std::array<std::string_view, 3> names{"json-filter", "json-project",
                                                         "payment-enricher"};
  if (size < 1) return 0;
  const std::string_view name = names[data[0] % names.size()];
  const std::string_view rest{reinterpret_cast<const char*>(data + 1), size - 1};
  const auto nul = rest.find('\0');
  if (nul == std::string_view::npos) return 0;
  const std::string_view config_text = rest.substr(0, nul);
  const std::string_view value = rest.substr(nul + 1);

  try {
    const PaymentEnricher::Config defaults;
    std::string flat;
    std::string general;
    if (PaymentEnricher::enrich_flat(value, defaults, flat)) {
      const Status status = PaymentEnricher::enrich_general(value, defaults, general);
      expect(status.code == StatusCode::ok, "the flat path enriched what the general one refuses");
      expect(flat == general, "the flat path wrote other bytes than the general one");
    }
  } catch (...) {
    expect(false, "the enricher threw");
  }

  toml::table config;
  try {
    config = toml::parse(config_text, std::string_view{"fuzz.toml"});
  } catch (const toml::parse_error&) {
    return 0;  // not TOML: the config loader's fuzzer covers that
  }
  try {
    CreateResult created = create_builtin(name, config);
    if (!created.transform) {
      expect(!created.error.empty(), "creation failed without a message");
      return 0;
    }
    const std::array<Header, 1> headers{Header{"h", std::string_view{"v"}}};
    const RecordView record{"input", 0, 42, 1700000000000, std::string_view{"key"}, value, headers};
    Collect out;
    const Status status = created.transform->process(record, out);
    if (status.code == StatusCode::error) {
      expect(!status.message.empty(), "an error without a message");
      expect(out.values.empty(), "an error that emitted records");
    }
    if (status.code == StatusCode::ok) {
      for (const auto& v : out.values) {
        expect(v.has_value(), "a JSON built-in emitted a null value");
        expect(nlohmann::json::accept(*v), "a JSON built-in emitted invalid JSON");
      }
    }
  } catch (...) {
    expect(false, "a transform threw");
  }
  return 0;
}
