// verify, Torch side: a Quark Hugging Face export against its plan. What each
// scheme writes per Linear (tensor names, dtypes, shapes), where the KV-cache
// scales go and how quantization_config records a scheme are catalog data
// (catalog/torch.json "hf_export", read from Quark's exporter and AMD's
// published checkpoints): a new Quark layout is a catalog change.
#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_set>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/files.h"
#include "common/keep_until_exit.h"
#include "common/sha256.h"
#include "common/strings.h"
#include "intake/module_names.h"
#include "verify/failures.h"
#include "verify/torch_export.h"
#include "verify/verify.h"

namespace fs = std::filesystem;

namespace quarkplan::verify::detail {
namespace {

struct Dims {
  uint64_t out = 0, in = 0, group = 0;
};

// One dimension of a layout shape: "out", "in", "G", numbers, '/' (rounding
// up: a last partial group still gets its scale) and '*', left to right.
std::optional<uint64_t> eval_dim(const std::string& expr, const Dims& d) {
  uint64_t value = 0;
  char op = 0;
  size_t i = 0;
  bool first = true;
  while (i < expr.size()) {
    if (!first) {
      op = expr[i++];
      if (op != '/' && op != '*') return std::nullopt;
    }
    size_t j = i;
    while (j < expr.size() && expr[j] != '/' && expr[j] != '*') ++j;
    std::string term = expr.substr(i, j - i);
    i = j;
    uint64_t t = 0;
    if (term == "out") t = d.out;
    else if (term == "in") t = d.in;
    else if (term == "G") t = d.group;
    else if (!term.empty() && std::all_of(term.begin(), term.end(), [](unsigned char c) { return std::isdigit(c); }))
      t = std::stoull(term);
    else
      return std::nullopt;
    if (first) value = t;
    else if (op == '*') value *= t;
    else {
      if (t == 0) return std::nullopt;
      value = (value + t - 1) / t;
    }
    first = false;
  }
  if (first) return std::nullopt;
  return value;
}

// The shapes a layout entry allows, evaluated; empty when they cannot be
// computed (an unknown module size).
std::vector<std::vector<uint64_t>> allowed_shapes(const Json& entry, const Dims& d) {
  std::vector<std::vector<uint64_t>> out;
  if (!entry.contains("shapes")) return out;
  for (const auto& alt : entry["shapes"]) {
    std::vector<uint64_t> s;
    bool ok = true;
    for (const auto& e : alt) {
      auto v = e.is_string() ? eval_dim(e.get<std::string>(), d) : std::optional<uint64_t>(e.get<uint64_t>());
      if (!v || *v == 0) ok = false;
      else s.push_back(*v);
    }
    if (ok) out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> allowed_dtypes(const Json& entry, const std::string& model_dtype) {
  std::vector<std::string> out;
  for (const auto& d : entry.value("dtypes", Json::array())) {
    std::string s = d.get<std::string>();
    out.push_back(s == "$model" ? model_dtype : s);
  }
  return out;
}


std::string shapes_text(const std::vector<std::vector<uint64_t>>& shapes) {
  std::vector<std::string> t;
  for (const auto& s : shapes) t.push_back(shape_text(s));
  return join(t, " or ");
}

// What a tensor must be, as one sentence part: "weight F8_E4M3 [4096, 4096]".
std::string expectation(const std::string& param, const std::vector<std::string>& dtypes,
                        const std::vector<std::vector<uint64_t>>& shapes) {
  std::string s = param + " " + join(dtypes, "|");
  if (!shapes.empty()) s += " " + shapes_text(shapes);
  return s;
}

std::string found_text(const std::string& param, const ExportTensor& t) { return param + " " + t.dtype + " " + shape_text(t.shape); }

// Compares one tensor with its layout entry; "" when it matches, else what was found.
std::string tensor_mismatch(const std::string& param, const ExportTensor* t, const std::vector<std::string>& dtypes,
                            const std::vector<std::vector<uint64_t>>& shapes) {
  if (!t) return "no " + param;
  bool dtype_ok = dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), t->dtype) != dtypes.end();
  bool shape_ok = shapes.empty() || std::find(shapes.begin(), shapes.end(), t->shape) != shapes.end();
  return dtype_ok && shape_ok ? "" : found_text(param, *t);
}


// Differences between an expected spec summary ({dtype, qscheme, group_size,
// symmetric, is_dynamic}; a list for two-stage specs) and the exported spec.
std::vector<std::string> spec_differences(const std::string& where, const Json& expected, const Json& exported) {
  std::vector<std::string> out;
  if (expected.is_null()) {
    if (!exported.is_null() && !(exported.is_object() && exported.empty()) && !(exported.is_array() && exported.empty()))
      out.push_back(where + " is quantized (" + (exported.is_object() ? member(exported, "dtype").dump() : exported.dump()) + ") where the scheme leaves it in float");
    return out;
  }
  if (expected.is_array()) {
    if (!exported.is_array() || exported.size() != expected.size()) {
      out.push_back(where + " is " + (exported.is_null() ? std::string("absent") : exported.is_array() ? std::to_string(exported.size()) + " stages" : "one stage") +
                    ", not " + std::to_string(expected.size()) + " stages");
      return out;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      auto d = spec_differences(where + "[" + std::to_string(i) + "]", expected[i], exported[i]);
      out.insert(out.end(), d.begin(), d.end());
    }
    return out;
  }
  if (!exported.is_object()) {
    out.push_back(where + " is " + (exported.is_null() ? std::string("absent") : "not a spec object"));
    return out;
  }
  for (const auto& [k, v] : expected.items()) {
    if (v.is_null()) continue;
    const Json& got = member(exported, k.c_str());
    if (got != v) out.push_back(where + "." + k + " is " + (got.is_null() ? std::string("absent") : got.dump()) + ", not " + v.dump());
  }
  return out;
}

// The source folder the plan was made from: --source, else the plan's model_path when it is still there.
std::string source_folder(const Json& plan, const Options& o) {
  if (!o.source_dir.empty()) return o.source_dir;
  std::string p = text_of(member(plan, "model"), "model_path");
  std::error_code ec;
  return !p.empty() && fs::is_directory(p, ec) ? p : "";
}

// Files a serving runtime reads beside the weights; Quark's exporter copies them.
const std::vector<std::string>& companion_files() {
  static const std::vector<std::string> files = {"tokenizer.json", "tokenizer_config.json", "tokenizer.model",
                                                  "special_tokens_map.json", "generation_config.json", "chat_template.jinja",
                                                  "chat_template.json", "vocab.json", "merges.txt"};
  return files;
}

std::string file_digest(const std::string& path) {
  uint64_t hashed = 0, size = 0;
  return sha256_file_prefix(path, ~0ull, hashed, size);
}

// Why a companion file the export rewrote is not the source's, or "" when it holds the same
// content: quantize_quark.py re-saves the tokenizer through transformers, which re-serialises the
// JSON files and sets the keys the catalog lists (export_rewritten_keys); every other top-level
// key must keep the source's value.
std::string json_file_difference(const std::string& source, const std::string& exported, const std::string& name, const Catalog& catalog) {
  if (name.size() < 5 || name.compare(name.size() - 5, 5, ".json") != 0) return "a different file";
  Json a, b;
  try {
    a = read_json_file(source);
    b = read_json_file(exported);
  } catch (const std::exception&) {
    return "a different file (not JSON)";
  }
  if (!a.is_object() || !b.is_object()) return a == b ? "" : "a different file";
  std::set<std::string> rewritten;
  const Json& keys = catalog.torch().value("export_rewritten_keys", Json::object());
  if (keys.contains(name) && keys[name].is_array())
    for (const auto& k : keys[name]) rewritten.insert(k.get<std::string>());
  std::vector<std::string> changed;
  for (const auto& [k, v] : a.items())
    if (!rewritten.count(k) && (!b.contains(k) || b[k] != v)) changed.push_back(k);
  for (const auto& [k, v] : b.items())
    if (!rewritten.count(k) && !a.contains(k)) changed.push_back(k);
  return changed.empty() ? "" : "other values for " + join(changed, ", ");
}

// config.json fields the export must keep from the source (a runtime reads them).
const std::vector<std::string>& kept_config_fields() {
  static const std::vector<std::string> f = {"model_type", "architectures", "max_position_embeddings", "vocab_size", "hidden_size",
                                             "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "rope_theta",
                                             "rope_scaling", "bos_token_id", "eos_token_id", "tie_word_embeddings"};
  return f;
}

}  // namespace

Result verify_torch(const Json& plan, const Json& analysis, const std::string& output, const Options& options, const Catalog& catalog) {
  auto ex = std::make_shared<TorchExport>(read_torch_export(output));
  Result r = verify_torch_export(plan, analysis, *ex, options, catalog);
  // 90,000 tensor records are freed by the process exit, not one by one.
  if (options.keep_until_exit) keep_until_exit(ex);
  return r;
}

Result verify_torch_export(const Json& plan, const Json& analysis, const TorchExport& ex, const Options& options, const Catalog& catalog) {
  const std::string& output = ex.dir;
  Result r;
  r.flow = "torch";
  r.output_path = output;
  r.size_tolerance = options.size_tolerance;
  const Json& layouts_root = catalog.torch()["hf_export"];
  const Json& qc = ex.quantization_config;

  // --- quant_method
  Check method = make_check("verify.torch.quant_method");
  method.checked = 1;
  if (!qc.is_object()) method.failures.push_back({"config.json", "quantization_config with quant_method \"quark\"", "no quantization_config"});
  else if (text_of(qc, "quant_method") != "quark")
    method.failures.push_back({"config.json", "quant_method \"quark\"", "quant_method " + (qc.contains("quant_method") ? qc["quant_method"].dump() : std::string("absent"))});
  else
    // vLLM's Quark loader refuses a config without `export`; each key is one Quark writes.
  {
    for (const auto& k : string_list(layouts_root.value("required_config_keys", Json::array())))
      if (!qc.contains(k)) method.failures.push_back({"config.json quantization_config", "the key " + k + " (Quark's exporter writes it)", "absent"});
    // The export settings a loader reads to unpack the weights (vLLM reads pack_method).
    const Json& settings = member(layouts_root, "export_settings");
    if (settings.is_object() && member(qc, "export").is_object())
      for (const auto& [k, v] : settings.items())
        if (member(qc["export"], k.c_str()) != v)
          method.failures.push_back({"quantization_config.export." + k, v.dump() + " (the plan's hf_format export)",
                                     member(qc["export"], k.c_str()).is_null() ? "absent" : member(qc["export"], k.c_str()).dump()});
  }
  r.checks.push_back(method);

  // --- the plan's modules, schemes and exclusions
  const std::string global = text_of(plan, "global_scheme");
  const Json& overrides = plan.contains("layer_quant_config") && plan["layer_quant_config"].is_object() ? plan["layer_quant_config"] : Json::object();
  std::vector<std::pair<QuarkPattern, std::string>> override_patterns;
  for (const auto& [pat, scheme] : overrides.items())
    if (scheme.is_string()) override_patterns.emplace_back(QuarkPattern(pat, PatternMatch::kVerbatim), scheme.get<std::string>());
  // Exclusions match as the plan's release matches them (catalog exclude_matching).
  const PatternMatch how = catalog.exclude_covers_children() ? PatternMatch::kWithChildren : PatternMatch::kVerbatim;
  std::vector<QuarkPattern> plan_excl;
  for (const auto& p : member(plan, "exclude_layers"))
    if (p.is_string()) plan_excl.emplace_back(p.get<std::string>(), how);
  std::vector<QuarkPattern> export_excl;
  if (qc.is_object() && qc.contains("exclude") && qc["exclude"].is_array())
    for (const auto& p : qc["exclude"])
      if (p.is_string()) export_excl.emplace_back(p.get<std::string>(), how);

  std::string model_dtype = "BF16";
  if (analysis.is_object()) {
    std::string d = text_of(member(analysis, "model"), "dtype", "bfloat16");
    const Json& codes = layouts_root["dtype_codes"];
    if (codes.contains(d)) model_dtype = codes[d].get<std::string>();
  }

  // Expanded module list (names, [params, in_features], role) from the analysis.
  std::vector<std::string> names;
  std::vector<std::pair<uint64_t, uint64_t>> shapes;
  std::vector<std::string> roles;
  Check model = make_check("verify.torch.model");
  if (member(member(analysis, "quantization_targets"), "module_names").is_array()) {
    const Json& q = member(analysis, "quantization_targets");
    const Json& ns = q["module_names"];
    for (size_t i = 0; i < ns.size(); ++i) {
      if (!ns[i].is_string()) continue;
      std::vector<std::string> exp;
      try {
        exp = expand_module_names({ns[i].get<std::string>()});
      } catch (const std::invalid_argument& e) {
        throw InputError(text_of(member(plan, "model"), "analysis_ref", "the analysis"), std::string("module names are malformed: ") + e.what());
      }
      std::pair<uint64_t, uint64_t> shape{0, 0};
      if (q.contains("module_shapes") && i < q["module_shapes"].size() && q["module_shapes"][i].is_array() && q["module_shapes"][i].size() == 2 &&
          q["module_shapes"][i][0].is_number_unsigned() && q["module_shapes"][i][1].is_number_unsigned())
        shape = {q["module_shapes"][i][0].get<uint64_t>(), q["module_shapes"][i][1].get<uint64_t>()};
      std::string role = q.contains("module_roles") && i < q["module_roles"].size() && q["module_roles"][i].is_string() ? q["module_roles"][i].get<std::string>() : "";
      for (auto& n : exp) {
        names.push_back(std::move(n));
        shapes.push_back(shape);
        roles.push_back(role);
      }
    }
  } else {
    model.skipped = "the plan's analysis (with its module names) is not available";
  }
  std::string export_type = text_of(ex.config, "model_type");
  std::string plan_type = text_of(member(plan, "model"), "model_type");
  model.checked = names.size() + 1;
  if (export_type != plan_type) model.failures.push_back({"config.json", "model_type " + plan_type, "model_type " + (export_type.empty() ? std::string("absent") : export_type)});

  Check quantized = make_check("verify.torch.quantized_tensors");
  Check untouched = make_check("verify.torch.excluded_untouched");
  Check listed = make_check("verify.torch.exclusions_listed");
  Check kv = make_check("verify.torch.kv_cache");
  FailureSink missing_sink, quant_sink, untouched_sink, listed_sink, kv_sink;
  std::map<std::string, GroupBuilder> groups;

  std::unordered_set<std::string, NameHash, std::equal_to<>> quant_params;
  for (const auto& p : layouts_root["quantization_parameters"]) quant_params.insert(p.get<std::string>());
  const std::string kv_scheme = plan.contains("kv_cache_scheme") && plan["kv_cache_scheme"].is_string() ? plan["kv_cache_scheme"].get<std::string>() : "";
  const Json* kv_layout = nullptr;
  if (!kv_scheme.empty() && layouts_root["kv_cache"].contains(kv_scheme)) kv_layout = &layouts_root["kv_cache"][kv_scheme];
  const Json& kv_any = layouts_root["kv_cache"].contains("fp8") ? layouts_root["kv_cache"]["fp8"] : Json::object();
  std::vector<std::string> kv_modules = string_list(kv_any.value("modules", Json::array()));
  const std::string kv_param = kv_any.value("tensor", "output_scale");
  auto is_kv_module = [&](std::string_view name) {
    for (const auto& m : kv_modules)
      if (name.size() > m.size() && name.ends_with(m) && name[name.size() - m.size() - 1] == '.') return true;
    return false;
  };

  // An excluded module is listed when the export's exclude covers it or the Linear child Quark's
  // module replacement gave it (a replaced router's NAME.linear: catalog replaced_module_children).
  std::vector<std::string> replaced_children;
  if (catalog.torch().contains("replaced_module_children"))
    replaced_children = string_list(catalog.torch()["replaced_module_children"].value("children", Json::array()));
  auto listed_in_export = [&](const std::string& name) {
    for (const auto& p : export_excl) {
      if (p.matches(name)) return true;
      for (const auto& c : replaced_children)
        if (p.matches(name + "." + c)) return true;
    }
    return false;
  };

  struct TensorExpectation {
    std::string param, text;
    std::vector<std::string> dtypes;
    std::vector<std::vector<uint64_t>> shapes;
    bool optional = false;
  };
  struct Expectation {
    std::vector<TensorExpectation> tensors;
    std::vector<std::string> params;
    bool expects(std::string_view p) const { return std::find(params.begin(), params.end(), p) != params.end(); }
  };
  std::map<std::tuple<std::string, uint64_t, uint64_t>, std::optional<Expectation>> expectations;
  auto expectation_for = [&](const std::string& scheme, uint64_t out, uint64_t in) -> const Expectation* {
    auto key = std::make_tuple(scheme, out, in);
    auto it = expectations.find(key);
    if (it == expectations.end()) {
      std::optional<Expectation> e;
      const Json* sch = catalog.torch_scheme(scheme);
      const Json* layout = nullptr;
      if (sch && sch->contains("hf_export") && layouts_root["layouts"].contains(text_of((*sch)["hf_export"], "layout")))
        layout = &layouts_root["layouts"][text_of((*sch)["hf_export"], "layout")];
      if (layout) {
        e.emplace();
        Dims d{out, in, 0};
        if (sch->contains("group_size") && (*sch)["group_size"].is_number_unsigned()) d.group = (*sch)["group_size"].get<uint64_t>();
        for (const auto& [p, entry] : (*layout)["tensors"].items()) {
          TensorExpectation te;
          te.param = p;
          te.dtypes = allowed_dtypes(entry, model_dtype);
          if (d.out) te.shapes = allowed_shapes(entry, d);
          te.optional = entry.value("optional", false);
          te.text = expectation(p, te.dtypes, te.shapes);
          e->params.push_back(p);
          e->tensors.push_back(std::move(te));
        }
      }
      it = expectations.emplace(key, std::move(e)).first;
    }
    return it->second ? &*it->second : nullptr;
  };
  std::set<std::string> unknown_layouts;
  const bool tied = member(member(member(analysis, "model"), "architecture"), "tie_word_embeddings").is_boolean() &&
                    member(member(member(analysis, "model"), "architecture"), "tie_word_embeddings").get<bool>();
  uint64_t tied_heads = 0;
  std::vector<std::pair<std::string, std::string>> planned_schemes;  // quantized module -> the plan's scheme
  uint64_t bytes_quant = 0, bytes_scales = 0, bytes_excluded = 0, bytes_seen = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    auto it = ex.modules.find(name);
    if (it == ex.modules.end()) {
      // An excluded tied head shares the embedding's tensor: save_pretrained writes it once.
      if (tied && roles[i] == "lm_head" &&
          std::any_of(plan_excl.begin(), plan_excl.end(), [&](const QuarkPattern& p) { return p.matches(name); })) {
        ++tied_heads;
        continue;
      }
      missing_sink.add(name, "a Linear module of the plan's model", "not in the export");
      continue;
    }
    const ModuleTensors& t = it->second;
    for (const auto& [p, x] : t) {
      bytes_seen += x.bytes;
      if (quant_params.count(p)) bytes_scales += x.bytes;
    }
    Dims d;
    d.in = shapes[i].second;
    d.out = d.in ? shapes[i].first / d.in : 0;
    bool excluded = std::any_of(plan_excl.begin(), plan_excl.end(), [&](const QuarkPattern& p) { return p.matches(name); });
    const ExportTensor* w = t.find("weight");
    if (excluded) {
      auto& g = groups["excluded (" + model_dtype + ")"];
      g.promise = "excluded (" + model_dtype + ")";
      ++untouched.checked;
      ++listed.checked;
      std::vector<std::vector<uint64_t>> want_shape;
      if (d.out) want_shape.push_back({d.out, d.in});
      std::string bad = tensor_mismatch("weight", w, {model_dtype}, want_shape);
      for (const auto& [p, x] : t)
        if (quant_params.count(p) && !(p == kv_param && is_kv_module(name) && kv_layout)) bad += std::string(bad.empty() ? "" : "; ") + "a " + p;
      if (w) bytes_excluded += w->bytes;
      if (!bad.empty()) untouched_sink.add(name, expectation("weight", {model_dtype}, want_shape) + ", no scales", bad);
      if (!export_excl.empty() && !listed_in_export(name))
        listed_sink.add(name, "covered by quantization_config.exclude", "not listed");
      (bad.empty() ? g.kept : g.broken).push_back(name);
    } else {
      std::string scheme = global;
      for (const auto& [pat, s] : override_patterns)
        if (pat.matches(name)) {
          scheme = s;
          break;
        }
      auto& g = groups[scheme];
      g.promise = scheme;
      ++quantized.checked;
      planned_schemes.emplace_back(name, scheme);
      // What the scheme writes for a module of this shape, worked out once per
      // (scheme, out, in): a MoE model repeats a few shapes 45,000 times.
      const Expectation* ex_shape = expectation_for(scheme, d.out, d.in);
      if (!ex_shape) {
        // Emulation-only formats (mx6, bfp16) have no real-quantized layout in Quark's exporter.
        unknown_layouts.insert(scheme);
        continue;
      }
      std::vector<std::string> want, got;
      for (const auto& e : ex_shape->tensors) {
        const ExportTensor* x = t.find(e.param);
        if (e.optional && !x) continue;
        std::string bad = tensor_mismatch(e.param, x, e.dtypes, e.shapes);
        if (!bad.empty()) {
          want.push_back(e.text);
          got.push_back(bad);
        }
      }
      for (const auto& [p, x] : t)
        if (quant_params.count(p) && !ex_shape->expects(p) && !(p == kv_param && is_kv_module(name))) {
          want.push_back("no " + p);
          got.push_back(found_text(p, x));
        }
      if (w) bytes_quant += w->bytes;
      if (!want.empty()) quant_sink.add(name, scheme + ": " + join(want, "; "), join(got, "; "));
      (want.empty() ? g.kept : g.broken).push_back(name);
    }
    // FP8 KV cache: the scales sit on the key and value projections.
    if (is_kv_module(name)) {
      ++kv.checked;
      const ExportTensor* s = t.find(kv_param);
      if (kv_layout) {
        auto dts = allowed_dtypes(*kv_layout, model_dtype);
        Dims none;
        auto shp = allowed_shapes(*kv_layout, none);
        std::string bad = tensor_mismatch(kv_param, s, dts, shp);
        if (!bad.empty()) kv_sink.add(name, "FP8 KV-cache scale " + expectation(kv_param, dts, shp), bad);
      } else if (s) {
        kv_sink.add(name, "no KV-cache scale (kv_cache_scheme null)", found_text(kv_param, *s));
      }
    }
  }
  for (const auto& u : unknown_layouts)
    r.notes.push_back("The catalog knows no Hugging Face export layout for " + u + " (Quark exports it only as fake-quantized float weights): its modules' tensors were not checked.");
  if (tied_heads)
    r.notes.push_back("lm_head is tied to the embedding (tie_word_embeddings): the export holds that tensor once, as the embedding, which is what the runtime reads.");
  missing_sink.flush_into(model);
  quant_sink.flush_into(quantized);
  untouched_sink.flush_into(untouched);
  listed_sink.flush_into(listed);
  if (names.empty() && model.skipped.empty()) model.skipped = "the analysis lists no Linear modules";
  if (names.empty()) {
    quantized.skipped = untouched.skipped = listed.skipped = kv.skipped = "the plan's analysis lists no modules to check";
  }
  if (kv_layout && qc.is_object()) {
    ++kv.checked;
    // Quark writes it under export (older releases also at the top level).
    const Json& exp = member(qc, "export");
    const Json& group = exp.is_object() && exp.contains("kv_cache_group") ? exp["kv_cache_group"] : member(qc, "kv_cache_group");
    if (!group.is_array() || group.empty()) {
      kv_sink.add("quantization_config.kv_cache_group", "the key/value projections (" + join(kv_modules, ", ") + ")", group.is_null() ? "absent" : group.dump());
    } else {
      // vLLM (quark.py validate_kv_cache_config) needs, per pattern, a
      // layer_quant_config entry whose output_tensors are static FP8 per tensor.
      const Json& want = member(*kv_layout, "config_output_tensors");
      const Json& elq = member(qc, "layer_quant_config");
      std::vector<std::string> patterns;
      for (const auto& g : group) {
        if (!g.is_string()) continue;
        std::string pat = g.get<std::string>();
        patterns.push_back(pat);
        ++kv.checked;
        if (!elq.is_object() || !elq.contains(pat)) {
          kv_sink.add("layer_quant_config[\"" + pat + "\"]", "an entry with FP8 output_tensors for the KV-cache group's pattern", "no such entry");
          continue;
        }
        auto diff = spec_differences("output_tensors", want, member(elq[pat], "output_tensors"));
        if (!diff.empty()) kv_sink.add("layer_quant_config[\"" + pat + "\"]", "output_tensors " + want.dump(), join(diff, "; "));
      }
      std::vector<std::string> uncovered;
      for (const auto& n : names)
        if (is_kv_module(n) && std::none_of(patterns.begin(), patterns.end(), [&](const std::string& pat) { return ::fnmatch(pat.c_str(), n.c_str(), 0) == 0; }))
          uncovered.push_back(n);
      for (const auto& n : uncovered) kv_sink.add(n, "covered by a kv_cache_group pattern", "no pattern of " + group.dump() + " matches it");
    }
  }
  if (!kv_scheme.empty() && !kv_layout) kv_sink.add("kv_cache_scheme", "a KV-cache scheme whose export layout the catalog knows", kv_scheme);
  kv_sink.flush_into(kv);
  if (kv.checked == 0 && kv.skipped.empty()) kv.skipped = "the model lists no key/value projections";

  // --- quantization_config: global scheme and overrides
  Check gs = make_check("verify.torch.global_scheme");
  Check lo = make_check("verify.torch.layer_overrides");
  auto expected_config = [&](const std::string& scheme) -> const Json* {
    const Json* s = catalog.torch_scheme(scheme);
    return s && s->contains("hf_export") && (*s)["hf_export"].contains("config") ? &(*s)["hf_export"]["config"] : nullptr;
  };
  auto compare_config = [&](Check& c, const std::string& subject, const std::string& scheme, const Json& exported) {
    ++c.checked;
    const Json* want = expected_config(scheme);
    if (!want) {
      c.failures.push_back({subject, "a scheme whose quantization_config the catalog knows", scheme});
      return;
    }
    std::vector<std::string> diff;
    for (const char* part : {"weight", "input_tensors", "output_tensors"}) {
      if (!want->contains(part)) continue;
      auto d = spec_differences(part, (*want)[part], member(exported, part));
      diff.insert(diff.end(), d.begin(), d.end());
    }
    if (!diff.empty()) c.failures.push_back({subject, scheme, join(diff, "; ")});
  };
  if (qc.is_object()) {
    compare_config(gs, "quantization_config.global_quant_config", global, member(qc, "global_quant_config"));
    const Json& elq = member(qc, "layer_quant_config");
    for (const auto& [pat, scheme] : overrides.items()) {
      if (!scheme.is_string()) continue;
      if (!elq.is_object() || !elq.contains(pat)) {
        ++lo.checked;
        lo.failures.push_back({pat, "layer_quant_config[\"" + pat + "\"] = " + scheme.get<std::string>(), "no such entry"});
        continue;
      }
      compare_config(lo, "layer_quant_config[\"" + pat + "\"]", scheme.get<std::string>(), elq[pat]);
    }
    // Quark's per-layer-type overrides ({"Linear": ...}): the plan sets none, so any would override its schemes.
    if (const Json& ltq = member(qc, "layer_type_quant_config"); ltq.is_object() && !ltq.empty()) {
      ++lo.checked;
      std::string types;
      for (const auto& [k, v] : ltq.items()) types += (types.empty() ? "" : ", ") + k;
      lo.failures.push_back({"quantization_config.layer_type_quant_config", "no per-layer-type overrides (the plan sets none)", "overrides for " + types});
    }
    if (overrides.empty() && lo.checked == 0) lo.skipped = "the plan has no layer overrides";
  } else {
    gs.skipped = lo.skipped = "the export has no quantization_config";
  }

  // --- per module: the entry a loader applies (vLLM's Quark loader: the first
  // layer_quant_config pattern that fnmatches the name, else the global config).
  Check mc = make_check("verify.torch.module_configs");
  if (qc.is_object()) {
    FailureSink mc_sink;
    const Json& elq = member(qc, "layer_quant_config");
    std::map<std::pair<std::string, std::string>, std::string> memo;  // (entry, scheme) -> differences
    for (const auto& planned : planned_schemes) {
      // (Named copies, not a structured binding: clang before 16 cannot capture those in lambdas.)
      const std::string& name = planned.first;
      const std::string& scheme = planned.second;
      ++mc.checked;
      // vLLM's Quark loader checks exclude first: such a module loads as an unquantized Linear.
      if (auto ex_it = std::find_if(export_excl.begin(), export_excl.end(), [&](const QuarkPattern& p) { return p.matches(name); }); ex_it != export_excl.end()) {
        mc_sink.add(name, scheme, "excluded by the export's exclude pattern " + ex_it->pattern() + ": a loader keeps it unquantized");
        continue;
      }
      std::string entry = "global_quant_config";
      const Json* spec = &member(qc, "global_quant_config");
      if (elq.is_object())
        for (const auto& [pat, v] : elq.items())
          if (::fnmatch(pat.c_str(), name.c_str(), 0) == 0) {
            entry = "layer_quant_config[\"" + pat + "\"]";
            spec = &v;
            break;
          }
      auto key = std::make_pair(entry, scheme);
      auto it = memo.find(key);
      if (it == memo.end()) {
        std::string diff;
        if (const Json* want = expected_config(scheme)) {
          for (const char* part : {"weight", "input_tensors"}) {
            if (!want->contains(part)) continue;
            for (const auto& d : spec_differences(part, (*want)[part], member(*spec, part))) diff += (diff.empty() ? "" : "; ") + d;
          }
        }
        it = memo.emplace(key, diff).first;
      }
      if (!it->second.empty()) mc_sink.add(name, scheme + " (the entry that applies: " + entry + ")", it->second);
    }
    mc_sink.flush_into(mc);
  } else {
    mc.skipped = "the export has no quantization_config";
  }
  if (qc.is_object() && export_excl.empty() && listed.checked) {
    listed.failures.push_back({"quantization_config.exclude", "the plan's " + std::to_string(listed.checked) + " excluded modules listed", "absent or empty"});
    listed.broken_subjects = listed.checked;
  }

  // --- size (the check itself is shared: verify.cc)
  r.exported_bytes = ex.data_bytes;
  for (const auto& w : member(member(plan, "estimates"), "weights"))
    if (text_of(w, "scheme") == global && w.contains("bytes") && w["bytes"].is_number_unsigned()) {
      r.estimated_bytes = w["bytes"].get<uint64_t>();
      break;
    }
  r.bytes = {{"quantized weights", bytes_quant}, {"scales and zero points", bytes_scales}, {"excluded modules", bytes_excluded},
             {"other tensors (embeddings, norms, non-Linear)", ex.data_bytes > bytes_seen ? ex.data_bytes - bytes_seen : 0}};

  // --- the algorithms: Quark records each one it ran in algo_config ({"name": ...}).
  Check algo = make_check("verify.torch.algorithm");
  if (qc.is_object()) {
    std::vector<std::string> planned_algos;
    if (const Json& a = member(plan, "algorithm"); a.is_string())
      for (size_t pos = 0; pos <= a.get<std::string>().size();) {
        std::string all = a.get<std::string>();
        size_t comma = all.find(',', pos);
        std::string one = all.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (!one.empty()) planned_algos.push_back(one);
        if (comma == std::string::npos) break;
        pos = comma + 1;
      }
    const Json& names_map = member(layouts_root, "algo_config_names");
    std::set<std::string> recorded;
    const Json& ac = member(qc, "algo_config");
    auto take = [&](const Json& entry) {
      if (entry.is_object() && entry.contains("name") && entry["name"].is_string()) recorded.insert(entry["name"].get<std::string>());
    };
    if (ac.is_array())
      for (const auto& e : ac) take(e);
    else
      take(ac);  // older exports: one object
    algo.checked = 1;
    std::string want, missing;
    for (const auto& a : planned_algos) {
      std::string name = text_of(names_map, a.c_str(), a);
      want += (want.empty() ? "" : ", ") + name;
      if (!recorded.count(name)) missing += (missing.empty() ? "" : ", ") + name;
      recorded.erase(name);
    }
    std::string extra;
    for (const auto& x : recorded) extra += (extra.empty() ? "" : ", ") + x;
    if (!missing.empty() || !extra.empty())
      algo.failures.push_back({"quantization_config.algo_config", want.empty() ? "no algorithm (round-to-nearest)" : want,
                               (missing.empty() ? "" : "no " + missing) + (missing.empty() || extra.empty() ? "" : "; ") + (extra.empty() ? "" : extra + " recorded")});
  } else {
    algo.skipped = "the export has no quantization_config";
  }

  // --- companion files and config fields
  Check files = make_check("verify.torch.source_files");
  std::string src = source_folder(plan, options);
  std::set<std::string> export_files(ex.files.begin(), ex.files.end());
  if (!src.empty()) {
    for (const auto& f : companion_files()) {
      fs::path sp = fs::path(src) / f;
      std::error_code ec;
      if (!fs::is_regular_file(sp, ec)) continue;
      ++files.checked;
      if (!export_files.count(f)) {
        files.failures.push_back({f, "copied from the source", "missing from the export"});
        continue;
      }
      if (file_digest(sp.string()) == file_digest((fs::path(output) / f).string())) continue;
      std::string differs = json_file_difference(sp.string(), (fs::path(output) / f).string(), f, catalog);
      if (!differs.empty()) files.failures.push_back({f, "the source's content", differs});
    }
    fs::path sc = fs::path(src) / "config.json";
    std::error_code ec;
    // A --source without its config.json: the plan's own model folder has it.
    if (!fs::is_regular_file(sc, ec)) {
      std::string mp = text_of(member(plan, "model"), "model_path");
      if (!mp.empty() && fs::is_regular_file(fs::path(mp) / "config.json", ec)) sc = fs::path(mp) / "config.json";
    }
    if (fs::is_regular_file(sc, ec)) {
      Json source_config = read_json_file(sc.string());
      for (const auto& k : kept_config_fields()) {
        if (!source_config.contains(k)) continue;
        ++files.checked;
        if (!ex.config.contains(k) || ex.config[k] != source_config[k])
          files.failures.push_back({"config.json " + k, source_config[k].dump(), ex.config.contains(k) ? ex.config[k].dump() : "absent"});
      }
    }
    if (files.checked == 0) files.skipped = "the source folder " + src + " holds no tokenizer, generation or config files";
  } else {
    // Without the source: a runtime still needs a tokenizer beside the weights.
    files.checked = 1;
    if (!export_files.count("tokenizer_config.json") && !export_files.count("tokenizer.json") && !export_files.count("tokenizer.model"))
      files.failures.push_back({"tokenizer", "tokenizer.json / tokenizer_config.json beside the weights", "none in the export"});
    r.notes.push_back("The source folder is not available (give --source DIR): tokenizer and generation files were checked for presence only.");
  }

  // --- the Quark release
  Check release = make_check("verify.torch.quark_release");
  std::string wrote;
  bool version_not_text = false;
  for (const auto& k : string_list(layouts_root.value("release_keys", Json::array()))) {
    if (qc.is_object() && qc.contains(k) && qc[k].is_string()) {
      wrote = qc[k].get<std::string>();
      break;
    }
    if (qc.is_object() && qc.contains(k) && !qc[k].is_null()) version_not_text = true;
  }
  std::string planned = text_of(plan, "catalog_quark_version");
  if (version_not_text && wrote.empty()) {
    release.checked = 1;
    release.failures.push_back({"quantization_config.version", "the release string Quark writes (quark.__version__)", "a value of another type"});
  } else if (wrote.empty() || !std::isdigit(static_cast<unsigned char>(wrote[0])))
    release.skipped = wrote.empty() ? "the export does not name the Quark release that wrote it" : "the export's version " + wrote + " is not a release number";
  else {
    release.checked = 1;
    std::string planned_release = planned.substr(0, planned.find(' '));
    auto major_minor = [](const std::string& v) {
      size_t a = v.find('.');
      size_t b = a == std::string::npos ? a : v.find('.', a + 1);
      std::string mm = v.substr(0, b);
      while (!mm.empty() && !std::isdigit(static_cast<unsigned char>(mm.back()))) mm.pop_back();
      return mm;
    };
    if (major_minor(wrote) != major_minor(planned_release))
      release.failures.push_back({"quantization_config.version", "Quark " + planned_release + " (the release whose facts the plan holds)",
                                  "written by Quark " + wrote + ": its export layout may differ from the one this plan was checked against"});
  }

  r.checks.push_back(model);
  r.checks.push_back(gs);
  r.checks.push_back(lo);
  r.checks.push_back(mc);
  r.checks.push_back(listed);
  r.checks.push_back(quantized);
  r.checks.push_back(untouched);
  r.checks.push_back(algo);
  r.checks.push_back(kv);
  r.checks.push_back(files);
  r.checks.push_back(release);
  for (auto& [k, g] : groups) r.groups.push_back(g.finish());
  return r;
}

}  // namespace quarkplan::verify::detail
