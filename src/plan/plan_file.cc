#include "plan/plan_file.h"

#include <filesystem>

#include "catalog/catalog.h"
#include "common/error.h"

namespace fs = std::filesystem;

namespace quarkplan {

LoadedPlan load_plan_file(const std::string& path) {
  LoadedPlan lp;
  lp.plan = read_json_file(path, 64ull << 20);
  auto errors = validate_against_schema(lp.plan, "schemas/quant_plan.schema.json");
  if (!errors.empty()) throw InputError(path, "is not a valid quant_plan: " + errors.front(), errors);
  load_plan_analysis(lp, path);
  return lp;
}

void load_plan_analysis(LoadedPlan& lp, const std::string& plan_path) {
  lp.analysis = nullptr;
  const Json& model = lp.plan["model"];
  if (!model.is_object() || !model.contains("analysis_ref") || !model["analysis_ref"].is_string()) {
    lp.analysis_note = "The plan names no analysis (model.analysis_ref), so the model facts are not shown.";
    return;
  }
  fs::path ref = model["analysis_ref"].get<std::string>();
  fs::path base = fs::path(plan_path).parent_path();
  fs::path full = ref.is_absolute() ? ref : (base.empty() ? fs::path(".") : base) / ref;
  lp.analysis_path = full.lexically_normal().string();
  std::error_code ec;
  if (!fs::is_regular_file(full, ec)) {
    lp.analysis_note = "The analysis " + ref.string() + " the plan points to was not found next to it, so the model facts are not shown.";
    return;
  }
  try {
    Json a = read_json_file(full.string(), 256ull << 20);
    auto errors = validate_against_schema(a, "schemas/model_analysis.schema.json");
    if (!errors.empty()) {
      lp.analysis_note = "The analysis at " + lp.analysis_path + " is not a valid model_analysis (" + errors.front() + "), so the model facts are not shown.";
      return;
    }
    lp.analysis = std::move(a);
  } catch (const InputError& e) {
    lp.analysis_note = std::string("The analysis could not be read (") + e.what() + "), so the model facts are not shown.";
  }
}

}  // namespace quarkplan
