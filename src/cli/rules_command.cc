// `quarkplan rules [ID] [--json]`: the documentation of the rules a plan
// cites (docs/rules/<rule-id>.md, embedded at build time). An ID shows one
// rule; a prefix such as `onnx.calibration` or `torch` shows the rules under it.
#include <cstdio>

#include "cli/commands.h"
#include "cli/guarded.h"
#include "common/error.h"
#include "common/strings.h"
#include "plan/rule_docs.h"
#include "plan/rules.h"
#include "ui/rules_view.h"
#include "ui/terminal.h"
#include "verify/verify.h"

namespace quarkplan {

int run_rules_command(const RulesArgs& a) {
  return guarded(a.json, [&] {
    std::vector<RuleDoc> all = rule_docs();
    // verify's checks, from their one table (verify/checks.cc), after the rules.
    for (const auto& c : verify::check_table()) {
      RuleDoc d;
      d.id = c.id;
      d.flow = "verify";  // one group in the listing; the ID names the flow
      d.kind = "verify";
      d.purpose = c.purpose;
      d.decides = "Whether the export keeps this promise of the plan; what breaks it is listed module by module (or node by node), grouped when many break it the same way.";
      d.example = "```sh\nquarkplan verify quant_plan.json " + std::string(c.flow == std::string("onnx") ? "model_quantized.onnx" : "exported_model/") + " --json\n```";
      d.fires_when = "`quarkplan verify PLAN OUTPUT` and `quarkplan report PLAN --verify OUTPUT`: kept, BROKEN (each offender named with what the plan says and what the export holds), or n/a with the reason.";
      d.follows = std::string("What Quark's exporters write: ") +
                  (c.flow == std::string("onnx") ? "`catalog/onnx.json` `qdq_layout` (read from quark.onnx's QDQ quantizer)"
                                                  : "`catalog/torch.json` `hf_export` (read from `quark/torch/export/` and vLLM's Quark loader)") +
                  "; the README's \"Verifying an export\" section lists every check.";
      all.push_back(std::move(d));
    }
    std::vector<RuleDoc> chosen;
    for (const auto& d : all)
      if (a.id.empty() || d.id == a.id || d.id.rfind(a.id + ".", 0) == 0) chosen.push_back(d);
    if (chosen.empty()) {
      if (documented_purpose(a.id)) throw std::runtime_error("rule " + a.id + " has no documentation");
      std::vector<std::string> ids = documented_ids();
      for (const auto& c : verify::check_table()) ids.push_back(c.id);
      throw UsageError("there is no rule '" + a.id + "'" + did_you_mean(a.id, ids) + "; run 'quarkplan rules' to see them all.");
    }
    if (a.json) {
      std::fputs(dump_json(ui::rule_docs_json(chosen)).c_str(), stdout);
      return kExitOk;
    }
    ui::Style st{ui::use_color(stdout)};
    int width = ui::terminal_width(stdout);
    std::fputs((chosen.size() == 1 ? ui::render_rule_doc(chosen[0], st, width) : ui::render_rule_docs(chosen, st, width)).c_str(), stdout);
    return kExitOk;
  });
}

}  // namespace quarkplan
