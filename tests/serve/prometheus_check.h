#pragma once
// A strict reader of the Prometheus text format for the tests: each line must be a HELP, TYPE or
// sample line; samples are kept by their full series name ("name{labels}").
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace ridge::testing {

struct Exposition {
  std::map<std::string, double> samples;     // "name{labels}" -> value, in text order of keys
  std::vector<std::string> sample_order;     // series as written
  std::map<std::string, std::string> types;  // family -> counter|gauge|histogram
  std::vector<std::string> bad_lines;
};

inline Exposition parse_exposition(const std::string& text) {
  static const std::regex help(R"(# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*)");
  static const std::regex type(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  static const std::regex sample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")*\})?) ([-+]?([0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?|Inf)|NaN))");
  Exposition out;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, help)) continue;
    if (std::regex_match(line, m, type)) {
      out.types[m[1]] = m[2];
    } else if (std::regex_match(line, m, sample)) {
      const std::string v = m[7];
      out.samples[m[1]] = v == "+Inf" || v == "Inf" ? 1e300 : v == "-Inf" ? -1e300 : v == "NaN" ? 0 : std::stod(v);
      out.sample_order.push_back(m[1]);
    } else {
      out.bad_lines.push_back(line);
    }
  }
  return out;
}

// The bucket counts of a histogram in the order written, each checked to be cumulative.
inline std::vector<double> histogram_buckets(const Exposition& e, const std::string& name, bool* cumulative) {
  std::vector<double> counts;
  *cumulative = true;
  for (const auto& series : e.sample_order) {
    if (series.rfind(name + "_bucket{", 0) != 0) continue;
    const double c = e.samples.at(series);
    if (!counts.empty() && c < counts.back()) *cumulative = false;
    counts.push_back(c);
  }
  return counts;
}

}  // namespace ridge::testing
