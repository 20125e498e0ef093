// Building a librdkafka configuration from ordered properties, refusing any it rejects.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace exactly::kafka {

using Properties = std::vector<std::pair<std::string, std::string>>;

}  // namespace exactly::kafka
