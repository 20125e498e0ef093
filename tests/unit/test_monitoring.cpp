// The shipped monitoring (config/grafana/exactly-dashboard.json, config/prometheus/
// exactly-rules.yaml) names only metrics the service exports, so a renamed metric cannot leave a
// dashboard panel or an alert silently empty.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "ops/metrics.h"

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Metric families the service exports ("# TYPE name kind" lines).
std::set<std::string> exported() {
  exactly::ops::Metrics metrics;
  metrics.add_partition("t", 0);
  metrics.error(exactly::ops::ErrorKind::other, exactly::ops::ErrorAction::stop);  // series on first use
  std::set<std::string> names;
  std::istringstream lines(metrics.serialize());
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) names.insert(line.substr(7, line.find(' ', 7) - 7));
  }
  return names;
}

// exactly_* names used in `text`, with histogram suffixes reduced to the family.
std::set<std::string> used(const std::string& text) {
  std::set<std::string> names;
  static const std::regex name{R"(exactly_[a-z_]+)"};
  for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator();
       ++it) {
    std::string n = it->str();
    for (const char* suffix : {"_bucket", "_count", "_sum"}) {
      const std::string s{suffix};
      if (n.size() > s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0) {
        n.resize(n.size() - s.size());
      }
    }
    names.insert(n);
  }
  return names;
}

}  // namespace

TEST_CASE("the Grafana dashboard is valid JSON and uses only exported metrics") {
  const auto families = exported();
  REQUIRE(families.count("exactly_transactions_committed_total") == 1);
  const auto dashboard =
      nlohmann::json::parse(read(EXACTLY_SOURCE_DIR "/config/grafana/exactly-dashboard.json"));
  std::string exprs;
  for (const auto& panel : dashboard.at("panels")) {
    CHECK_FALSE(panel.at("title").get<std::string>().empty());
    for (const auto& target : panel.at("targets")) exprs += target.at("expr").get<std::string>() + "\n";
  }
  const auto names = used(exprs);
  CHECK(names.size() >= 15);
  for (const auto& n : names) {
    CAPTURE(n);
    CHECK(families.count(n) == 1);
  }
}

TEST_CASE("the alert rules use only exported metrics") {
  const auto families = exported();
  const auto names = used(read(EXACTLY_SOURCE_DIR "/config/prometheus/exactly-rules.yaml"));
  CHECK(names.size() >= 7);
  for (const auto& n : names) {
    CAPTURE(n);
    CHECK(families.count(n) == 1);
  }
}

TEST_CASE("the README lists every exported metric") {
  const std::string readme = read(EXACTLY_SOURCE_DIR "/README.md");
  for (const auto& n : exported()) {
    CAPTURE(n);
    CHECK(readme.find("`" + n + "`") != std::string::npos);
  }
}
