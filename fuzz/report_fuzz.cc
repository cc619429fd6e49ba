// libFuzzer target for `quarkplan report`: any JSON that validates as a plan
// (or as an analysis beside a fixed plan) renders to a page without throwing,
// and the Markdown of the rule documentation renders from any bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/json.h"
#include "plan/rule_docs.h"
#include "ui/markdown.h"
#include "ui/report.h"

namespace {

const char* kPlan = R"({"model": {"model_type": "llama", "analysis_ref": "./model_analysis.json"}, "backend": "torch",
 "global_scheme": "fp8", "kv_cache_scheme": null, "exclude_layers": ["lm_head"], "layer_quant_config": {}, "algorithm": null,
 "calibration": {"dataset": "pileval", "num_calib_data": 128, "seq_len": 512}, "evaluation_intent": "smoke",
 "requires_confirmation": false, "risks": [], "reasons": {"global_scheme": "x [torch.scheme.choose]"}, "open_questions": []})";

void render(const quarkplan::Json& plan, const quarkplan::Json& analysis) {
  quarkplan::ui::ReportInput in;
  in.plan = plan;
  in.analysis = analysis;
  in.plan_path = "quant_plan.json";
  in.tool_version = "fuzz";
  quarkplan::ui::render_report(in);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  quarkplan::ui::markdown_to_html(text);
  std::vector<std::string> problems;
  quarkplan::parse_rule_doc(text, "fuzz.md", problems);
  quarkplan::Json j;
  try {
    j = quarkplan::parse_json(text, "fuzz.json");
  } catch (const quarkplan::InputError&) {
    return 0;
  }
  // What the report command accepts: a schema-valid plan; an analysis that
  // does not validate is not shown.
  if (quarkplan::validate_against_schema(j, "schemas/quant_plan.schema.json").empty()) render(j, nullptr);
  if (quarkplan::validate_against_schema(j, "schemas/model_analysis.schema.json").empty()) render(quarkplan::Json::parse(kPlan), j);
  return 0;
}
