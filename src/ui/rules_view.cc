#include "ui/rules_view.h"

#include <algorithm>

#include "ui/decision_table.h"
#include "ui/markdown.h"

namespace quarkplan::ui {

std::string render_rule_doc(const RuleDoc& d, const Style& st, int width_in) {
  size_t width = static_cast<size_t>(std::max(40, width_in));
  // verify's checks are grouped together; their ID names the flow.
  std::string flow_name = d.kind == "verify" ? (d.id.rfind("verify.onnx.", 0) == 0 ? "ONNX" : d.id.rfind("verify.torch.", 0) == 0 ? "Torch" : "ONNX and Torch")
                          : d.flow == "onnx" ? "ONNX"
                                             : "Torch";
  std::string out = st.bold(d.id) +
                    (d.flow.empty() ? "" : "  (" + flow_name + (d.kind == "intake" ? " intake check)" : d.kind == "verify" ? " export check)" : " plans)")) + "\n";
  for (const auto& l : wrap(d.purpose, width - 2)) out += "  " + l + "\n";
  const std::pair<const char*, const std::string*> sections[] = {
      {"Decides", &d.decides}, {"Fires when", &d.fires_when}, {"Follows", &d.follows}, {"Example", &d.example}};
  for (const auto& [title, body] : sections) {
    if (body->empty()) continue;
    out += "\n  " + st.bold(title) + "\n";
    out += markdown_to_text(*body, st, width, 4);
  }
  return out;
}

std::string render_rule_docs(const std::vector<RuleDoc>& docs, const Style& st, int width) {
  std::string out, flow;
  for (const auto& d : docs) {
    if (d.flow != flow) {
      flow = d.flow;
      out += (out.empty() ? "" : "\n") +
             st.bold(d.kind == "verify" ? "Checks of `quarkplan verify` (an export against its plan)"
                     : flow == "onnx"   ? "Intake checks and rules of ONNX plans"
                                        : "Intake checks and rules of Torch (Hugging Face LLM) plans") +
             "\n\n";
    } else {
      out += "\n";
    }
    out += render_rule_doc(d, st, width);
  }
  return out;
}

Json rule_docs_json(const std::vector<RuleDoc>& docs) {
  Json rules = Json::array();
  for (const auto& d : docs)
    rules.push_back({{"id", d.id},
                     {"flow", d.flow},
                     {"kind", d.kind},
                     {"purpose", d.purpose},
                     {"decides", d.decides},
                     {"fires_when", d.fires_when},
                     {"follows", d.follows},
                     {"example", d.example}});
  return {{"rules", rules}};
}

}  // namespace quarkplan::ui
