#include "engine/emitter.h"

namespace exactly::engine {
namespace {

void assign(std::optional<std::string>& to, const std::optional<std::string_view>& from) {
  if (!from) {
    to.reset();
  } else if (to) {
    to->assign(*from);
  } else {
    to.emplace(*from);
  }
}

}  // namespace

void BufferedEmitter::emit(const transforms::OutputView& output) {
  if (count_ == outputs_.size()) outputs_.emplace_back();
  BufferedOutput& out = outputs_[count_++];
  assign(out.key, output.key);
  assign(out.value, output.value);
  out.partition = output.partition;
  out.headers.resize(output.headers.size());
  for (std::size_t i = 0; i < output.headers.size(); ++i) {
    out.headers[i].first.assign(output.headers[i].name);
    assign(out.headers[i].second, output.headers[i].value);
  }
}

}  // namespace exactly::engine
