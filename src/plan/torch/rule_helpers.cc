// The Torch rules' shared helpers (rule_helpers.h), and the PlanState accessors for
// the model's Linear modules and which of them the plan excludes (estimates.cc reads them too).
#include <algorithm>
#include <stdexcept>

#include "intake/module_names.h"
#include "plan/torch/rule_helpers.h"

namespace quarkplan {

const std::vector<std::string>& PlanState::modules() {
  if (!modules_loaded) {
    modules_loaded = true;
    const Json& q = analysis["quantization_targets"];
    if (q.contains("module_names") && q["module_names"].is_array()) {
      const Json& names = q["module_names"];
      const Json* shapes = q.contains("module_shapes") && q["module_shapes"].is_array() ? &q["module_shapes"] : nullptr;
      const Json* roles = q.contains("module_roles") && q["module_roles"].is_array() ? &q["module_roles"] : nullptr;
      for (size_t i = 0; i < names.size(); ++i) {
        if (!names[i].is_string()) continue;
        std::vector<std::string> expanded;
        try {
          expanded = expand_module_names({names[i].get<std::string>()}, 4000000 - std::min<size_t>(module_names.size(), 4000000));
        } catch (const std::invalid_argument& e) {
          error(std::string("the analysis' module names are malformed: ") + e.what());
          module_names.clear();
          module_shapes.clear();
          module_roles.clear();
          return module_names;
        }
        std::pair<uint64_t, uint64_t> shape{0, 0};
        if (shapes && i < shapes->size() && (*shapes)[i].is_array() && (*shapes)[i].size() == 2 && (*shapes)[i][0].is_number_unsigned() &&
            (*shapes)[i][1].is_number_unsigned())
          shape = {(*shapes)[i][0].get<uint64_t>(), (*shapes)[i][1].get<uint64_t>()};
        std::string role = roles && i < roles->size() && (*roles)[i].is_string() ? (*roles)[i].get<std::string>() : "";
        for (auto& n : expanded) {
          module_names.push_back(std::move(n));
          module_shapes.push_back(shape);
          module_roles.push_back(role);
        }
      }
    }
  }
  return module_names;
}

const std::vector<char>& PlanState::excluded() {
  const auto& mods = modules();
  const Json& list = plan.contains("exclude_layers") ? plan["exclude_layers"] : Json::array();
  if (excluded_cache.size() == mods.size() && excluded_for == list) return excluded_cache;
  std::vector<QuarkPattern> excl;
  for (const auto& p : list)
    if (p.is_string()) excl.emplace_back(p.get<std::string>());
  excluded_cache.assign(mods.size(), 0);
  for (size_t i = 0; i < mods.size(); ++i)
    for (const auto& p : excl)
      if (p.matches(mods[i])) {
        excluded_cache[i] = 1;
        break;
      }
  excluded_for = list;
  return excluded_cache;
}

namespace torch_rules {
namespace detail {

const Json& model(const PlanState& s) { return s.analysis["model"]; }
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
