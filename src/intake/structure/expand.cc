// Catalog items expanded into tensors and Linear modules: names, shapes,
// roles and parts of every tensor and module (the per-tensor work of building
// a structure: 92,000 tensors and 45,000 modules for DeepSeek-V3).
#include "intake/structure/expand.h"

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/string_arena.h"

namespace quarkplan::structure_detail {
namespace {

void add_tensor_dims(Ctx& c, std::string_view name, const int64_t* dims, size_t ndim, Part part, std::string_view role) {
  if (++c.count > c.max_tensors)
    throw InputError(c.file, "the model would hold more than " + std::to_string(c.max_tensors) +
                                 " tensors: its layer and expert counts are beyond any real model");
  if (c.count_only) return;
  if (ndim > TensorShape::kMax) throw InputError(c.file, "tensor " + std::string(name) + " would have more than 6 dimensions");
  StructTensor t;
  t.numel = 1;
  for (size_t i = 0; i < ndim; ++i) {
    const int64_t d = dims[i];
    if (d < 0) throw InputError(c.file, "tensor " + std::string(name) + " would have a negative dimension: check the sizes in config.json");
    t.shape.push_back(static_cast<uint64_t>(d));
    t.numel *= static_cast<uint64_t>(d);
  }
  t.name = c.out->names.add(name);
  t.hash = name_hash(t.name);
  t.part = part;
  t.role = role;
  c.out->params_by_part[static_cast<int>(part)] += t.numel;
  c.out->total_params += t.numel;
  c.out->tensors.push_back(t);
}
void add_tensor(Ctx& c, std::string_view name, std::initializer_list<int64_t> shape, Part part, std::string_view role) {
  add_tensor_dims(c, name, shape.begin(), shape.size(), part, role);
}
void add_tensor(Ctx& c, std::string_view name, const std::vector<int64_t>& shape, Part part, std::string_view role) {
  add_tensor_dims(c, name, shape.data(), shape.size(), part, role);
}
// `base` + `suffix` without a new string each time (the scratch is reused).
std::string_view joined(Ctx& c, std::string_view base, std::string_view suffix) {
  c.scratch.assign(base);
  c.scratch += suffix;
  return c.scratch;
}

// `classify_too`: record the module's shape name for classify(); the experts
// of one item share it, so only the first of them needs to (45,000 modules).
void add_module(Ctx& c, std::string_view name, int64_t out, int64_t in, std::string_view role, Part part, size_t source,
                bool classify_too = true) {
  if (c.count_only) {
    ++c.modules;
    return;
  }
  if (classify_too) {
    std::string sn = shape_name(name);
    if (!c.out->role_by_shape_name.count(sn)) {
      c.out->part_by_shape_name.emplace(sn, part);
      c.out->role_by_shape_name.emplace(std::move(sn), std::string(role));
    }
  }
  const std::string_view source_name = source < c.out->tensors.size() ? c.out->tensors[source].name : std::string_view();
  const bool source_is_weight = source_name.size() >= 7 && source_name.substr(source_name.size() - 7) == ".weight";
  // A Linear's name is its weight's name without ".weight": a view of it, not a copy.
  const bool own_weight = source_is_weight && source_name.size() == name.size() + 7 && source_name.substr(0, name.size()) == name;
  c.out->modules.push_back({own_weight ? source_name.substr(0, name.size()) : c.out->names.add(name), static_cast<uint64_t>(std::max<int64_t>(out, 0)),
                            static_cast<uint64_t>(std::max<int64_t>(in, 0)), role, part, static_cast<uint32_t>(source), false,
                            source_is_weight});
}

// A name pattern split at its "{e}" placeholders, so each expert's name is
// written into a reused buffer (256 experts x 61 layers: no allocation each).
class ExpertNames {
 public:
  explicit ExpertNames(std::string_view pattern) {
    for (size_t at = pattern.find("{e}"); at != std::string_view::npos; at = pattern.find("{e}")) {
      pieces_.push_back(pattern.substr(0, at));
      pattern.remove_prefix(at + 3);
    }
    pieces_.push_back(pattern);
  }
  // The name of expert `e`, valid until the next call.
  std::string_view operator()(int64_t e) {
    char num[24];
    const auto end = std::to_chars(num, num + sizeof num, e).ptr;
    out_.assign(pieces_[0]);
    for (size_t i = 1; i < pieces_.size(); ++i) {
      out_.append(num, end);
      out_ += pieces_[i];
    }
    return out_;
  }

 private:
  std::vector<std::string_view> pieces_;
  std::string out_;
};

bool has_any(const std::set<std::string>& tags, const Json& want) {
  for (const auto& w : want)
    if (tags.count(w.get<std::string>())) return true;
  return false;
}

// The role's one stored copy (a handful of distinct roles for 92,000 tensors).
std::string_view intern_role(Ctx& c, const std::string& role) {
  if (role.empty() || c.count_only) return {};
  for (const auto& r : c.out->roles)
    if (r == role) return r;
  return c.out->roles.emplace_back(role);
}

}  // namespace

Part part_of(const std::string& s) {
  if (s == "mtp") return Part::kMtp;
  if (s == "vision") return Part::kVision;
  if (s == "audio") return Part::kAudio;
  if (s == "projector") return Part::kProjector;
  return Part::kLanguage;
}

void expand(Ctx& c, const Json& item, const std::string& prefix, const std::set<std::string>& tags, Part part,
            const std::string& inherited_role) {
  if (item.contains("tags") && !has_any(tags, item["tags"])) return;
  if (item.contains("not_tags") && has_any(tags, item["not_tags"])) return;
  if (item.contains("when") && eval_json(item["when"], c.vars, c.file) == 0) return;
  std::string role_text = item.value("role", inherited_role);
  const std::string_view role = intern_role(c, role_text);
  Part p = item.contains("part") ? part_of(item["part"].get<std::string>()) : part;
  std::string local_prefix = prefix + item.value("prefix", std::string());
  if (item.contains("use")) {
    const Json& frag = c.catalog["fragments"][item["use"].get<std::string>()];
    std::string sub = local_prefix.empty() || local_prefix.back() == '.' ? local_prefix : local_prefix + ".";
    for (const auto& x : frag) expand(c, x, sub, tags, p, role_text);
    return;
  }
  int64_t repeat = item.contains("repeat") ? eval_json(item["repeat"], c.vars, c.file) : -1;
  // Calls `f` with each name the item makes (one, or one per expert); the view
  // is valid during the call only.
  auto for_names = [&](const std::string& n, auto&& f) {
    const std::string pattern = local_prefix + n;
    if (repeat < 0) {
      f(std::string_view(pattern));
      return;
    }
    ExpertNames name(pattern);
    for (int64_t e = 0; e < repeat; ++e) f(name(e));
  };
  bool bias = item.contains("bias") && eval_json(item["bias"], c.vars, c.file) != 0;
  if (c.count_only && repeat > 0) {  // counting pass: no names, just the bound
    uint64_t per = item.contains("tensor") ? 1 : 1 + (bias ? 1 : 0);
    c.count += static_cast<uint64_t>(repeat) * per;
    if (item.contains("linear")) c.modules += static_cast<uint64_t>(repeat);
    for (const auto& m : item.value("modules", Json::array()))  // once per item, whatever its repeat
      c.modules += static_cast<uint64_t>(std::max<int64_t>(1, m.contains("repeat") ? eval_json(m["repeat"], c.vars, c.file) : 1));
    if (c.count > c.max_tensors)
      throw InputError(c.file, "the model would hold more than " + std::to_string(c.max_tensors) +
                                   " tensors: its layer and expert counts are beyond any real model");
    return;
  }
  if (item.contains("linear")) {
    int64_t out = eval_json(item["out"], c.vars, c.file), in = eval_json(item["in"], c.vars, c.file);
    // A tied head (tie_word_embeddings): transformers still builds it as an
    // nn.Linear whose weight is the input embedding's, so Quark sees (and
    // quantizes) the module, but the checkpoint stores the weight once.
    if (item.contains("stored") && eval_json(item["stored"], c.vars, c.file) == 0) {
      if (!item.contains("tied_to") || repeat >= 0)
        throw InputError("catalog/architectures.json", "an unstored linear needs tied_to and no repeat: " + item.dump());
      const std::string name = local_prefix + item["linear"].get<std::string>();
      if (bias) add_tensor(c, name + ".bias", {out}, p, role);  // a head's bias is its own (GPT-J, Phi)
      if (c.count_only) {
        ++c.modules;
        return;
      }
      const std::string weight = prefix + item["tied_to"].get<std::string>() + ".weight";
      size_t source = c.out->tensors.size();
      for (size_t i = c.out->tensors.size(); i-- > 0;)
        if (c.out->tensors[i].name == weight) {
          source = i;
          break;
        }
      if (source == c.out->tensors.size())
        throw InputError("catalog/architectures.json", "tied_to names no earlier tensor: " + weight);
      add_module(c, name, out, in, role, p, source);
      c.out->modules.back().tied = true;
      return;
    }
    bool first = true;
    for_names(item["linear"].get<std::string>(), [&](std::string_view n) {
      const size_t source = c.out ? c.out->tensors.size() : 0;
      add_tensor(c, joined(c, n, ".weight"), {out, in}, p, role);
      if (bias) add_tensor(c, joined(c, n, ".bias"), {out}, p, role);
      add_module(c, n, out, in, role, p, source, first);
      first = false;
    });
  } else if (item.contains("norm")) {
    int64_t dim = eval_json(item["dim"], c.vars, c.file);
    for_names(item["norm"].get<std::string>(), [&](std::string_view n) {
      add_tensor(c, joined(c, n, ".weight"), {dim}, p, {});
      if (bias) add_tensor(c, joined(c, n, ".bias"), {dim}, p, {});
    });
  } else if (item.contains("embedding")) {
    int64_t rows = eval_json(item["rows"], c.vars, c.file), dim = eval_json(item["dim"], c.vars, c.file);
    for_names(item["embedding"].get<std::string>(), [&](std::string_view n) { add_tensor(c, joined(c, n, ".weight"), {rows, dim}, p, {}); });
  } else if (item.contains("tensor")) {
    std::vector<int64_t> shape;
    for (const auto& d : item["shape"]) shape.push_back(eval_json(d, c.vars, c.file));
    const size_t source = c.out ? c.out->tensors.size() : 0;
    bool any = false;
    for_names(item["tensor"].get<std::string>(), [&](std::string_view n) {
      add_tensor(c, n, shape, p, role);
      any = true;
    });
    if (item.contains("modules") && any) {
      if (!c.count_only) c.out->fused_experts = c.out->fused_experts || role == "expert";
      for (const auto& m : item["modules"]) {
        int64_t out = eval_json(m["out"], c.vars, c.file), in = eval_json(m["in"], c.vars, c.file);
        int64_t r = m.contains("repeat") ? eval_json(m["repeat"], c.vars, c.file) : -1;
        std::string base = local_prefix + m["linear"].get<std::string>();
        const std::string_view module_role = m.contains("role") ? intern_role(c, m["role"].get<std::string>()) : role;
        if (r < 0) add_module(c, base, out, in, module_role, p, source);
        else {
          ExpertNames name(base);
          for (int64_t e = 0; e < r; ++e) add_module(c, name(e), out, in, module_role, p, source, e == 0);
        }
      }
    }
  } else {
    throw InputError("catalog/architectures.json", "item without linear/norm/embedding/tensor/use: " + item.dump());
  }
}

}  // namespace quarkplan::structure_detail
