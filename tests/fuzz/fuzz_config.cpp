// libFuzzer target: the config loader. The input is TOML text, optionally followed by a NUL byte
// and `--set` overrides, one per line. Whatever the bytes, loading returns either a Config that
// satisfies the loader's own rules or at least one problem with a place and a message; it never
// crashes, hangs, leaks or throws.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace {

void expect(bool holds, const char* what) {
  if (!holds) {
    std::fprintf(stderr, "fuzz_config: broken invariant: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input{reinterpret_cast<const char*>(data), size};
  const auto nul = input.find('\0');
  const std::string_view toml_text = input.substr(0, nul);
  std::vector<std::string> overrides;
  if (nul != std::string_view::npos) {
    std::string_view rest = input.substr(nul + 1);
    while (!rest.empty() && overrides.size() < 16) {
      const auto end = rest.find('\n');
      overrides.emplace_back(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    }
  }
  try {
    const auto result = exactly::config::load_string(toml_text, "fuzz.toml", overrides);
    if (result.config) {
      expect(result.problems.empty(), "a config comes with problems");
      const auto& c = *result.config;
      expect(!c.pipeline.input_topic.empty() && !c.pipeline.output_topic.empty(),
             "a config without its topics");
      expect(!c.kafka.bootstrap_servers.empty(), "a config without bootstrap servers");
      expect(c.transactions.commit_interval < c.transactions.timeout,
             "commit interval not below the transaction timeout");
      expect(c.transactions.max_records > 0 && c.transactions.max_bytes > 0,
             "a transaction bound that is not positive");
      expect(c.pipeline.on_error != exactly::config::OnError::dlq || !c.pipeline.dlq_topic.empty(),
             "on_error dlq without a dead-letter topic");
    } else {
      expect(!result.problems.empty(), "no config and no problem");
      for (const auto& p : result.problems) {
        expect(!p.where.empty() && !p.message.empty(), "a problem without place or message");
      }
      expect(!exactly::config::format_problems(result.problems).empty(), "empty problem text");
    }
  } catch (...) {
    expect(false, "load_string threw");
  }
  return 0;
}
