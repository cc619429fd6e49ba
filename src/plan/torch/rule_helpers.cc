// The Torch rules' shared helpers (rule_helpers.h).
#include <algorithm>
#include <stdexcept>

#include "intake/module_names.h"
#include "plan/torch/rule_helpers.h"

namespace quarkplan {


namespace torch_rules {
namespace detail {

const Json& model(const PlanState& s) { return s.analysis["model"]; }
const Json* intake_risk(const PlanState& s, const char* rule) {
  if (!s.analysis.contains("risks") || !s.analysis["risks"].is_array()) return nullptr;
  for (const auto& r : s.analysis["risks"])
    if (r.is_object() && r.value("rule", std::string()) == rule) return &r;
  return nullptr;
}
std::string model_type(const PlanState& s) { return model(s)["model_type"]; }
const Json* tmpl(const PlanState& s) { return s.cat.torch_template(model_type(s)); }
const Json* scheme(const PlanState& s) {
  return s.plan["global_scheme"].is_string() ? s.cat.torch_scheme(s.plan["global_scheme"]) : nullptr;
}
std::string hw_name(const PlanState& s) { return s.accelerator ? (*s.accelerator)["name"].get<std::string>() : ""; }
std::vector<std::string> scheme_names(const PlanState& s) {
  std::vector<std::string> v;
  for (const auto& x : s.cat.torch()["schemes"]) v.push_back(x["name"]);
  for (auto& [k, x] : s.cat.torch()["scheme_aliases"].items()) v.push_back(k);
  return v;
}
std::vector<std::string> algorithms_of(const PlanState& s) {
  std::vector<std::string> v;
  if (!s.plan["algorithm"].is_string()) return v;
  std::string a = s.plan["algorithm"], cur;
  for (char c : a + ",")
    if (c == ',') {
      if (!cur.empty()) v.push_back(cur);
      cur.clear();
    } else cur += c;
  return v;
}
bool has_algorithm(const PlanState& s, std::initializer_list<const char*> names) {
  auto algos = algorithms_of(s);
  for (const char* n : names)
    if (std::count(algos.begin(), algos.end(), n)) return true;
  return false;
}
std::string support(const PlanState& s, const std::string& family) {
  if (!s.accelerator) return "";
  const Json& sup = (*s.accelerator)["support"];
  return sup.contains(family) ? sup[family].get<std::string>() : "emulated";
}
std::string support_of(const PlanState& s, const std::string& scheme_name) {
  const Json* sc = s.cat.torch_scheme(scheme_name);
  return sc ? support(s, (*sc)["family"]) : "";
}
bool is_int4_weight_only(const Json* sc) {
  return sc && ((*sc)["family"] == "int4_wo" || (*sc)["family"] == "uint4_wo");
}
std::string export_key(const PlanState& s) {
  std::string e = s.req.export_format.empty() ? "hf" : s.req.export_format;
  if (const Json* c = s.choice("export_format"); c && c->is_string()) e = *c == "hf_format" ? "hf" : c->get<std::string>();
  return e;
}

}  // namespace detail
}  // namespace torch_rules
}  // namespace quarkplan
