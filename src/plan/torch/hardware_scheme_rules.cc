// The accelerator, AMD's recipe, the global scheme and its hardware gate, and the KV-cache scheme.
// Rules torch.hardware.resolve, torch.recipe.amd, torch.scheme.choose, torch.scheme.hardware_gate,
// torch.scheme.risky, torch.kv_cache.fp8_only.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <regex>
#include <set>

#include "common/strings.h"
#include "common/units.h"
#include "plan/rules.h"
#include "plan/torch/rule_helpers.h"

namespace quarkplan {

namespace torch_rules {

using namespace detail;

namespace {

std::string hw_note(const PlanState& s, const std::string& family) {
  if (!s.accelerator) return "";
  const Json& notes = (*s.accelerator)["notes"];
  if (notes.contains(family)) return notes[family].get<std::string>();
  if (notes.contains("*")) return notes["*"].get<std::string>();
  return "";
}
std::string describe(const PlanState& s, const std::string& name) {
  const Json* sc = s.cat.torch_scheme(name);
  return sc ? (*sc)["description"].get<std::string>() : name;
}

// The planning guide's row for this request (export, CPU, goal, hardware).
const Json* guide_row(const PlanState& s) {
  auto row_for = [&](const char* key, const std::string& value) -> const Json* {
    for (const auto& r : s.cat.torch()["decision_guide"]) {
      if (!r.contains(key)) continue;
      if (r[key].is_string() && r[key] == value) return &r;
      if (r[key].is_array() && std::count(r[key].begin(), r[key].end(), value)) return &r;
    }
    return nullptr;
  };
  std::string hw = hw_name(s);
  const Json* row = nullptr;
  if (s.req.export_format == "gguf") row = row_for("export", "gguf");
  if (!row && hw == "cpu") row = row_for("hardware", "cpu");
  if (!row && !s.req.goal.empty()) row = row_for("goal", s.req.goal);
  if (!row && !hw.empty()) row = row_for("hardware", hw);
  if (!row) row = row_for("goal", s.goal.empty() ? "balanced" : s.goal);
  return row;
}

// Whether Quark's exporter for the plan's export takes `scheme` (catalog exports.*.schemes).
bool exportable(const PlanState& s, const std::string& scheme) {
  const Json& ex = s.cat.torch()["exports"];
  std::string e = export_key(s);
  if (!ex.contains(e) || !ex[e]["schemes"].is_array()) return true;
  return std::count(ex[e]["schemes"].begin(), ex[e]["schemes"].end(), scheme) > 0;
}

std::vector<std::string> only_exportable(const PlanState& s, const std::vector<std::string>& schemes) {
  std::vector<std::string> out;
  for (const auto& x : schemes)
    if (exportable(s, x)) out.push_back(x);
  return out;
}

// The goal's schemes, in order of preference, for the resolved accelerator.
// The goal's schemes for this hardware, in order, limited to what the plan's
// export accepts (its own list when the goal names none of them): a default
// never conflicts with the export the user asked for.
std::vector<std::string> preferred_schemes(const PlanState& s, const std::string& goal) {
  const Json& prefs = s.cat.torch()["scheme_preferences"];
  std::string hw = hw_name(s);
  std::vector<std::string> all = {"fp8"};
  bool found = false;
  for (const auto& h : prefs["hardware"])
    if (!found && std::count(h["hardware"].begin(), h["hardware"].end(), hw) && h["goals"].contains(goal)) {
      all = string_list(h["goals"][goal]);
      found = true;
    }
  if (!found && prefs["goals"].contains(goal)) all = string_list(prefs["goals"][goal]["schemes"]);
  std::vector<std::string> ok = only_exportable(s, all);
  if (ok.empty()) ok = string_list(s.cat.torch()["exports"][export_key(s)]["schemes"]);
  return ok.empty() ? all : ok;
}

// An already-quantized source's bits per weight as stored (0 when the source
// is not pre-quantized): what re-quantizing it must get below to gain anything.
double source_bits_per_weight(const PlanState& s) {
  const Json& m = s.analysis["model"];
  if (!m["pre_quantized"].is_string() || m.value("total_params", uint64_t{0}) == 0) return 0;
  return 8.0 * static_cast<double>(m.value("size_bytes", uint64_t{0})) / static_cast<double>(m["total_params"].get<uint64_t>());
}

// Whether `scheme` is meaningfully (catalog pre_quantized_gain: half a bit) smaller than the source; true when there is no source size.
bool smaller_than_source_bits(const PlanState& s, const std::string& scheme, double source_bits) {
  const Json* x = s.cat.torch_scheme(scheme);
  const double margin = s.cat.torch()["pre_quantized_gain"].value("min_bits_per_weight", 0.5);
  return source_bits <= 0 || (x && (*x)["bits_per_weight"].get<double>() < source_bits - margin);
}

// The first candidate the accelerator runs natively and the serving runtime loads for every
// layer kind the model has; else the first one only the runtime's newest code loads; else (a
// runtime with no kernels on this platform, such as transformers on a CPU) the first it emulates.
std::string first_native(const PlanState& s, const std::vector<std::string>& candidates) {
  for (const char* want : {"loads", "recent", "emulated"})
    for (const auto& c : candidates)
      if (support_of(s, c) == "native" && servable(s, c) == want) return c;
  return "";
}

}  // namespace

void resolve_hardware(PlanState& s) {
  std::string hw = s.req.hardware;
  std::string source = "--hardware";
  if (const Json* c = s.choice("hardware"); c && c->is_string()) {
    hw = *c;
    source = "your choice";
  }
  const Json& env = s.req.env_context;
  if (hw.empty() && env.is_object()) {
    const Json& h = env["hardware"];
    std::string acc = h.value("accelerator", "unknown");
    if (acc == "cpu") hw = "cpu";
    else if (acc != "unknown") {
      std::string model_name = h.contains("gpu_model") && h["gpu_model"].is_string() ? h["gpu_model"].get<std::string>() : "";
      std::string arch = h.contains("gpu_arch") && h["gpu_arch"].is_string() ? h["gpu_arch"].get<std::string>() : "";
      for (const auto& p : s.cat.hardware()["gpu_name_patterns"]) {
        std::string pat = p["pattern"];
        if ((!model_name.empty() && model_name.find(pat) != std::string::npos) || (!arch.empty() && arch == pat)) {
          hw = p["name"];
          break;
        }
      }
    }
    source = "env_context.json";
  }
  // How many accelerators: --gpus, else env_context.json's gpu_count.
  if (s.req.gpus > 0) {
    s.accelerator_count = s.req.gpus;
    s.accelerator_count_source = "--gpus";
  } else if (env.is_object() && env["hardware"].contains("gpu_count") && env["hardware"]["gpu_count"].is_number_integer() &&
             env["hardware"]["gpu_count"].get<int64_t>() > 0) {
    s.accelerator_count = env["hardware"]["gpu_count"].get<int64_t>();
    s.accelerator_count_source = "env_context.json";
  }
  if (hw.empty()) {
    s.plan["hardware"] = nullptr;
    s.question("Which accelerator will run the quantization and the model (e.g. mi300x, mi355x, h100, b200, a100, rtx4090, cpu, ryzen-ai)? It gates the scheme.");
    s.reason("hardware", "torch.hardware.resolve", "Not known yet: asked as an open question");
    return;
  }
  s.accelerator = s.cat.accelerator(hw);
  if (!s.accelerator) {
    std::vector<std::string> names;
    for (const auto& a : s.cat.hardware()["accelerators"]) names.push_back(a["name"]);
    s.error("unknown hardware '" + hw + "'" + did_you_mean(hw, names) + "; known: " + join(names));
    return;
  }
  s.plan["hardware"] = (*s.accelerator)["name"];
  s.plan["accelerator_count"] = s.accelerator_count > 0 ? Json(s.accelerator_count) : Json(nullptr);
  const Json& mg = (*s.accelerator)["memory_gib"];
  std::string mem = mg.is_number() ? ", " + format_bytes(static_cast<uint64_t>(mg.get<double>() * static_cast<double>(kGiB))) + " each" : "";
  std::string count = s.accelerator_count > 0 ? std::to_string(s.accelerator_count) + " x " : "";
  s.reason("hardware", "torch.hardware.resolve",
           (source == "your choice" ? "Your choice: " : "From " + source + ": ") + count + (*s.accelerator)["name"].get<std::string>() + " (" +
               (*s.accelerator)["arch"].get<std::string>() + mem + ")" +
               (s.accelerator_count > 0 ? "; the count from " + s.accelerator_count_source : ""));
  // Deployment-only devices (Ryzen AI PCs) run models up to a size and of the
  // families their LLM flow supports (catalog llm_limits).
  if (const Json& lim = (*s.accelerator).value("llm_limits", Json(nullptr)); lim.is_object()) {
    double params_b = static_cast<double>(model(s).value("total_params", uint64_t{0})) / 1e9;
    std::string name = (*s.accelerator)["name"];
    if (lim.contains("max_params_b") && params_b > lim["max_params_b"].get<double>()) {
      char b[32];
      std::snprintf(b, sizeof b, "%.0fB", params_b);
      s.conflict("torch.hardware.resolve", "hardware",
                 "A " + std::string(b) + "-parameter model does not run on " + name + ": " + lim["why"].get<std::string>() + ".",
                 "an Instinct or data-center GPU (e.g. --hardware mi300x), or a model of at most " + lim["max_params_b"].dump() + "B");
    } else if (lim.contains("model_types") && !std::count(lim["model_types"].begin(), lim["model_types"].end(), model_type(s))) {
      s.risk("torch.hardware.resolve", "high",
             "Model type '" + model_type(s) + "' is not among the families " + name + "'s LLM flow supports (" + join(string_list(lim["model_types"])) + ").",
             "Check AMD's Ryzen AI model list before quantizing, or deploy on a GPU.");
    }
  }
}

// The published checkpoint of a recipe closest to this model: the one whose
// name carries the model's size ("8B", "70B"), else the recipe's own id.
std::string published_name(const PlanState& s, const Json& recipe) {
  std::string path = s.analysis["model"].value("model_path", std::string());
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  std::transform(base.begin(), base.end(), base.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  static const std::regex size(R"((^|[-_])(\d+(\.\d+)?b)([-_]|$))");
  std::smatch m;
  if (std::regex_search(base, m, size))
    for (const auto& p : recipe.value("published", Json::array())) {
      std::string name = p.get<std::string>(), low = name;
      std::transform(low.begin(), low.end(), low.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      if (low.find("-" + m[2].str() + "-") != std::string::npos) return name;
    }
  return recipe["id"].get<std::string>();
}

void amd_recipe(PlanState& s) {
  s.goal = s.req.goal.empty() ? s.cat.torch()["default_goal"].get<std::string>() : s.req.goal;
  if (!s.accelerator || s.req.export_format == "gguf" || s.req.export_format == "onnx") return;
  std::string mt = model_type(s), hw = hw_name(s);
  for (const auto& r : s.cat.torch()["amd_recipes"]) {
    if (!std::count(r["model_types"].begin(), r["model_types"].end(), mt)) continue;
    if (!std::count(r["hardware"].begin(), r["hardware"].end(), hw)) continue;
    if (!std::count(r["goals"].begin(), r["goals"].end(), s.goal)) continue;
    if (support_of(s, r["scheme"]) != "native") continue;  // a recipe is followed only where it runs natively
    if (servable(s, r["scheme"]) != "loads") continue;  // and where the runtime serving it loads it
    // nor for models much smaller than the ones AMD released it for (small models lose more at 4 bits)
    if (r.contains("min_params_b") && static_cast<double>(model(s).value("total_params", uint64_t{0})) < r["min_params_b"].get<double>() * 1e9) continue;
    if (!smaller_than_source_bits(s, r["scheme"], source_bits_per_weight(s))) continue;  // nor to re-quantize a source no smaller
    if (const Json* c = s.choice("global_scheme"); c && *c != r["scheme"]) continue;  // nor against the user's scheme
    s.recipe = &r;
    s.recipe_name = published_name(s, r);
    s.reason("amd_recipe", "torch.recipe.amd",
             "AMD's recipe: " + s.recipe_name + " (published for " + mt + " on " + join(string_list(r["hardware"])) + "): " +
                 r["command"].get<std::string>());
    return;
  }
}

namespace {
// A row's reason without the rule tags it ends with ("... [torch.x.y]").
std::string reason_text(const PlanState& s, const std::string& key) {
  if (!s.reasons.contains(key) || !s.reasons[key].is_string()) return "";
  std::string t = s.reasons[key];
  if (auto tag = t.find(" [torch."); tag != std::string::npos) t.resize(tag);
  return t;
}
std::string strategy_text(const PlanState& s, const std::string& st) {
  if (st == "multi_gpu") return "--multi_gpu";
  if (st == "file2file") return s.cat.file2file_flag_text();
  if (st == "per_block") return "--quant_flow per_block";
  if (st == "multi_device") return "--multi_device";
  if (st == "cpu") return "--device cpu";
  return "one GPU";
}
// A reason continued after "because": its first word in lower case, unless it is a name ("AMD's", "FP8").
std::string decap(std::string t) {
  if (t.size() > 1 && std::isupper(static_cast<unsigned char>(t[0])) && std::islower(static_cast<unsigned char>(t[1])))
    t[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(t[0])));
  return t;
}
std::string value_text(const Json& v) { return v.is_null() ? "none" : v.is_string() ? v.get<std::string>() : v.dump(); }
// The models AMD published a recipe's checkpoints from: each published id without "amd/" and the
// trailing words that name the quantization (catalog amd_recipe_name_tokens: FP8, KV, MXFP4, ...).
std::vector<std::string> card_models(const PlanState& s, const Json& recipe) {
  const Json tokens = s.cat.torch().value("amd_recipe_name_tokens", Json::array());
  std::vector<std::string> out;
  for (const auto& id : recipe.value("published", Json::array())) {
    std::string name = id.get<std::string>();
    if (name.rfind("amd/", 0) == 0) name = name.substr(4);
    for (size_t dash; (dash = name.rfind('-')) != std::string::npos;) {
      const std::string word = lower(name.substr(dash + 1));
      bool quant = false;
      for (const auto& tk : tokens) quant = quant || lower(tk.get<std::string>()) == word;
      if (!quant) break;
      name.resize(dash);
    }
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}
}  // namespace

// Everything AMD's card does that the plan does not, named with the plan's reason: a recipe is
// applied whole, or the difference is said ("AMD's card: X; this plan: Y, because ...").
void recipe_differences(PlanState& s) {
  if (!s.recipe) return;
  const Json& r = *s.recipe;
  std::vector<std::string> diffs;
  auto differ = [&](const std::string& card, const std::string& plan, const std::string& because) {
    diffs.push_back("AMD's card: " + card + "; this plan: " + plan + (because.empty() ? "" : ", because " + because));
  };
  const Json& m = model(s);
  if (r.contains("quantized_from") && m["pre_quantized"].is_string())
    differ("quantized from " + r["quantized_from"].get<std::string>(), "from the " + m["pre_quantized"].get<std::string>() + " checkpoint as stored",
           "that is the model given (the result is bounded by its quality; convert it to BF16 first to match the card)");
  // The checkpoint itself: AMD measured the recipe on the models it published; another model of the
  // family (Llama-3.1-70B under the Llama-3.3-70B-Instruct card) gets the recipe untested.
  bool other_model = false;
  {
    std::string folder = m.value("model_path", std::string());
    while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
    if (auto slash = folder.find_last_of('/'); slash != std::string::npos) folder = folder.substr(slash + 1);
    const std::vector<std::string> cards = card_models(s, r);
    bool same = false;
    for (const auto& c : cards) same = same || lower(c) == lower(folder);
    other_model = !folder.empty() && !cards.empty() && !same;
    if (other_model)
      differ("made for " + join(cards), "quantizes " + folder,
             "AMD applies the recipe to its family (" + join(string_list(r["model_types"])) + "), but published no checkpoint of this model: its accuracy is unmeasured, so evaluate it before serving");
  }
  if (r.contains("card_model_type") && r["card_model_type"] != model_type(s) && !other_model)
    differ("made for " + r["card_model_type"].get<std::string>(), model_type(s),
           "the recipe is followed for the family (" + join(string_list(r["model_types"])) + ": the same layout)");
  const std::string strategy = s.plan.value("device_strategy", "");
  if (r.contains("device_strategy") && r["device_strategy"].is_string() && !strategy.empty() && r["device_strategy"] != strategy)
    differ(strategy_text(s, r["device_strategy"]), strategy_text(s, strategy), decap(reason_text(s, "device_strategy")));
  // Quark 0.13 runs file-to-file with one worker per visible GPU (not from an FP8 source): the card ran one.
  if (r.value("device_strategy", "") == "file2file" && strategy == "file2file" &&
      s.cat.torch()["device_facts"]["file2file"].value("multi_gpu", false) && s.accelerator_count > 1 && m["pre_quantized"] != "fp8")
    differ(s.cat.file2file_flag_text() + " on one GPU", "--multi_gpu over " + std::to_string(s.accelerator_count) + " GPUs",
           "Quark " + s.cat.release() + " runs file-to-file with one worker per visible GPU");
  if (r.value("skip_evaluation", false) && s.plan.value("evaluation_intent", "none") != "none")
    differ("--skip_evaluation", s.plan["evaluation_intent"].get<std::string>() + " evaluation", decap(reason_text(s, "evaluation_intent")));
  // (A file-to-file card evaluated nothing either: the script returns after writing the shards.)
  if (!r.value("skip_evaluation", false) && r["command"].get<std::string>().find("--skip_evaluation") == std::string::npos &&
      r.value("device_strategy", "") != "file2file" && s.plan.value("evaluation_intent", "") == "none")
    differ("evaluation after quantizing", "--skip_evaluation", decap(reason_text(s, "evaluation_intent")));
  // The card's exclusions for parts this model does not have: kept (harmless), and said.
  if (!s.choice("exclude_layers") && r.contains("exclude_layers") && r["exclude_layers"].is_array() && !s.modules().empty()) {
    std::vector<std::string> none;
    const Json planned = s.plan.value("exclude_layers", Json::array());
    for (const auto& p : r["exclude_layers"]) {
      if (!p.is_string()) continue;
      const std::string text = p.get<std::string>();
      if (!std::count(planned.begin(), planned.end(), p)) {
        // Replaced by the router's own name (torch.exclude.template_defaults says why).
        if (text.ends_with(".*") && std::count(planned.begin(), planned.end(), Json(text.substr(0, text.size() - 2))))
          differ("--exclude_layers '" + text + "'", "'" + text.substr(0, text.size() - 2) + "'",
                 "the card's pattern names only the Linear child Quark 0.12 gives a router it loads in memory; file-to-file and Quark 0.13 see the router as the Linear itself");
        continue;
      }
      QuarkPattern qp(p.get<std::string>(), s.exclude_match());
      bool any = false;
      for (const auto& mod : s.modules()) any = any || qp.matches(mod);
      if (!any) none.push_back("'" + p.get<std::string>() + "'");
    }
    if (!none.empty())
      differ("--exclude_layers " + join(none, " "), "the same patterns, which match nothing here", "this model has no such modules (kept: they exclude nothing)");
  }
  if (r.contains("kv_cache") && value_text(r["kv_cache"]) != value_text(s.plan.value("kv_cache_scheme", Json(nullptr))))
    differ("KV cache " + value_text(r["kv_cache"]), "KV cache " + value_text(s.plan.value("kv_cache_scheme", Json(nullptr))), decap(reason_text(s, "kv_cache_scheme")));
  if (r.contains("algorithm") && value_text(r["algorithm"]) != value_text(s.plan.value("algorithm", Json(nullptr))))
    differ("algorithm " + value_text(r["algorithm"]), "algorithm " + value_text(s.plan.value("algorithm", Json(nullptr))), decap(reason_text(s, "algorithm")));
  if (strategy != "file2file") {
    const Json cal = s.plan.value("calibration", Json::object());
    if (r.contains("num_calib_data") && cal.is_object() && cal.contains("num_calib_data") && cal["num_calib_data"] != r["num_calib_data"])
      differ(r["num_calib_data"].dump() + " calibration samples", cal["num_calib_data"].dump(), decap(reason_text(s, "calibration.num_calib_data")));
    if (r.contains("dataset") && cal.is_object() && cal.contains("dataset") && cal["dataset"] != r["dataset"])
      differ("calibration on " + value_text(r["dataset"]), value_text(cal["dataset"]), decap(reason_text(s, "calibration.dataset")));
  }
  if (s.choice("exclude_layers") && r.contains("exclude_layers") && r["exclude_layers"].is_array())
    differ("--exclude_layers " + join(string_list(r["exclude_layers"]), " "), "your exclusions", "you chose them (--exclude replaces the card's)");
  if (r.value("trust_remote_code", false) && !s.plan.value("trust_remote_code", false))
    differ("--trust_remote_code", "--no_trust_remote_code", decap(reason_text(s, "trust_remote_code")));
  if (!diffs.empty()) s.reason("amd_recipe.differences", "torch.recipe.differences", join(diffs, "; "));
}

void choose_scheme(PlanState& s) {
  s.plan["goal"] = s.goal;
  const Json* guide = guide_row(s);
  if (const Json* c = s.choice("global_scheme")) {
    std::string name = c->is_string() ? c->get<std::string>() : c->dump();
    s.plan["global_scheme"] = name;
    if (!s.cat.torch_scheme(name)) {
      const Json& legacy = s.cat.torch()["legacy_scheme_names"]["names"];
      if (legacy.contains(name))
        s.error("'" + name + "' is the scheme's name before Quark 0.11 (older AMD model cards use it); today's quantize_quark.py calls it " +
                legacy[name].get<std::string>());
      else if (std::string rel = s.other_release_where([&](const Catalog& c) { return c.torch_scheme(name) != nullptr; }); !rel.empty())
        s.error("scheme '" + name + "' is Quark " + rel + "'s, not Quark " + s.cat.release() + "'s, which this plan is for: plan with --quark-version " + rel +
                " (quarkplan catalog torch --quark-version " + rel + " lists its schemes)");
      else
        s.error("unknown scheme '" + name + "'" + did_you_mean(name, scheme_names(s)) + "; list them with `quarkplan catalog torch --quark-version " +
                s.cat.release() + "`");
      return;
    }
    s.reason("global_scheme", "torch.scheme.choose", "Your choice: " + describe(s, name));
    return;
  }
  std::string chosen, why;
  Json alternatives = Json::array();
  // An alternative the export rejects is none, nor one the serving runtime cannot load (except
  // the planning guide's own choice, shown with why it is not the default).
  auto add_alt = [&](const std::string& sch, const std::string& source, std::string note, bool guide = false) {
    if (sch.empty() || sch == chosen || !exportable(s, sch)) return;
    if (std::string l = servable(s, sch); l == "refused" || l == "emulated") {
      if (!guide) return;
      note += std::string(note.empty() ? "" : "; ") + (*s.runtime)["label"].get<std::string>() + (l == "refused" ? " cannot load it" : " only emulates it");
    }
    for (const auto& a : alternatives)
      if (a["scheme"] == sch) return;
    alternatives.push_back({{"scheme", sch}, {"source", source}, {"note", note}});
  };
  // The guide's choice, and why the default differs from it (hardware facts or size).
  auto guide_alternative = [&]() {
    if (!guide) return;
    std::string g = (*guide)["scheme"];
    if (g == chosen) return;
    std::string level = support_of(s, g), note;
    if (level == "unsupported") return;  // the guide's row cannot run here at all: no alternative (catalog guide_deviations says so)
    if (!level.empty() && level != "native") {
      const Json* gsc = s.cat.torch_scheme(g);
      std::string hn = gsc ? hw_note(s, (*gsc)["family"]) : "";
      note = g + " is " + (level == "weight_only" ? "weight-only" : level) + " on " + hw_name(s) + (hn.empty() ? "" : ". " + hn);
    } else if (const Json *gsc = s.cat.torch_scheme(g), *csc = s.cat.torch_scheme(chosen);
               gsc && csc && (*gsc)["bits_per_weight"].get<double>() > (*csc)["bits_per_weight"].get<double>()) {
      note = g + " is larger (" + (*gsc)["bits_per_weight"].dump() + " vs " + (*csc)["bits_per_weight"].dump() + " bits per weight) and more accurate";
    } else {
      note = (*guide)["reason"].get<std::string>();
    }
    add_alt(g, "Quark's planning guide", note, true);
  };

  if (s.req.export_format == "gguf" && guide && guide->contains("export")) {
    chosen = (*guide)["scheme"];
    why = "Quark's planning guide: " + (*guide)["reason"].get<std::string>() + " (Quark's GGUF exporter accepts only this scheme)";
    if ((*guide)["algorithm"].is_string() && !s.choice("algorithm")) s.plan["guide_algorithm"] = (*guide)["algorithm"];
  } else if (s.recipe) {
    chosen = (*s.recipe)["scheme"];
    why = "AMD's recipe (" + s.recipe_name + "): " + describe(s, chosen) + ", native on " + hw_name(s);
    if ((*s.recipe)["algorithm"].is_string() && !s.choice("algorithm")) s.plan["guide_algorithm"] = (*s.recipe)["algorithm"];
    guide_alternative();
  } else if (!s.accelerator) {
    chosen = guide ? (*guide)["scheme"].get<std::string>() : "fp8";
    why = "Quark's planning guide: " + (guide ? (*guide)["reason"].get<std::string>() : std::string("FP8")) +
          " (checked against the hardware once it is known)";
    if (!exportable(s, chosen)) {
      chosen = preferred_schemes(s, s.goal).front();
      why = describe(s, chosen) + ", the first scheme of the " + s.goal + " goal that Quark's " + export_key(s) +
            " export accepts (checked against the hardware once it is known)";
    }
    if (guide && (*guide)["algorithm"].is_string() && !s.choice("algorithm")) s.plan["guide_algorithm"] = (*guide)["algorithm"];
  } else {
    auto prefs = preferred_schemes(s, s.goal);
    chosen = first_native(s, prefs);
    const Json& goal_pref = s.cat.torch()["scheme_preferences"]["goals"][s.goal];
    // An already-quantized source: re-quantizing to its own size or larger
    // gains nothing, so the default is the first native scheme smaller than
    // the source (the goal's, else any goal's), when there is one.
    std::string smaller_than_source;
    double source_bits = source_bits_per_weight(s);
    auto below_source = [&](const std::string& c) { return smaller_than_source_bits(s, c, source_bits); };
    // Only the goals that ask for a smaller model trade precision for it: balanced and accuracy keep
    // their own choice, and a plan no smaller than the source becomes "serve the source as it is"
    // (torch.pre_quantized.dequantized), never a coarser re-quantization.
    if (source_bits > 0 && s.goal != "balanced" && s.goal != "accuracy") {
      auto smaller = [&](const std::vector<std::string>& list) {
        std::vector<std::string> out;
        for (const auto& c : list)
          if (below_source(c)) out.push_back(c);
        return out;
      };
      // Smaller is the point here: the size goal's order (MXFP4 on CDNA4,
      // NVFP4 on Blackwell, INT4 elsewhere) unless accuracy was asked for.
      std::vector<std::string> order = s.goal == "accuracy" ? prefs : preferred_schemes(s, "size");
      for (const char* g : {s.goal.c_str(), "balanced", "size", "experiment"})
        for (const auto& c : preferred_schemes(s, g)) order.push_back(c);
      smaller_than_source = first_native(s, smaller(order));
      if (!smaller_than_source.empty() && smaller_than_source != chosen) {
        char bits[16];
        std::snprintf(bits, sizeof bits, "%.1f", source_bits);
        chosen = smaller_than_source;
        why = describe(s, chosen) + ", the first scheme " + hw_name(s) + " runs natively that is smaller than the " +
              model(s)["pre_quantized"].get<std::string>() + " source (" + bits + " bits per weight as stored)";
      }
    }
    if (!why.empty()) {
    } else if (chosen.empty()) {
      // Nothing the goal prefers is native here: the most useful native scheme of any goal.
      chosen = first_native(s, only_exportable(s, {"fp8", "int8", "int4_wo_128", "uint4_wo_128", "mxfp4", "nvfp4"}));
      if (chosen.empty()) chosen = prefs.front();
      why = "No scheme of the " + s.goal + " goal runs natively on " + hw_name(s) + ": " + describe(s, chosen) + " does";
    } else {
      why = describe(s, chosen) + ", the first scheme of the " + s.goal + " goal that " + hw_name(s) + " runs natively";
    }
    if (goal_pref.contains("algorithm") && is_int4_weight_only(s.cat.torch_scheme(chosen)) && !s.choice("algorithm"))
      s.plan["guide_algorithm"] = goal_pref["algorithm"];
    if (goal_pref.contains("layer_quant_config") && !s.choice("layer_quant_config")) {
      Json lqc = Json::object();
      for (auto& [pat, options] : goal_pref["layer_quant_config"].items()) {
        std::string native = first_native(s, only_exportable(s, string_list(options)));
        if (!native.empty() && native != chosen) lqc[pat] = native;
      }
      if (!lqc.empty()) s.plan["guide_layer_quant_config"] = lqc;
    }
    // A group-quantized default whose groups some Linear's input features do not hold whole (Nemotron-H's
    // 1856, gemma-4's 704 with groups of 128): the largest group of the same family that divides them all,
    // where the hardware and the runtime take it (loaders raise on a partial group).
    if (const Json* sc = s.cat.torch_scheme(chosen); sc && (*sc)["group_size"].is_number_integer()) {
      std::set<uint64_t> ins;
      for (size_t i = 0; i < s.modules().size() && i < s.module_shapes.size(); ++i)
        if (i >= s.module_roles.size() || (s.module_roles[i] != "lm_head" && s.module_roles[i] != "router" && s.module_roles[i] != "vision" &&
                                           s.module_roles[i] != "audio" && s.module_roles[i] != "projector"))
          ins.insert(s.module_shapes[i].second);  // (towers and routers stay in 16-bit)
      auto divides = [&](int64_t group) {
        for (uint64_t in : ins)
          if (in > 0 && in % static_cast<uint64_t>(group) != 0) return false;
        return true;
      };
      const int64_t group = (*sc)["group_size"].get<int64_t>();
      if (!divides(group)) {
        std::string best;
        int64_t best_group = 0;
        for (const auto& x : s.cat.torch()["schemes"])
          if (x["family"] == (*sc)["family"] && x["group_size"].is_number_integer() && x["group_size"].get<int64_t>() > best_group &&
              divides(x["group_size"].get<int64_t>()) && support_of(s, x["name"]) == "native" && exportable(s, x["name"]) &&
              (servable(s, x["name"]) == "loads" || servable(s, x["name"]) == "recent")) {
            best = x["name"];
            best_group = x["group_size"].get<int64_t>();
          }
        if (!best.empty()) {
          uint64_t odd = 0;
          for (uint64_t in : ins)
            if (in > 0 && in % static_cast<uint64_t>(group) != 0) odd = in;
          why = describe(s, best) + ": " + chosen + "'s groups of " + std::to_string(group) + " do not divide the " + std::to_string(odd) +
                " input features of some of this model's Linear layers, which the runtime's loaders need whole; groups of " + std::to_string(best_group) + " do";
          chosen = best;
        }
      }
    }
    // A MoE model whose goal scheme the runtime's released loaders do not take: the goal's MoE
    // composition (AMD's W4A8: FP8 layers, INT4-weight FP8-activation experts) where each part runs
    // natively and loads for its layer kind, and its pattern matches the model's experts.
    // Per-layer schemes the user gave (--layer-scheme, --set layer_quant_config...) are the user's: the
    // goal adds none of its own beside them.
    bool user_layer_schemes = s.choice("layer_quant_config") != nullptr;
    for (const auto& kv : s.req.choices) user_layer_schemes = user_layer_schemes || kv.first.rfind("layer_quant_config.", 0) == 0;
    if (goal_pref.contains("moe") && model(s).value("is_moe", false) && s.runtime && servable(s, chosen) != "loads" && !user_layer_schemes) {
      const Json& moe = goal_pref["moe"];
      auto loads = [&](const std::string& kind, const std::string& sch) {
        return support_of(s, sch) == "native" && exportable(s, sch) && runtime_load(*s.runtime, s.platform, kind, sch, model_type(s)).level == "loads";
      };
      std::string global;
      for (const auto& g : moe["schemes"])
        if (global.empty() && loads("dense", g)) global = g;
      Json lqc = Json::object();
      std::string parts;
      for (auto& [pat, options] : moe["layer_quant_config"].items()) {
        QuarkPattern qp(pat, PatternMatch::kVerbatim);
        size_t n = 0;
        for (size_t i = 0; i < s.modules().size(); ++i) n += qp.matches(s.modules()[i]) && i < s.module_roles.size() && s.module_roles[i] == "expert" ? 1 : 0;
        for (const auto& o : options)
          if (!lqc.contains(pat) && n > 0 && loads("experts", o)) lqc[pat] = o, parts += "; '" + pat + "' gives " + o.get<std::string>() + " to " + std::to_string(n) + " expert modules";
      }
      if (!global.empty() && lqc.size() == moe["layer_quant_config"].size()) {
        const std::string was = chosen;
        chosen = global;
        why = describe(s, chosen) + " with " + lqc.begin().value().get<std::string>() + " experts, the " + s.goal + " goal for MoE on " + hw_name(s) + ": " +
              moe["why"].get<std::string>() + parts + "; " + was + " experts load in " + (*s.runtime)["label"].get<std::string>() + "'s newest code only";
        s.plan["guide_layer_quant_config"] = lqc;
        s.plan["guide_layer_quant_config_who"] = "The " + s.goal + " goal for MoE models (AMD's W4A8)";
        s.plan.erase("guide_algorithm");
        add_alt(was, "the " + s.goal + " goal", (*s.runtime)["label"].get<std::string>() + " loads it for experts only in its newest code");
      }
    }
    guide_alternative();
    for (const auto& p : prefs)
      if (support_of(s, p) == "native")
        add_alt(p, "the " + s.goal + " goal",
                below_source(p) ? "also native on " + hw_name(s) : "native on " + hw_name(s) + ", but no smaller than the source");
  }
  s.plan["global_scheme"] = chosen;
  s.plan["alternatives"] = alternatives;
  // Alternatives with the same source and note are named together.
  std::string alt_text;
  for (size_t i = 0; i < alternatives.size() && alt_text.size() <= 400;) {
    const Json& a = alternatives[i];
    std::string names = a["scheme"];
    size_t j = i + 1;
    for (; j < alternatives.size() && alternatives[j]["source"] == a["source"] && alternatives[j]["note"] == a["note"]; ++j)
      names += ", " + alternatives[j]["scheme"].get<std::string>();
    if (!alt_text.empty()) alt_text += "; ";
    alt_text += names + " (" + a["source"].get<std::string>() + (a["note"].get<std::string>().empty() ? "" : ": " + a["note"].get<std::string>()) + ")";
    i = j;
  }
  s.reason("global_scheme", "torch.scheme.choose",
           why + (s.req.goal.empty() ? " (no --goal given: " + s.goal + " is the default goal)" : "") +
               (alt_text.empty() ? "" : "; alternatives: " + alt_text));
}

namespace {
// Gate one scheme on the accelerator; `where` names the decision it came from.
void gate_scheme(PlanState& s, const std::string& name, const std::string& decision, const std::string& where, bool user) {
  const Json* sc = s.cat.torch_scheme(name);
  if (!sc || !s.accelerator) return;
  std::string fam = (*sc)["family"], level = support(s, fam), hw = hw_name(s), note = hw_note(s, fam);
  std::string native_alt;
  for (const auto& c : preferred_schemes(s, s.goal.empty() ? "balanced" : s.goal))
    if (support_of(s, c) == "native" && c != name) {
      native_alt = c;
      break;
    }
  if (native_alt.empty()) native_alt = first_native(s, {"fp8", "int8", "int4_wo_128", "uint4_wo_128"});
  if (level == "emulated" || level == "unsupported") {
    std::string what = level == "emulated" ? "has no kernels on " + hw + ": it only runs through an emulation path (no speed-up, research only)"
                                           : "cannot run on " + hw;
    s.conflict("torch.scheme.hardware_gate", decision, where + name + " " + what + "." + (note.empty() ? "" : " " + note + "."),
               native_alt.empty() ? "a scheme native to " + hw + " (quarkplan catalog torch)" : native_alt + " (native on " + hw + ")");
  } else if (level == "weight_only" && !(*sc)["weight_only"].get<bool>()) {
    s.risk("torch.scheme.hardware_gate", user ? "medium" : "high",
           where + name + " quantizes activations, but " + hw + " has no " + fam + " compute: it runs weight-only (weights dequantized to 16-bit)." +
               (note.empty() ? "" : " " + note + "."),
           native_alt.empty() ? "Pick a scheme native to " + hw + "." : "For real speed-ups on " + hw + " use " + native_alt + " (native).");
  }
}
}  // namespace

void scheme_hardware(PlanState& s) {
  const Json* sc = scheme(s);
  if (!sc || !s.accelerator) return;
  std::string fam = (*sc)["family"], level = support(s, fam), name = (*sc)["name"], hw = hw_name(s), note = hw_note(s, fam);
  // Every layer_quant_config entry runs on the same accelerator: the support
  // the plan reports is the weakest of all the schemes it uses.
  static const std::vector<std::string> order = {"native", "weight_only", "emulated", "unsupported"};
  std::string worst = level;
  for (const auto& [k, v] : s.req.choices)
    if ((k == "layer_quant_config" && v.is_object()) || k.rfind("layer_quant_config.", 0) == 0) {
      std::vector<std::pair<std::string, std::string>> entries;
      if (v.is_object())
        for (auto& [p, x] : v.items()) entries.emplace_back(p, x.is_string() ? x.get<std::string>() : "");
      else entries.emplace_back(k.substr(19), v.is_string() ? v.get<std::string>() : "");
      for (auto& [p, x] : entries) {
        gate_scheme(s, x, "layer_quant_config", "layer_quant_config['" + p + "']: ", true);
        std::string l = support_of(s, x);
        if (!l.empty() && std::find(order.begin(), order.end(), l) > std::find(order.begin(), order.end(), worst)) worst = l;
      }
    }
  s.plan["hardware_support"] = worst;
  gate_scheme(s, name, "global_scheme", "", s.choice("global_scheme") != nullptr);
  if (level == "native") {
    s.reason("hardware_support", "torch.scheme.hardware_gate",
             name + " runs natively on " + hw + (worst != "native" ? " (a layer override runs " + worst + ")" : "") + "." + (note.empty() ? "" : " " + note + "."));
    if (fam == "fp8" && (*s.accelerator)["fp8_format"] == "fnuz")
      s.risk("torch.scheme.hardware_gate", "low", hw + " computes FP8 as FNUZ: OCP e4m3fn checkpoints are converted at load.",
             "Nothing to do; the runtime (vLLM/aiter) converts the scales.");
  } else if (level == "weight_only") {
    s.reason("hardware_support", "torch.scheme.hardware_gate", name + " runs weight-only on " + hw + " (weights dequantized, 16-bit compute)." + (note.empty() ? "" : " " + note + "."));
  } else {
    s.reason("hardware_support", "torch.scheme.hardware_gate", name + " is " + level + " on " + hw + "." + (note.empty() ? "" : " " + note + "."));
  }
}

void scheme_risky(PlanState& s) {
  const Json* sc = scheme(s);
  if (!sc) return;
  if ((*sc)["risk"].is_string())
    s.risk("torch.scheme.risky", (*sc)["experimental"].get<bool>() ? "high" : "medium", (*sc)["risk"].get<std::string>() + ".",
           "Keep it if intended; evaluate with evaluation_intent=full before deploying.");
}

void kv_cache(PlanState& s) {
  s.plan["kv_cache_scheme"] = nullptr;
  const Json* c = s.choice("kv_cache_scheme");
  // The accuracy goal never quantizes the KV cache of its own accord (it costs accuracy).
  if (!c && s.recipe && (*s.recipe)["kv_cache"].is_string() && s.goal != "accuracy") {
    s.plan["kv_cache_scheme"] = (*s.recipe)["kv_cache"];
    s.reason("kv_cache_scheme", "torch.kv_cache.fp8_only",
             "AMD's recipe (" + s.recipe_name + "): FP8 KV cache (--kv_cache_dtype fp8; serve with --kv-cache-dtype fp8)");
    return;
  }
  if (!c || c->is_null() || (c->is_string() && (*c == "none" || *c == "null"))) {
    // AMD's recipe for the model may quantize the KV cache (its card's point, e.g. *-FP8-KV): a
    // null the user chose over it names what it gives up, never that the recipe agrees.
    std::string recipe_note;
    if (s.recipe && (*s.recipe)["kv_cache"].is_string())
      recipe_note = "; AMD's recipe " + s.recipe_name + " quantizes it to " + (*s.recipe)["kv_cache"].get<std::string>() +
                    " (--kv_cache_dtype " + (*s.recipe)["kv_cache"].get<std::string>() + ", about half the 16-bit KV cache's memory): the alternative";
    else if (s.recipe)
      recipe_note = "; " + s.recipe_name + " leaves it in 16-bit too";
    s.reason("kv_cache_scheme", "torch.kv_cache.fp8_only",
             std::string(c ? "Your choice: " : "") + "null: not requested (KV-cache quantization typically costs accuracy" + recipe_note + ")");
    return;
  }
  const Json& allowed = s.cat.torch()["kv_cache"]["schemes"];
  if (!c->is_string() || !std::count(allowed.begin(), allowed.end(), *c)) {
    s.error("kv_cache_scheme must be fp8 or null: Quark's templates support only fp8 (got " + c->dump() + ")");
    return;
  }
  s.plan["kv_cache_scheme"] = *c;
  s.reason("kv_cache_scheme", "torch.kv_cache.fp8_only", "Your choice: FP8 KV cache (--kv_cache_dtype fp8, min_kv_scale 0.0)");
  if (s.accelerator && support(s, "fp8") != "native")
    s.risk("torch.kv_cache.fp8_only", "medium", "FP8 KV cache on " + hw_name(s) + ", which has no FP8 compute: the cache is stored in FP8 and upcast for attention.",
           "Keep the KV cache in 16-bit on this accelerator unless memory is the limit.");
  const Json* sc = scheme(s);
  if (sc && (*sc)["family"] != "fp8")
    s.risk("torch.kv_cache.fp8_only", "low", "FP8 KV cache with a non-FP8 scheme (" + (*sc)["name"].get<std::string>() + "): check the runtime supports the mix.",
           "vLLM supports an FP8 KV cache with any weight scheme; other runtimes may not.");
}

}  // namespace torch_rules
}  // namespace quarkplan
