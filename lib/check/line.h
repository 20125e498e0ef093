// One finding of `exactly check`: pass, warn or fail, with what was found and what to change.
#pragma once

#include <string>
#include <vector>

namespace exactly::check {

enum class Status { pass, warn, fail };

struct Line {
  Status status = Status::pass;
  std::string text;
};

// "[pass] text", "[warn] text", "[fail] text"
std::string format(const Line& line);

bool any_failed(const std::vector<Line>& lines);

}  // namespace exactly::check
