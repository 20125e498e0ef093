#include "check/line.h"

#include <algorithm>

#include <fmt/format.h>

namespace exactly::check {

std::string format(const Line& line) {
  const char* tag = line.status == Status::pass   ? "pass"
                    : line.status == Status::warn ? "warn"
                                                  : "fail";
  return fmt::format("[{}] {}", tag, line.text);
}

bool any_failed(const std::vector<Line>& lines) {
  return std::any_of(lines.begin(), lines.end(),
                     [](const Line& l) { return l.status == Status::fail; });
}

}  // namespace exactly::check
