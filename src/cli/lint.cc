// ridge lint MODEL: a model's shapes against the hardware-friendly design guidelines (dimensions
// aligned to GPU tiles, near-square matrices, width versus depth, even pipeline stages, TP and KV
// heads). Prints each finding with the numbers behind it; --json for machines; --strict fails on warnings.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "plan/lint.h"
#include "plan/model_source.h"
#include "plan/table.h"

namespace ridge::cli {
namespace {

struct LintArgs {
  std::string model = "default";
  bool json = false;
  bool strict = false;
};

void run_lint(const LintArgs& a) {
  const plan::PlanModel model = plan::resolve_plan_model(a.model);
  const auto findings = plan::lint_model(model.spec);
  int warnings = 0;
  for (const auto& f : findings) warnings += f.level == plan::LintLevel::Warn;
  if (a.json) {
    nlohmann::json j = {{"model", model.spec.name}, {"source", model.source}, {"warnings", warnings}};
    j["findings"] = nlohmann::json::array();
    for (const auto& f : findings)
      j["findings"].push_back({{"level", plan::lint_level_name(f.level)}, {"check", f.check}, {"value", f.value}, {"message", f.message}});
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("## ridge lint: %s (%s)\n", model.spec.name.c_str(), model.source.c_str());
    plan::TextTable t({"level", "check", "numbers", "finding"});
    for (const auto& f : findings) t.add_row({std::string(plan::lint_level_name(f.level)), f.check, f.value, f.message});
    std::fputs(t.render().c_str(), stdout);
    std::printf("  %d warning(s), %zu checks\n", warnings, findings.size());
  }
  if (a.strict && warnings > 0) fail("{} lint warning(s)", warnings);
}

}  // namespace

void add_lint_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("lint", "Check a model's shapes against hardware-friendly design guidelines");
  auto a = std::make_shared<LintArgs>();
  cmd->add_option("model", a->model, "named shape, GGUF file, 'default', config.json, or checkpoint dir")->capture_default_str();
  cmd->add_flag("--json", a->json, "print JSON");
  cmd->add_flag("--strict", a->strict, "exit with an error when there are warnings");
  cmd->callback([a] { run_lint(*a); });
}

}  // namespace ridge::cli
