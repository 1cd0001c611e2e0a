#pragma once
// One section of `ridge plan`'s report: a title, a table, notes; the same as JSON. Internal to the
// report files (plan_report*.cc).
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "plan/plan_report.h"
#include "plan/table.h"

namespace ridge::plan {

struct ReportSection {
  ReportSection(std::string name_, std::string title_) : name(std::move(name_)), title(std::move(title_)) {}

  std::string name;   // "decode": the --section key and the JSON key
  std::string title;  // "Decode versus batch (context 8192)"
  TextTable table{{}};
  std::vector<std::pair<std::string, TextTable>> more_tables;  // further tables after the first, each under its heading
  std::vector<std::string> notes;
  nlohmann::json json = nlohmann::json::object();

  std::string render() const;
};

// Sections on the scaling side (plan_report_scaling.cc).
ReportSection parallel_section(const PlanInputs& in, const PlanOptions& o);
ReportSection moe_section(const PlanInputs& in, const PlanOptions& o);
ReportSection disagg_section(const PlanInputs& in, const PlanOptions& o);
ReportSection speculative_section(const PlanInputs& in, const PlanOptions& o);
ReportSection gemm_section(const PlanInputs& in, const PlanOptions& o);

}  // namespace ridge::plan
