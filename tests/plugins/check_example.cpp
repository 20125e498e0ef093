// Loads the example plugin built by build_example.sh through the real loader and runs one record,
// so the installed SDK is proven to produce a plugin this exactly accepts.
#include <cstdio>
#include <string>

#include <toml++/toml.h>

#include "plugin/loader.h"

namespace {

class Capture final : public exactly::transforms::Emitter {
 public:
  void emit(const exactly::transforms::OutputView& output) override {
    value = output.value ? std::string{*output.value} : "(null)";
  }
  std::string value;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
    return 2;
  }
  const auto described = exactly::plugin::describe(argv[1]);
  if (!described.info) {
    std::fprintf(stderr, "%s\n", described.error.c_str());
    return 1;
  }
  std::printf("%s %s (ABI %u)\n", described.info->name.c_str(), described.info->version.c_str(),
              described.info->abi_version);
  auto created = exactly::plugin::load(argv[1], toml::parse("prefix = '> '"));
  if (!created.transform) {
    std::fprintf(stderr, "%s\n", created.error.c_str());
    return 1;
  }
  exactly::transforms::RecordView record;
  record.topic = "in";
  record.value = "hello, World";
  Capture out;
  const auto status = created.transform->process(record, out);
  if (status.code != exactly::transforms::StatusCode::ok || out.value != "> HELLO, WORLD") {
    std::fprintf(stderr, "unexpected output '%s' (%s)\n", out.value.c_str(), status.message.c_str());
    return 1;
  }
  std::printf("ok: %s\n", out.value.c_str());
  return 0;
}
