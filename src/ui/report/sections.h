// The report page's parts, each a whole HTML <section>, and its style and
// script; render_report (src/ui/report.cc) assembles them. Internal to src/ui/report/.
#pragma once
#include <string>

#include "common/json.h"
#include "ui/report.h"

namespace quarkplan::ui::report_detail {

// ---- Sections.

// model_card.cc: the model card and what intake found.
std::string model_card(const ReportInput& in);

// decisions_and_risks.cc: the decision table; the risks and open questions.
std::string decision_section(const Json& plan);
std::string risks_section(const Json& plan);

// size_and_fit_charts.cc: weight size per scheme; memory fit.
std::string size_chart(const Json& plan);
std::string fit_chart(const Json& plan);

// what_gets_quantized.cc: Torch layers or ONNX operators.
std::string torch_layers(const Json& plan, const Json& analysis, const std::string& catalog_dir);
std::string onnx_ops(const Json& plan, const Json& analysis, const std::string& catalog_dir);

// weight_outliers.cc: weight outliers per layer.
std::string weight_stats(const Json& plan, const Json& analysis);

// invocation_and_rules.cc: the Quark invocation; the rules the plan cites.
std::string invocation_section(const ReportInput& in);
std::string rules_section();

// verification.cc: verify's result (report --verify), from its JSON; empty when null.
std::string verification_section(const Json& verification);

// page_style.cc: the page's CSS and JavaScript.
extern const char* kStyle;
extern const char* kScript;

}  // namespace quarkplan::ui::report_detail
