// PlanState's lazily built views of the analysis: the model's Linear modules
// (expanded from the analysis' collapsed names) and which of them the plan's
// exclude_layers cover. The Torch rules and the estimates read them.
#include "plan/plan_state.h"

#include <algorithm>
#include <stdexcept>

#include "intake/module_names.h"

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

bool PlanState::is_router(size_t i) {
  const std::string& m = modules()[i];
  if (i < module_roles.size() && !module_roles[i].empty()) return module_roles[i] == "router";
  auto last = m.substr(m.rfind('.') + 1);  // no role known: the names routers go by
  return last == "gate" || last == "router" || m.find("shared_expert_gate") != std::string::npos;
}

const std::vector<char>& PlanState::excluded() {
  const auto& mods = modules();
  const Json& list = plan.contains("exclude_layers") ? plan["exclude_layers"] : Json::array();
  if (excluded_cache.size() == mods.size() && excluded_for == list) return excluded_cache;
  std::vector<QuarkPattern> excl;
  for (const auto& p : list)
    if (p.is_string()) excl.emplace_back(p.get<std::string>(), exclude_match());
  excluded_cache.assign(mods.size(), 0);
  // Quark 0.12 replaces a MoE router with a module that holds its Linear as a child ("mlp.gate.linear",
  // catalog replaced_module_children), which Quark's templates ("*mlp.gate.linear") and AMD's recipes
  // ("*mlp.gate.*") exclude; in 0.13 the router is the Linear itself, and only its own name counts.
  std::vector<std::string> children;
  if (cat.torch().contains("replaced_module_children"))
    for (const auto& c : cat.torch()["replaced_module_children"].value("children", Json::array()))
      if (c.is_string()) children.push_back(c.get<std::string>());
  for (size_t i = 0; i < mods.size(); ++i) {
    const bool router = !children.empty() && is_router(i);
    for (const auto& p : excl) {
      bool hit = p.matches(mods[i]);
      for (size_t k = 0; !hit && router && k < children.size(); ++k) hit = p.matches(mods[i] + "." + children[k]);
      if (hit) {
        excluded_cache[i] = 1;
        break;
      }
    }
  }
  excluded_for = list;
  return excluded_cache;
}

std::string PlanState::other_release_where(const std::function<bool(const Catalog&)>& has) const {
  std::vector<std::string> rels = Catalog::release_versions(req.catalog_dir);
  for (auto it = rels.rbegin(); it != rels.rend(); ++it)
    if (*it != cat.release() && has(Catalog::load(req.catalog_dir, *it))) return *it;
  return "";
}

}  // namespace quarkplan
