// The algorithms (AWQ, GPTQ, SmoothQuant, ...), the calibration data and the evaluation intent.
// Rules torch.algorithm.*, torch.calibration.defaults, torch.calibration.data, torch.evaluation_intent.
#include <algorithm>
#include <set>

#include "common/strings.h"
#include "plan/rules.h"
#include "plan/torch/rule_helpers.h"

namespace quarkplan {

namespace torch_rules {

using namespace detail;

void choose_algorithm(PlanState& s) {
  std::vector<std::string> algos;
  if (const Json* c = s.choice("algorithm")) {
    if (c->is_null()) algos = {};
    else if (c->is_array()) algos = string_list(*c);
    else if (c->is_string()) {
      std::string v = c->get<std::string>(), cur;
      for (char ch : v + ",")
        if (ch == ',') {
          if (!cur.empty()) algos.push_back(lower(cur));
          cur.clear();
        } else if (ch != ' ') cur += ch;
    } else {
      s.error("algorithm must be a name or a comma-separated list, not " + c->dump());
      return;
    }
    algos.erase(std::remove(algos.begin(), algos.end(), "none"), algos.end());
    std::vector<std::string> known;
    for (const auto& a : s.cat.torch()["algorithms"]) known.push_back(a["name"]);
    for (const auto& a : algos)
      if (!s.cat.torch_algorithm(a)) {
        if (std::string rel = s.other_release_where([&](const Catalog& c) { return c.torch_algorithm(a) != nullptr; }); !rel.empty())
          s.error("algorithm '" + a + "' is Quark " + rel + "'s, not Quark " + s.cat.release() + "'s, which this plan is for: plan with --quark-version " + rel);
        else
          s.error("unknown algorithm '" + a + "'" + did_you_mean(a, known) + " (Quark " + s.cat.release() + "'s --quant_algo takes " + join(known) + ")");
      }
    s.reason("algorithm", "torch.algorithm.choose", algos.empty() ? "Your choice: none" : "Your choice");
  } else if (const Json* d = s.choice("device_strategy"); d && *d == "file2file") {
    s.reason("algorithm", "torch.algorithm.choose", "None: file-to-file quantization (your device_strategy) applies no algorithm");
  } else if (s.plan.contains("guide_algorithm")) {
    algos = {s.plan["guide_algorithm"].get<std::string>()};
    std::string who = s.recipe && (*s.recipe)["algorithm"] == algos[0] ? "AMD's recipe (" + s.recipe_name + ")"
                      : s.req.export_format == "gguf"                  ? "Quark's planning guide (GGUF)"
                                                                        : "The " + s.goal + " goal";
    s.reason("algorithm", "torch.algorithm.choose", who + ": " + algos[0] + " for " + s.plan["global_scheme"].get<std::string>());
  } else if (is_int4_weight_only(scheme(s))) {
    // INT4 weight-only rounds to nearest without an optimizer: take the one
    // Quark has a built-in config for (else torch.algorithm.int4_needs_optimizer says so).
    for (const char* a : {"awq", "gptq"})
      if (algos.empty() && algorithm_available(s, a)) algos = {a};
    s.reason("algorithm", "torch.algorithm.choose",
             algos.empty() ? "None: Quark has no built-in AWQ/GPTQ config for " + model_type(s)
                           : algos[0] + ": " + s.plan["global_scheme"].get<std::string>() + " would otherwise round every weight to nearest (" +
                                 (algo_config_file(s, algos[0]) ? "the plan writes the " + algos[0] + " config Quark lacks for " + model_type(s)
                                                                : "Quark has a built-in " + algos[0] + " config for " + model_type(s)) + ")");
  } else if (const Json* sc8 = scheme(s); sc8 && (*sc8)["family"] == "int8" && (*sc8)["activation_static"] == true && tmpl(s) &&
                                           algorithm_available(s, "smoothquant")) {
    // Static per-tensor INT8 activations lose most at a few outlier channels: SmoothQuant moves that
    // range into the weights (the W8A8 INT8 practice), where Quark ships a config for the model type.
    algos = {"smoothquant"};
    s.reason("algorithm", "torch.algorithm.choose",
             "smoothquant: static per-tensor INT8 activations lose most at their outlier channels, which SmoothQuant moves into the weights (" +
                 (algo_config_file(s, "smoothquant") ? "the plan writes the smoothquant config Quark lacks for " + model_type(s)
                                                     : "Quark has a built-in smoothquant config for " + model_type(s)) + ")");
  } else {
    const Json* sc = scheme(s);
    std::string name = s.plan["global_scheme"].get<std::string>(), why;
    if (sc && (*sc)["needs_calibration_data"] == true) why = name + " takes its scales from the calibration set; no weight optimizer is needed";
    else if (sc && (*sc)["weight_only"] == true) why = name + " scales its weights directly; no weight optimizer is needed";
    else why = name + " scales activations at run time and its weights directly; no weight optimizer is needed";
    s.reason("algorithm", "torch.algorithm.choose", "None: " + why);
  }
  s.plan.erase("guide_algorithm");
  std::set<std::string> seen;
  std::vector<std::string> unique;
  for (auto& a : algos)
    if (seen.insert(a).second) unique.push_back(a);
  s.plan["algorithm"] = unique.empty() ? Json(nullptr) : Json(join(unique, ","));
  // A Ryzen AI variant (Phi-4: GPTQ) replaces the recipe's algorithm.
  if (s.recipe && !s.choice("algorithm") && s.recipe->contains("variants"))
    for (const auto& v : (*s.recipe)["variants"]) {
      bool match = true;
      for (auto& [k, want] : v["when"].items()) {
        const Json& m = model(s);
        const Json* got = m.contains(k) ? &m[k] : nullptr;
        match = match && got && *got == want;
      }
      if (match && v.contains("algorithm")) {
        s.plan["algorithm"] = v["algorithm"];
        s.reason("algorithm", "torch.algorithm.choose", "AMD's recipe (" + s.recipe_name + "): " + v["note"].get<std::string>());
      }
    }
}

void algorithm_model_support(PlanState& s) {
  const Json* t = tmpl(s);
  if (!t) return;
  const Json& builtin = (*t)["builtin_algorithms"];
  s.plan.erase("algorithm_config_files");
  for (const auto& a : algorithms_of(s))
    if (const Json* f = std::count(builtin.begin(), builtin.end(), a) ? nullptr : algo_config_file(s, a)) {
      // Quark has none built in, the catalog has one: the plan writes it and the command reads it.
      s.plan["algorithm_config_files"][a] = {{"path", "./" + a + "_config_" + model_type(s) + ".json"}, {"config", (*f)["config"]}};
      s.reason("algorithm.config_file", "torch.algorithm.model_support",
               "Quark has no built-in " + a + " config for " + model_type(s) + ": the command reads ./" + a + "_config_" + model_type(s) +
                   ".json (--quant_algo_config_file " + a + "), which explain writes first; " + (*f)["why"].get<std::string>());
    } else if (!std::count(builtin.begin(), builtin.end(), a)) {
      bool user = s.choice("algorithm") != nullptr;
      std::string msg = "Quark has no built-in " + a + " configuration for model type '" + model_type(s) +
                        "': quantize_quark.py stops with an error unless --quant_algo_config_file gives one (quarkplan does not write that file).";
      // Alternatives are the built-in algorithms quarkplan can plan (twobitscalar fits no scheme).
      std::vector<std::string> plannable;
      for (const auto& b : string_list(builtin))
        if (const Json* bj = s.cat.torch_algorithm(b); bj && !(*bj)["compatible_families"].empty()) plannable.push_back(b);
      std::string alt = plannable.empty() ? "no algorithm" : join(plannable);
      if (user) s.conflict("torch.algorithm.model_support", "algorithm", msg, alt, true);
      else {
        // A default the model cannot take is dropped, with the reason.
        auto algos = algorithms_of(s);
        algos.erase(std::remove(algos.begin(), algos.end(), a), algos.end());
        s.plan["algorithm"] = algos.empty() ? Json(nullptr) : Json(join(algos, ","));
        s.reason("algorithm", "torch.algorithm.model_support",
                 "The default " + a + " has no built-in Quark config for " + model_type(s) + ": none" +
                     (plannable.empty() ? "" : " (built in for this model type: " + alt + ")") +
                     "; supply one with --quant_algo_config_file " + a + " FILE to use it");
      }
    }
  if ((*t)["note"].is_string() && !algorithms_of(s).empty())
    s.risk("torch.algorithm.model_support", "low", "Template note for " + model_type(s) + ": " + (*t)["note"].get<std::string>() + ".",
           "Check the algorithm touches the layers you expect.");
}

namespace detail {
const Json* algo_config_file(const PlanState& s, const std::string& algorithm) {
  const std::string mt = model_type(s);
  const Json& torch = s.cat.torch();
  if (!torch.contains("algo_config_files")) return nullptr;
  for (const auto& e : torch["algo_config_files"])  // the catalog's own entries: the pointer outlives the call
    if (e["algorithm"] == algorithm && std::count(e["model_types"].begin(), e["model_types"].end(), mt)) return &e;
  return nullptr;
}
bool algorithm_available(const PlanState& s, const std::string& algorithm) {
  const Json* t = tmpl(s);
  if (t && std::count((*t)["builtin_algorithms"].begin(), (*t)["builtin_algorithms"].end(), algorithm)) return true;
  return algo_config_file(s, algorithm) != nullptr;
}
}  // namespace detail

namespace {
// Algorithms of one kind (weight optimisers or activation smoothers) checked
// against the scheme family; an unusual pairing is explained and recorded.
void algorithm_compat_for(PlanState& s, bool smoothers, const char* rule) {
  const Json* sc = scheme(s);
  if (!sc) return;
  std::string fam = (*sc)["family"], name = (*sc)["name"];
  for (const auto& a : algorithms_of(s)) {
    bool is_smoother = a == "smoothquant" || a == "autosmoothquant";
    if (is_smoother != smoothers) continue;
    const Json* aj = s.cat.torch_algorithm(a);
    if (!aj) continue;
    const Json& fams = (*aj)["compatible_families"];
    if (std::count(fams.begin(), fams.end(), fam)) continue;
    if (fams.empty()) {  // an algorithm with a bit width of its own (twobitscalar): no scheme describes its result
      s.conflict(rule, "algorithm",
                 a + ": " + (*aj)["description"].get<std::string>() + "; the plan's " + name + " would not be what Quark writes.",
                 "gptq or awq with int4_wo_128 (a weight-only scheme quarkplan plans)", true);
      continue;
    }
    std::string suggestion = smoothers ? "fp8 or int8 with " + a + ", or " + name + " without " + a
                                       : "int4_wo_128 or uint4_wo_128 with " + a + ", or " + name + " without " + a;
    s.risk(rule, "medium", "Unusual combination: " + a + " with " + name + " (" + (*aj)["description"].get<std::string>() + "; designed for " +
                               join(string_list(fams)) + ").",
           "Suggested: " + suggestion + ".");
  }
}
}  // namespace

void awq_needs_int4(PlanState& s) { algorithm_compat_for(s, false, "torch.algorithm.awq_needs_int4"); }
void smoothquant_needs_activations(PlanState& s) { algorithm_compat_for(s, true, "torch.algorithm.smoothquant_needs_activations"); }

void int4_needs_optimizer(PlanState& s) {
  const Json* sc = scheme(s);
  if (!is_int4_weight_only(sc) || has_algorithm(s, {"awq", "gptq", "gptaq", "qronos", "autoround"})) return;
  std::string pick = algorithm_available(s, "awq") ? "awq" : algorithm_available(s, "gptq") ? "gptq" : "";
  s.risk("torch.algorithm.int4_needs_optimizer", "medium",
         (*sc)["name"].get<std::string>() + " without AWQ or GPTQ rounds every weight to nearest: INT4 loses noticeably more accuracy that way.",
         pick.empty() ? "Quark has no built-in AWQ/GPTQ config for " + model_type(s) + ": write one for this architecture and add --quant_algo awq --quant_algo_config_file awq FILE to the printed command (quarkplan does not plan that file), or accept round-to-nearest."
                      : "Plan with --algorithm " + pick + " (Quark's --quant_algo " + pick + "; " +
                            (algo_config_file(s, pick) ? "the plan writes the config Quark lacks for " : "it has a built-in " + pick + " config for ") + model_type(s) + ").");
}

void algorithm_count(PlanState& s) {
  auto algos = algorithms_of(s);
  if (algos.size() > 2)
    s.risk("torch.algorithm.at_most_two", "medium", std::to_string(algos.size()) + " algorithms run one after another: atypical and slow.",
           "Keep at most two (e.g. rotation + gptq) unless an evaluation shows the third helps.");
}

void calibration(PlanState& s) {
  const Json& d = s.cat.torch()["calibration_defaults"];
  Json& cal = s.plan["calibration"];
  cal = {{"dataset", d["dataset"]}, {"num_calib_data", d["num_calib_data"]}, {"seq_len", d["seq_len"]}};
  const Json* r = s.recipe;
  std::string rid = r ? s.recipe_name : "";
  if (r) {
    if (r->contains("dataset")) cal["dataset"] = (*r)["dataset"];
    if (r->contains("num_calib_data")) cal["num_calib_data"] = (*r)["num_calib_data"];
    if (r->contains("seq_len")) cal["seq_len"] = (*r)["seq_len"];
    if (r->value("data_type_from_model", false)) {
      std::string dt = model(s).value("dtype", Json("bfloat16")).is_string() ? model(s)["dtype"].get<std::string>() : "bfloat16";
      s.plan["data_type"] = dt == "float32" ? "float16" : dt;
      s.reason("data_type", "torch.calibration.defaults",
               "AMD's recipe (" + rid + "): --data_type matches the model's dtype (" + dt + (dt == "float32" ? ", float16 for the hybrid flow" : "") + ")");
    }
  }
  std::vector<std::string> datasets;
  for (const auto& x : s.cat.torch()["calibration_datasets"]) datasets.push_back(x["name"]);
  if (const Json* c = s.choice("calibration.dataset")) {
    std::string n = c->is_string() ? c->get<std::string>() : c->dump();
    const Json* ds = nullptr;
    for (const auto& x : s.cat.torch()["calibration_datasets"])
      if (x["name"] == n) ds = &x;
    if (!ds) s.error("unknown calibration dataset '" + n + "'" + did_you_mean(n, datasets) + "; Quark's --dataset takes " + join(datasets));
    else if (ds->value("broken", false)) s.error("calibration dataset " + n + ": " + (*ds)["note"].get<std::string>());
    else {
      cal["dataset"] = n;
      s.reason("calibration.dataset", "torch.calibration.defaults", "Your choice: " + (*ds)["note"].get<std::string>());
    }
  } else if (r && r->contains("dataset")) {
    s.reason("calibration.dataset", "torch.calibration.defaults", "AMD's recipe (" + rid + "): " + (*r)["dataset"].get<std::string>());
  } else {
    s.reason("calibration.dataset", "torch.calibration.defaults",
             std::string("Quark's planning guide: pileval, the fast default") + (has_algorithm(s, {"awq"}) ? " (pileval_for_awq_benchmark is AWQ's benchmark set)" : ""));
  }
  for (const char* key : {"num_calib_data", "seq_len", "batch_size"}) {
    std::string k = std::string("calibration.") + key;
    if (const Json* c = s.choice(k)) {
      if (!c->is_number_integer() || c->get<int64_t>() < 1 || c->get<int64_t>() > 1000000) {
        s.error(k + " must be an integer from 1 to 1000000 (got " + c->dump() + ")");
        continue;
      }
      cal[key] = *c;
      s.reason(k, "torch.calibration.defaults", "Your choice");
    }
  }
  if (!s.choice("calibration.num_calib_data"))
    s.reason("calibration.num_calib_data", "torch.calibration.defaults",
             r && r->contains("num_calib_data") ? "AMD's recipe (" + rid + "): " + (*r)["num_calib_data"].dump() + " samples"
                                                : "Quark's planning guide: 128 samples (quantize_quark.py's own default is 512)");
  if (!s.choice("calibration.seq_len"))
    s.reason("calibration.seq_len", "torch.calibration.defaults",
             r && r->contains("seq_len") ? "AMD's recipe (" + rid + "): " + (*r)["seq_len"].dump() : "Quark's planning guide: 512");
  const Json* sc = scheme(s);
  if (sc && (*sc)["weight_only"].get<bool>() && algorithms_of(s).empty())
    s.reason("calibration.note", "torch.calibration.defaults", "Weight-only without algorithms: calibration data is loaded but barely used");
}

// quantize_quark.py builds its calibration dataloader in every mode but
// --file2file_quantization, even for weight-only schemes ("still need this
// step for weight only and dynamic quantization"), so `--calib-data none`
// is honoured only by a file-to-file plan.
void calibration_data(PlanState& s) {
  if (s.req.calib_data != "none") return;
  if (s.plan.value("device_strategy", "") == "file2file") return;
  const Json* sc = scheme(s);
  bool needs = (sc && (*sc)["needs_calibration_data"].get<bool>()) || !algorithms_of(s).empty() || s.plan["kv_cache_scheme"].is_string();
  std::string name = sc ? (*sc)["name"].get<std::string>() : "the scheme";
  if (needs) {
    s.question("No calibration data: " + name +
               (algorithms_of(s).empty() ? " has static activation scales" : " with " + s.plan["algorithm"].get<std::string>()) +
               " needs representative text. Allow a calibration dataset (pileval, wikitext, ...)?");
    s.risk("torch.calibration.data", "high", "No calibration data for a plan that calibrates.", "Allow a calibration dataset, or pick a weight-only scheme without algorithms and device_strategy=file2file.");
  } else {
    s.question("No calibration data: quantize_quark.py loads its calibration dataset (" + s.plan["calibration"].value("dataset", std::string("pileval")) +
               ") even for " + name + ", in every mode but file-to-file. Allow the download, or set device_strategy=file2file?");
    s.risk("torch.calibration.data", "medium", "quantize_quark.py downloads a calibration dataset unless it runs file-to-file.",
           "Set device_strategy=file2file (it reads no dataset), or allow the dataset.");
  }
}

void evaluation_intent(PlanState& s) {
  const Json& intents = s.cat.torch()["evaluation_intents"];
  s.plan["evaluation_intent"] = s.cat.torch()["default_evaluation_intent"];
  // Quark's evaluation loads the tokenizer with trust_remote_code=True whatever the command says:
  // with code in the repository (an auto_map) that the user has not approved, it must not run.
  const bool repo_code = model(s).value("trust_remote_code", false) || intake_risk(s, "torch.intake.auto_map_not_needed");
  const bool unapproved = repo_code && !s.req.trust_remote_code;
  const Json& ev = s.cat.torch()["evaluation_remote_code"];
  if (const Json* c = s.choice("evaluation_intent")) {
    if (!c->is_string() || !std::count(intents.begin(), intents.end(), *c)) {
      s.error("evaluation_intent (--eval) must be one of none, smoke, full (got " + c->dump() +
              "): it says how much quantize_quark.py evaluates, not on which dataset");
      return;
    }
    s.plan["evaluation_intent"] = *c;
    s.reason("evaluation_intent", "torch.evaluation_intent", "Your choice");
    if (unapproved && *c != "none")
      s.conflict("torch.evaluation_intent", "evaluation_intent",
                 "The model repository ships its own code (config.json auto_map), and " + ev["what"].get<std::string>() + ": evaluating runs that code, which is not approved.",
                 "--eval none, or approve the repository's code with --trust-remote-code");
    return;
  }
  if (unapproved) {
    s.plan["evaluation_intent"] = "none";
    s.reason("evaluation_intent", "torch.evaluation_intent",
             "none: the model repository ships its own code (config.json auto_map), and " + ev["what"].get<std::string>() +
                 ", so evaluating would run code you have not approved (--trust-remote-code allows it; --skip_evaluation)");
    return;
  }
  if (s.recipe && s.recipe->value("skip_evaluation", false)) {
    s.plan["evaluation_intent"] = "none";
    s.reason("evaluation_intent", "torch.evaluation_intent",
             "none: AMD's recipe (" + s.recipe_name + ") quantizes with --skip_evaluation and publishes the accuracy of the served checkpoint instead; " +
                 "evaluate the served result the same way (lm-eval against the serve command below)");
    return;
  }
  std::string flags = join(string_list(s.cat.torch()["evaluation_flags"]["smoke"]), " ");
  s.reason("evaluation_intent", "torch.evaluation_intent",
           "Quark's planning guide: smoke, a quick perplexity check after quantization" + (flags.empty() ? std::string() : " (" + flags + "; full evaluates every wikitext sample)"));
}

}  // namespace torch_rules
}  // namespace quarkplan
