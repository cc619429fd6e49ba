#include "intake/model_structure.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <map>
#include <set>

#include "common/error.h"
#include "intake/model_names_gen.h"

namespace quarkplan {

const char* part_name(Part p) {
  switch (p) {
    case Part::kLanguage: return "language";
    case Part::kMtp: return "mtp";
    case Part::kVision: return "vision";
    case Part::kAudio: return "audio";
    case Part::kProjector: return "projector";
  }
  return "language";
}

namespace {

Part part_of(const std::string& s) {
  if (s == "mtp") return Part::kMtp;
  if (s == "vision") return Part::kVision;
  if (s == "audio") return Part::kAudio;
  if (s == "projector") return Part::kProjector;
  return Part::kLanguage;
}

using Vars = std::map<std::string, int64_t, std::less<>>;

// Integer expressions over config variables, as the catalog writes shapes:
// "heads*hd", "2*Im", "(heads+2*kvh)*hd", "cdiv(out,128)", "!tied", "a>b".
// Arithmetic is checked: a config whose numbers overflow is an input error.
class ExprEval {
 public:
  ExprEval(std::string_view text, const Vars& vars, const std::string& file) : s_(text), vars_(vars), file_(file) {}
  int64_t run() {
    int64_t v = comparison();
    skip();
    if (pos_ != s_.size()) fail("unexpected '" + std::string(s_.substr(pos_)) + "'");
    return v;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  const Vars& vars_;
  const std::string& file_;

  [[noreturn]] void fail(const std::string& why) const {
    // Expressions come from the catalog, not the user: a bad one is a catalog error.
    throw InputError("catalog/architectures.json", "expression '" + std::string(s_) + "': " + why);
  }
  void skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  int64_t checked(__int128 v) const {
    if (v > INT64_MAX || v < INT64_MIN)
      throw InputError(file_, "the model's dimensions overflow when multiplied (" + std::string(s_) + "): check the sizes in config.json");
    return static_cast<int64_t>(v);
  }
  int64_t comparison() {
    int64_t a = sum();
    skip();
    if (eat('>')) return a > sum() ? 1 : 0;
    if (eat('<')) return a < sum() ? 1 : 0;
    if (pos_ + 1 < s_.size() && s_[pos_] == '=' && s_[pos_ + 1] == '=') {
      pos_ += 2;
      return a == sum() ? 1 : 0;
    }
    return a;
  }
  int64_t sum() {
    int64_t v = product();
    while (true) {
      if (eat('+')) v = checked(static_cast<__int128>(v) + product());
      else if (eat('-')) v = checked(static_cast<__int128>(v) - product());
      else return v;
    }
  }
  int64_t product() {
    int64_t v = unary();
    while (true) {
      if (eat('*')) v = checked(static_cast<__int128>(v) * unary());
      else if (eat('/')) {
        int64_t d = unary();
        if (d == 0) throw InputError(file_, "a dimension is zero where the model divides by it (" + std::string(s_) + ")");
        v /= d;
      } else return v;
    }
  }
  int64_t unary() {
    if (eat('!')) return unary() == 0 ? 1 : 0;
    if (eat('-')) return -unary();
    return atom();
  }
  int64_t atom() {
    skip();
    if (eat('(')) {
      int64_t v = comparison();
      if (!eat(')')) fail("missing ')'");
      return v;
    }
    if (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      int64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) v = checked(static_cast<__int128>(v) * 10 + (s_[pos_++] - '0'));
      return v;
    }
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    if (start == pos_) fail("expected a number or a name");
    std::string_view name = s_.substr(start, pos_ - start);
    if (eat('(')) {  // functions: cdiv(a,b), max(a,b), min(a,b)
      int64_t a = comparison();
      if (!eat(',')) fail("expected ','");
      int64_t b = comparison();
      if (!eat(')')) fail("missing ')'");
      if (name == "cdiv") {
        if (b <= 0) throw InputError(file_, "a block size is zero (" + std::string(s_) + ")");
        return a / b + (a % b != 0 ? 1 : 0);
      }
      if (name == "max") return std::max(a, b);
      if (name == "min") return std::min(a, b);
      fail("unknown function " + std::string(name));
    }
    auto it = vars_.find(name);
    if (it == vars_.end()) fail("unknown variable '" + std::string(name) + "'");
    return it->second;
  }
};

int64_t eval(std::string_view expr, const Vars& vars, const std::string& file) { return ExprEval(expr, vars, file).run(); }
int64_t eval_json(const Json& e, const Vars& vars, const std::string& file) {
  if (e.is_number_integer()) return e.get<int64_t>();
  if (e.is_string()) return eval(e.get<std::string>(), vars, file);
  throw InputError("catalog/architectures.json", "an expression must be a string or an integer, not " + e.dump());
}

std::string show(const Json& v) {
  std::string d = v.dump();
  return d.size() > 40 ? d.substr(0, 37) + "..." : d;
}

// A value at `path` ("a.b"; a leading '/' starts at the top of config.json,
// else the language model's sub-config first, then the top).
const Json* lookup(const hf::Config& cfg, const std::string& path) {
  auto walk = [&cfg](const Json* cur, const std::string& p) -> const Json* {
    size_t start = 0;
    while (cur && start <= p.size()) {
      size_t dot = p.find('.', start);
      std::string key = p.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      // A nested config of the wrong type ("ffn_config": "x") names itself,
      // not the count the family would have read from it.
      if (!cur->is_object() && start == 0) return nullptr;
      if (!cur->is_object())
        throw InputError(cfg.file, "'" + p.substr(0, start - 1) + "' must be an object, not " + show(*cur));
      auto it = cur->find(key);
      if (it == cur->end() || it->is_null()) return nullptr;
      cur = &*it;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    return cur;
  };
  if (!path.empty() && path[0] == '/') return walk(&cfg.raw, path.substr(1));
  if (const Json* v = walk(&cfg.text(), path)) return v;
  return cfg.text_key.empty() ? nullptr : walk(&cfg.raw, path);
}

// A config value as an integer: integers, integral floats, booleans (0/1), or
// the length of a list ("count" conversion). Other types are input errors.
std::optional<int64_t> config_int(const hf::Config& cfg, const std::string& path, const std::string& conv) {
  const Json* v = lookup(cfg, path);
  if (!v) return std::nullopt;
  std::string key = path[0] == '/' ? path.substr(1) : path;
  if (conv == "count") {
    if (!v->is_array()) throw InputError(cfg.file, "'" + key + "' must be a list, not " + show(*v));
    return static_cast<int64_t>(v->size());
  }
  if (v->is_boolean()) return v->get<bool>() ? 1 : 0;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      throw InputError(cfg.file, "'" + key + "' is out of range (" + show(*v) + ")");
    return v->get<int64_t>();
  }
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (conv == "percent") return static_cast<int64_t>(d * 100.0 + 0.5);
    if (d == static_cast<double>(static_cast<int64_t>(d)) && d > -9.2e18 && d < 9.2e18) return static_cast<int64_t>(d);
    throw InputError(cfg.file, "'" + key + "' must be a whole number, not " + show(*v));
  }
  if (v->is_object() && conv == "present") return 1;
  throw InputError(cfg.file, "'" + key + "' must be a number, not " + show(*v));
}

// Checks one variable against the catalog's limits (derived from the largest
// real models, with headroom).
// `cite`: the limit describes this very quantity, so its largest real value
// is worth quoting (a Mamba state size borrowing the head-dimension range is not).
void check_limit(const Json& limits, const std::string& var, int64_t value, const std::string& key, const std::string& file,
                 bool cite = true) {
  auto it = limits.find(var);
  if (it == limits.end()) return;
  int64_t lo = it->value("min", int64_t{0}), hi = (*it)["max"].get<int64_t>();
  if (value < lo || value > hi) {
    std::string what = key.empty() ? var : "'" + (key[0] == '/' ? key.substr(1) : key) + "'";
    throw InputError(file, what + " is " + std::to_string(value) + ", outside the sane range " + std::to_string(lo) + ".." +
                               std::to_string(hi) + (cite ? " (the largest real model has " + (*it)["largest_real"].get<std::string>() + ")" : std::string()));
  }
}

struct Item;
struct Ctx {
  const hf::Config& cfg;
  const Json& family;
  const Json& catalog;
  const std::string& file;
  Vars vars;
  bool count_only = true;
  uint64_t count = 0;
  uint64_t modules = 0;  // counted in the first pass, to reserve
  uint64_t max_tensors = 0;
  ModelStructure* out = nullptr;
  std::map<std::string, Part> part_of_shape;  // for classify
  std::string scratch;                        // joined()'s buffer
};

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

// Expands one catalog item (and fragments it uses) at `prefix` for one layer.
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

// The variables every family shares, from the normalised config.
Vars generic_vars(const hf::Config& cfg) {
  Vars v;
  auto put = [&](const char* n, const std::optional<int64_t>& x, int64_t def) { v[n] = x.value_or(def); };
  put("L", cfg.num_hidden_layers, 0);
  put("H", cfg.hidden_size, 0);
  put("V", cfg.vocab_size, 0);
  put("heads", cfg.num_attention_heads, 0);
  put("kvh", cfg.num_key_value_heads, v["heads"]);
  put("I", cfg.intermediate_size, 4 * v["H"]);
  put("E", cfg.num_experts, 0);
  put("topk", cfg.num_experts_per_tok, 0);
  put("Im", cfg.moe_intermediate_size, v["I"]);
  put("S", cfg.shared_experts, 0);
  put("Is", cfg.shared_expert_intermediate_size, v["Im"] * std::max<int64_t>(v["S"], 1));
  put("kvr", cfg.kv_lora_rank, 0);
  put("qr", cfg.q_lora_rank, 0);
  put("rope", cfg.qk_rope_head_dim, 64);
  put("nope", cfg.qk_nope_head_dim, 128);
  put("vd", cfg.v_head_dim, 128);
  put("nextn", cfg.num_nextn_predict_layers, 0);
  put("first_dense", cfg.first_k_dense, 0);
  v["tied"] = cfg.tie_word_embeddings ? 1 : 0;
  v["hd"] = cfg.head_dim.value_or(0);
  // Switches families turn on: biases, a stored lm_head although tied.
  for (const char* k : {"qkv_bias", "o_bias", "mlp_bias", "ln_bias", "lm_bias", "head_stored"}) v[k] = 0;
  return v;
}

// Which generic variable comes from which config keys (for error messages and limits).
// In checking order: counts before the sizes derived from them (a shared-expert
// size defaults to experts x expert size, so the expert count is checked first).
// The key is the first name hf_config looks up (Config::key_for gives the one used).
const std::vector<std::pair<std::string, std::string>>& generic_keys() {
  static const std::vector<std::pair<std::string, std::string>> k = {
      {"L", "num_hidden_layers"}, {"H", "hidden_size"}, {"V", "vocab_size"}, {"heads", "num_attention_heads"},
      {"kvh", "num_key_value_heads"}, {"I", "intermediate_size"}, {"E", "num_local_experts"}, {"topk", "num_experts_per_tok"},
      {"S", "n_shared_experts"}, {"Im", "moe_intermediate_size"}, {"Is", "shared_expert_intermediate_size"}, {"kvr", "kv_lora_rank"},
      {"qr", "q_lora_rank"}, {"rope", "qk_rope_head_dim"}, {"nope", "qk_nope_head_dim"}, {"vd", "v_head_dim"}, {"hd", "head_dim"},
      {"nextn", "num_nextn_predict_layers"}, {"first_dense", "first_k_dense_replace"}};
  return k;
}

// Whether decoder layer i holds routed experts: experts exist, the layer is not
// listed in mlp_only_layers, not among the first dense layers, and on the MoE
// step (DeepSeek's moe_layer_freq counts from 0; Qwen's decoder_sparse_step
// and Llama 4's interleave_moe_layer_step mark every step-th layer, 1-based).
bool moe_layer(const Ctx& c, int64_t i) {
  if (c.vars.at("E") <= 1) return false;
  const auto& only = c.cfg.mlp_only_layers;
  if (std::find(only.begin(), only.end(), i) != only.end()) return false;
  if (i < c.vars.at("first_dense")) return false;
  if (c.cfg.moe_layer_freq && *c.cfg.moe_layer_freq > 1)
    return c.cfg.moe_step_one_based ? (i + 1) % *c.cfg.moe_layer_freq == 0 : i % *c.cfg.moe_layer_freq == 0;
  return true;
}

// Per-layer tags of the decoder: attention kind, MLP kind, MTP.
std::vector<std::set<std::string>> decoder_tags(const Ctx& c, int64_t layers, const std::string& mode) {
  std::vector<std::set<std::string>> out(static_cast<size_t>(layers));
  const auto& lt = c.cfg.layer_types;
  std::set<int64_t> cross;
  if (c.family.contains("cross_attention_key"))
    if (const Json* v = lookup(c.cfg, c.family["cross_attention_key"].get<std::string>()); v && v->is_array()) {
      // Bounded by the layer count before anything is built from it.
      if (static_cast<int64_t>(v->size()) > c.vars.at("L"))
        throw InputError(c.file, "'" + c.family["cross_attention_key"].get<std::string>() + "' lists " + std::to_string(v->size()) +
                                     " layers but '" + c.cfg.key_for("num_hidden_layers") + "' is " + std::to_string(c.vars.at("L")));
      for (const auto& x : *v)
        if (x.is_number_integer()) cross.insert(x.get<int64_t>());
    }
  for (int64_t i = 0; i < layers; ++i) {
    auto& t = out[static_cast<size_t>(i)];
    std::string kind = i < static_cast<int64_t>(lt.size()) ? lt[static_cast<size_t>(i)] : "full_attention";
    if (mode == "pattern") {  // one mixer per layer (Nemotron-H)
      if (kind == "mamba") t.insert("mamba");
      else if (kind == "moe") t.insert("moe");
      else if (kind == "mlp") t.insert("dense");
      else t.insert("attention");
      continue;
    }
    if (cross.count(i)) t.insert("cross_attention");
    else if (kind == "linear_attention") t.insert("linear_attention");
    else if (kind == "mamba") t.insert("mamba");
    else {
      t.insert("attention");
      // Chunked attention (Llama 4) caches at most one chunk, like a window.
      t.insert(kind == "sliding_attention" || kind == "chunked_attention" ? "sliding" : "full");
      if (kind == "chunked_attention") t.insert("chunked");
    }
    t.insert(moe_layer(c, i) ? "moe" : "dense");
  }
  return out;
}

// Nemotron-NAS (DeciLM) layers differ one by one: block_configs gives each
// layer's attention (kv groups, no-op, linear replacement) and FFN multiplier.
// Code, because the FFN size is a rounded float formula of the NAS search.
void nas_layer(Ctx& c, const Json& block, std::set<std::string>& tags, int64_t i) {
  if (!block.is_object()) throw InputError(c.file, "block_configs[" + std::to_string(i) + "] must be an object");
  const Json& a = block.value("attention", Json::object());
  const Json& f = block.value("ffn", Json::object());
  if (a.value("no_op", false)) {
  } else if (a.value("replace_with_linear", false)) {
    tags.insert("attention_linear");
  } else {
    tags.insert("attention");
    tags.insert("full");
    const Json& g = a.contains("n_heads_in_group") ? a["n_heads_in_group"] : Json(nullptr);
    if (!g.is_number_integer() || g.get<int64_t>() < 1 || c.vars["heads"] % g.get<int64_t>() != 0)
      throw InputError(c.file, "block_configs[" + std::to_string(i) + "].attention.n_heads_in_group must divide num_attention_heads, not " + show(g));
    c.vars["kvh"] = c.vars["heads"] / g.get<int64_t>();
  }
  if (f.value("no_op", false)) {
  } else if (f.value("replace_with_linear", false)) {
    tags.insert("ffn_linear");
  } else {
    tags.insert("dense");
    const Json& m = f.contains("ffn_mult") ? f["ffn_mult"] : Json(nullptr);
    if (!m.is_number() || m.get<double>() <= 0 || m.get<double>() > 64)
      throw InputError(c.file, "block_configs[" + std::to_string(i) + "].ffn.ffn_mult must be a positive number, not " + show(m));
    // DeciLM's _ffn_mult_to_intermediate_size: int(2 * mult * H / 3) rounded up to 256.
    int64_t size = static_cast<int64_t>(2.0 * m.get<double>() * static_cast<double>(c.vars["H"]) / 3.0);
    c.vars["I"] = (size + 255) / 256 * 256;
  }
}

void run_stacks(Ctx& c) {
  for (const auto& g : c.family.value("globals", Json::array())) expand(c, g, "", {"global"}, Part::kLanguage, "");
  for (const auto& st : c.family.value("stacks", Json::array())) {
    if (st.contains("when") && eval_json(st["when"], c.vars, c.file) == 0) continue;
    Part part = part_of(st.value("part", std::string("language")));
    int64_t first = st.contains("first") ? eval_json(st["first"], c.vars, c.file) : 0;
    int64_t count = eval_json(st["count"], c.vars, c.file);
    if (count < 0) throw InputError(c.file, "a layer count in config.json is negative");
    std::string root = st["root"];
    std::string mode = !st.contains("layer_tags") ? "decoder" : st["layer_tags"].is_string() ? st["layer_tags"].get<std::string>() : "fixed";
    std::vector<std::set<std::string>> tags;
    if (mode == "decoder" || mode == "pattern") tags = decoder_tags(c, count, mode);
    else if (st["layer_tags"].is_array()) tags.assign(static_cast<size_t>(count), std::set<std::string>(st["layer_tags"].begin(), st["layer_tags"].end()));
    else tags.assign(static_cast<size_t>(count), std::set<std::string>{"layer"});
    const Json* blocks = nullptr;
    if (mode == "block_configs") {
      blocks = lookup(c.cfg, "block_configs");
      if (!blocks || !blocks->is_array() || static_cast<int64_t>(blocks->size()) != count)
        throw InputError(c.file, "block_configs must list one entry per layer (" + std::to_string(count) + ")");
    }
    Vars saved = c.vars;
    for (int64_t i = 0; i < count; ++i) {
      auto& t = tags[static_cast<size_t>(i)];
      if (blocks) {
        c.vars = saved;
        nas_layer(c, (*blocks)[static_cast<size_t>(i)], t, i);
      }
      if (part == Part::kLanguage && !c.count_only) {
        std::string k;
        for (const char* x : {"attention", "cross_attention", "linear_attention", "mamba", "attention_linear", "moe", "dense", "ffn_linear"})
          if (t.count(x)) k += (k.empty() ? "" : "+") + std::string(x);
        if (t.count("chunked")) k += "(chunked)";
        else if (t.count("sliding")) k += "(sliding)";
        c.out->layer_kinds.push_back(k.empty() ? "none" : k);
      }
      if (!c.count_only && part == Part::kLanguage && (t.count("attention") || t.count("cross_attention"))) {
        KvFacts& kv = c.out->kv;
        bool cross_layer = t.count("cross_attention") > 0;  // cross-attention caches the image tokens, not the text
        if (!cross_layer) {
          uint64_t elems = c.vars["kvr"] > 0 ? static_cast<uint64_t>(c.vars["kvr"] + c.vars["rope"])
                                               : static_cast<uint64_t>(2 * c.vars["kvh"] * c.vars["hd"]);
          kv.kind = c.vars["kvr"] > 0 ? "mla" : "gqa";
          bool sliding = t.count("sliding") && c.vars.count("window") && c.vars["window"] > 0;
          if (sliding) {
            ++kv.sliding_layers;
            kv.elements_sliding += elems;
            kv.sliding_window = c.vars["window"];
          } else {
            ++kv.full_layers;
            kv.elements_full += elems;
          }
        }
      }
      std::string prefix = root + "." + std::to_string(first + i) + ".";
      for (const auto& item : st["items"]) expand(c, item, prefix, t, part, "");
    }
    if (blocks) c.vars = saved;
  }
}

}  // namespace

std::string shape_name(std::string_view module) {
  std::string out;
  out.reserve(module.size());
  size_t i = 0;
  while (i < module.size()) {
    size_t j = module.find('.', i);
    if (j == std::string_view::npos) j = module.size();
    std::string_view part = module.substr(i, j - i);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    out += digits ? std::string_view("#") : part;
    if (j < module.size()) out += '.';
    i = j + 1;
  }
  return out;
}

std::pair<std::string, Part> ModelStructure::classify(std::string_view module) const {
  std::string sn = shape_name(module);
  auto it = role_by_shape_name.find(sn);
  if (it == role_by_shape_name.end()) return {"", Part::kLanguage};
  auto pt = part_by_shape_name.find(sn);
  return {it->second, pt == part_by_shape_name.end() ? Part::kLanguage : pt->second};
}

std::string ModelStructure::loaded_name(std::string_view name) const {
  for (const auto& [from, to] : checkpoint_renames)
    if (name.substr(0, from.size()) == from) return to + std::string(name.substr(from.size()));
  return std::string(name);
}

const Json* architecture_family(const Json& cat, const hf::Config& cfg) {
  for (const std::string& mt : {cfg.model_type, cfg.text_model_type}) {
    if (mt.empty()) continue;
    for (const auto& f : cat["families"])
      for (const auto& t : f["model_types"])
        if (t == mt) return &f;
  }
  return nullptr;
}

ModelStructure build_structure(const hf::Config& cfg, const Json& family, const Json& cat, const std::string& file) {
  ModelStructure ms;
  ms.family = family["family"];
  Ctx c{cfg, family, cat, file, generic_vars(cfg)};
  const bool head_dim_given = cfg.head_dim.has_value() && *cfg.head_dim > 0;
  auto default_head_dim = [&] {
    if (head_dim_given || family.value("vars", Json::object()).contains("hd") || c.vars["heads"] <= 0) return;
    if (c.vars["H"] % c.vars["heads"] != 0)
      throw InputError(file, cfg.key_for("num_attention_heads") + " (" + std::to_string(c.vars["heads"]) + ") does not divide " + cfg.key_for("hidden_size") + " (" +
                                 std::to_string(c.vars["H"]) + ") and no head_dim is given");
    c.vars["hd"] = c.vars["H"] / c.vars["heads"];
  };
  c.max_tensors = cat["limits"]["tensors"]["max"].get<uint64_t>();
  const Json& limits = cat["limits"];
  // Family variables: config keys (first present wins) or a default expression.
  const Json family_vars = family.value("vars", Json::object());
  std::map<std::string, std::string> family_keys;  // variable -> the config key that gave it
  for (auto& [name, spec] : family_vars.items()) {
    std::optional<int64_t> v;
    std::string used_key;
    std::string conv = spec.value("convert", std::string());
    Json keys = spec.contains("key") ? (spec["key"].is_array() ? spec["key"] : Json::array({spec["key"]})) : Json::array();
    for (const auto& k : keys) {
      v = config_int(cfg, k.get<std::string>(), conv);
      if (v) {
        used_key = k.get<std::string>();
        break;
      }
    }
    if (!v && spec.contains("default")) v = eval_json(spec["default"], c.vars, file);
    if (!v) continue;
    if (spec.contains("limit")) check_limit(limits, spec["limit"], *v, used_key.empty() ? name : used_key, file, spec["limit"] == name);
    if (!used_key.empty()) family_keys[name] = used_key[0] == '/' ? used_key.substr(1) : used_key;
    c.vars[name] = *v;
  }
  if (!c.vars.count("window")) c.vars["window"] = cfg.sliding_window.value_or(0);
  // Every generic variable the structure rests on, range-checked (the head
  // dimension after its default, which divides by the head count).
  std::set<std::string> required;
  for (const auto& r : family.value("requires", Json::array())) required.insert(r.get<std::string>());
  auto check_generic = [&](bool head_dim) {
    for (const auto& [var, canonical] : generic_keys()) {
      if ((var == "hd") != head_dim) continue;
      // The key as config.json spells it (GPT-J's n_head, DBRX's nested ffn_config keys).
      const std::string key = family_keys.count(var) ? family_keys[var] : cfg.key_for(canonical);
      int64_t v = c.vars[var];
      if (required.count(var) && v <= 0 && var != "E") {
        const Json* given = lookup(cfg, key);
        throw InputError(file, "'" + key + "' must be a positive integer (got " + (given ? show(*given) : std::string("none")) + "): the " +
                                   ms.family + " architecture needs it");
      }
      if (required.count(var) && var == "E" && v < 2) {
        const Json* given = lookup(cfg, key);
        throw InputError(file, "'" + key + "' is " + (given ? show(*given) : std::to_string(v)) + ": the " + ms.family +
                                   " architecture routes tokens among experts, so it needs at least 2");
      }
      check_limit(limits, var, v, key, file);
    }
  };
  // A null MLP width: GPT-J's and Falcon's configs mean 4 x hidden_size by it
  // (their families default "I"); elsewhere transformers builds Linear layers
  // from the number and fails on None -- where a layer uses it. A model whose
  // layers are all MoE never reads it (Qwen3-MoE), so the structure is built
  // with two widths: if they differ, the width is needed.
  if (!cfg.null_intermediate_key.empty() && !(family_vars.contains("I") && family_vars["I"].contains("default"))) {
    hf::Config probe = cfg;
    probe.null_intermediate_key.clear();
    probe.intermediate_size = 1;
    const uint64_t one = build_structure(probe, family, cat, file).total_params;
    probe.intermediate_size = 2;
    if (build_structure(probe, family, cat, file).total_params != one)
      throw InputError(file, "'" + cfg.null_intermediate_key + "' is null: the " + ms.family +
                                 " architecture needs the MLP width as a positive integer (transformers has no default for null)");
  }
  // Sizes that may be left out (null: none) but are never 0: DeepSeek's
  // q_lora_rank 0 would build a zero-width query projection.
  for (const auto& v : family.value("positive_or_null", Json::array())) {
    const std::string var = v.get<std::string>();
    for (const auto& [gv, canonical] : generic_keys())
      if (gv == var && lookup(cfg, cfg.key_for(canonical)) && c.vars[var] <= 0)
        throw InputError(file, "'" + cfg.key_for(canonical) + "' is " + std::to_string(c.vars[var]) +
                                   ": it must be a positive integer, or null for none");
  }
  check_generic(false);
  default_head_dim();  // after the family's overrides: DBRX's sizes live in nested configs
  check_generic(true);
  if (c.vars["heads"] > 0 && c.vars["kvh"] > 0 && c.vars["heads"] % c.vars["kvh"] != 0)
    throw InputError(file, cfg.key_for("num_key_value_heads") + " (" + std::to_string(c.vars["kvh"]) + ") must divide " + cfg.key_for("num_attention_heads") + " (" +
                               std::to_string(c.vars["heads"]) + ")");
  if (c.cfg.first_k_dense && *c.cfg.first_k_dense > c.vars["L"])
    throw InputError(file, "first_k_dense_replace (" + std::to_string(*c.cfg.first_k_dense) + ") exceeds num_hidden_layers");

  // Pass 1 counts (bounded), pass 2 materialises.
  run_stacks(c);
  c.count_only = false;
  uint64_t n = c.count;
  c.count = 0;
  c.out = &ms;
  ms.tensors.reserve(n);
  ms.modules.reserve(c.modules);
  run_stacks(c);
  if (const Json& pl = limits["params"]; ms.total_params > pl["max"].get<uint64_t>())
    throw InputError(file, "config.json describes a model of " + std::to_string(ms.total_params) + " parameters, beyond any real model (the largest has " +
                               pl["largest_real"].get<std::string>() + "): check its sizes");
  for (const auto& r : family.value("checkpoint_renames", Json::array())) ms.checkpoint_renames.emplace_back(r[0], r[1]);
  ms.is_moe = c.vars["E"] > 1;
  ms.num_experts = ms.is_moe ? c.vars["E"] : 0;
  for (const auto& t : ms.tensors)
    if (t.part == Part::kMtp) {
      ms.mtp_layers = c.vars.count("mtp") ? c.vars["mtp"] : c.vars["nextn"];
      break;
    }
  ms.kv.max_position_embeddings = cfg.max_position_embeddings.value_or(0);
  return ms;
}

}  // namespace quarkplan
