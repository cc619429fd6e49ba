// Every quantize_quark.py invocation `explain` prints, parsed by a parser
// built from Quark's own argparse facts (tests/data/quark/quantize_quark_facts.json,
// read from amd/Quark), then checked against what Quark does with the parsed
// arguments: the run-time checks it makes, the limits of its exports and of
// file-to-file mode, and whether the flags do what the plan says.
#include <gtest/gtest.h>

#include <fnmatch.h>

#include <map>
#include <set>

#include "catalog/catalog.h"
#include "common/strings.h"
#include "plan/invocation.h"
#include "plan/plan_test_support.h"
#include "ui/decision_table.h"

using namespace qp_test;
using quarkplan::Json;
using quarkplan::PlanRequest;

namespace {

// The facts of one Quark release: the file's own (0.12.post1's code), with a
// later release's differences applied (its `releases` entry, read from that
// release: its added flags, scheme registry, algorithms and templates).
const Json& facts(const std::string& release = "0.12.post1") {
  static std::map<std::string, Json> cache;
  auto it = cache.find(release);
  if (it != cache.end()) return it->second;
  Json f = Json::parse(read_file(testdata("quark/quantize_quark_facts.json")));
  if (f["releases"].contains(release)) {
    const Json r = f["releases"][release];
    for (const auto& flag : r.value("added_flags", Json::array())) f["torch_script"]["flags"].push_back(flag);
    if (r.contains("torch_schemes_registered")) f["torch_schemes"]["registered"] = r["torch_schemes_registered"];
    if (r.contains("torch_algorithms")) {
      f["torch_algorithms"]["supported"] = r["torch_algorithms"]["supported"];
      f["torch_algorithms"]["builtin_config_model_types"] = r["torch_algorithms"]["builtin_config_model_types"];
    }
    if (r.contains("torch_templates")) f["torch_templates"]["model_types"] = r["torch_templates"];
  } else if (release != "0.12.post1") {
    ADD_FAILURE() << "no Quark facts for release " << release;
  }
  return cache[release] = std::move(f);
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t comma; (comma = s.find(',', start)) != std::string::npos; start = comma + 1) out.push_back(s.substr(start, comma - start));
  out.push_back(s.substr(start));
  return out;
}

// A string field, or `fallback` when absent or null.
std::string str(const Json& j, const std::string& key, const std::string& fallback = "") {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}

bool in(const Json& list, const std::string& v) {
  for (const auto& x : list)
    if (x.is_string() && x == v) return true;
  return false;
}

// argparse as quantize_quark.py configures it: long options only, exact names
// (quarkplan never abbreviates, though Quark would accept unique prefixes),
// arity from nargs/action, choices and int/float types checked, append flags
// repeatable, mutually exclusive groups, required flags. A store flag given
// twice is legal argparse (the last wins) but never what a plan means, so it
// is an error here.
struct Parsed {
  std::map<std::string, std::vector<std::vector<std::string>>> flags;  // name -> each occurrence's values
  bool has(const std::string& f) const { return flags.count(f) > 0; }
  std::string one(const std::string& f) const {
    auto it = flags.find(f);
    return it == flags.end() || it->second.back().empty() ? "" : it->second.back()[0];
  }
  std::vector<std::string> list(const std::string& f) const {
    auto it = flags.find(f);
    return it == flags.end() ? std::vector<std::string>{} : it->second.back();
  }
};

std::string parse_quark_args(const std::vector<std::string>& argv, Parsed& out, const std::string& release = "0.12.post1") {
  std::map<std::string, const Json*> spec;
  for (const auto& f : facts(release)["torch_script"]["flags"]) spec[f["name"]] = &f;
  auto is_flag = [](const std::string& s) { return s.size() > 1 && s[0] == '-' && !(s.size() > 1 && std::isdigit(static_cast<unsigned char>(s[1]))); };
  for (size_t i = 0; i < argv.size();) {
    const std::string& name = argv[i];
    if (!is_flag(name)) return "unrecognized argument '" + name + "'";
    auto it = spec.find(name);
    if (it == spec.end()) return "unrecognized argument '" + name + "'";
    const Json& f = *it->second;
    std::vector<std::string> vals;
    size_t j = i + 1;
    while (j < argv.size() && !is_flag(argv[j])) vals.push_back(argv[j++]);
    std::string action = f["action"], nargs = f["nargs"].is_string() ? f["nargs"].get<std::string>() : "";
    size_t want_min = 1, want_max = 1;
    if (action == "store_true" || action == "store_false") want_min = want_max = 0;
    else if (nargs == "?") want_min = 0;
    else if (nargs == "*") want_min = 0, want_max = SIZE_MAX;
    else if (nargs == "+") want_max = SIZE_MAX;
    else if (f["nargs"].is_number()) want_min = want_max = f["nargs"].get<size_t>();
    if (vals.size() > want_max) return "unrecognized argument '" + vals[want_max] + "' after " + name;
    if (vals.size() < want_min) return name + " expects " + std::to_string(want_min) + " value(s)";
    for (const auto& v : vals) {
      if (f["choices"].is_array() && !in(f["choices"], v)) return name + ": invalid choice '" + v + "'";
      std::string type = f["type"];
      try {
        size_t pos = 0;
        if (type == "int") (void)std::stoll(v, &pos);
        if (type == "float") (void)std::stod(v, &pos);
        if ((type == "int" || type == "float") && pos != v.size()) return name + ": invalid " + type + " '" + v + "'";
      } catch (...) {
        return name + ": invalid " + type + " '" + v + "'";
      }
    }
    if (out.has(name) && action != "append") return name + " given twice (argparse keeps only the last)";
    out.flags[name].push_back(vals);
    i = j;
  }
  for (const auto& group : facts(release)["torch_script"]["mutually_exclusive_groups"]) {
    int n = 0;
    for (const auto& g : group) n += out.has(g);
    if (n > 1) return "mutually exclusive flags " + group.dump();
  }
  for (const auto& [name, f] : spec)
    if ((*f)["required"] == true && !out.has(name)) return name + " is required";
  return "";
}

// What Quark does with the parsed arguments, against what the plan says.
// Returns every problem found (empty: Quark runs it and does what the plan says).
std::vector<std::string> quark_semantics(const Parsed& a, const Json& plan, const Json& analysis, const Json& files = Json::array()) {
  const std::string release = plan.value("quark_release", "0.12.post1");
  std::vector<std::string> bad;
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) bad.push_back(what);
  };
  // Something Quark runs but does not support well: fine only when the plan
  // records it as a risk under `rule`.
  auto check_or_risk = [&](bool ok, const std::string& rule, const std::string& what) {
    bool recorded = false;
    for (const auto& r : plan["risks"]) recorded = recorded || r["rule"] == rule;
    if (!ok && !recorded) bad.push_back(what + " (and no " + rule + " risk says so)");
  };
  const Json& schemes = facts(release)["torch_schemes"]["registered"];
  const Json& algos = facts(release)["torch_algorithms"];
  std::string model_type = analysis["model"].value("model_type", "");
  // Run-time checks quantize_quark.py / LLMTemplate.get_config make.
  check(facts(release)["torch_templates"]["model_types"].contains(model_type), "no Quark template for model_type " + model_type);
  std::string scheme = a.one("--quant_scheme");
  check(in(schemes, scheme), "--quant_scheme '" + scheme + "' is not a registered scheme");
  std::vector<std::pair<std::string, std::string>> layers;
  if (a.has("--layer_quant_scheme"))
    for (const auto& v : a.flags.at("--layer_quant_scheme")) {
      layers.emplace_back(v[0], v[1]);
      check(in(schemes, v[1]), "--layer_quant_scheme scheme '" + v[1] + "' is not registered (KeyError)");
    }
  std::vector<std::string> algo_list = split_commas(a.one("--quant_algo"));
  if (!a.has("--quant_algo")) algo_list.clear();
  // --quant_algo_config_file ALGO PATH supplies a config Quark lacks (load_quant_algo_config_from_file):
  // PATH must be a file explain writes, JSON naming the algorithm's config class.
  std::map<std::string, std::string> supplied;
  if (a.has("--quant_algo_config_file"))
    for (const auto& v : a.flags.at("--quant_algo_config_file")) {
      if (v.size() != 2) continue;
      bool written = false;
      for (const auto& f : files) {
        if (f["path"] != v[1]) continue;
        written = true;
        Json cfg = Json::parse(f["content"].get<std::string>(), nullptr, false);
        check(cfg.is_object() && cfg.contains("name") && cfg["name"] == (v[0] == "smoothquant" ? "smooth" : v[0]),
              "--quant_algo_config_file " + v[0] + " " + v[1] + ": its JSON does not name a " + v[0] + " config");
      }
      check(written, "--quant_algo_config_file " + v[0] + " " + v[1] + ": no file explain writes (the command would fail)");
      supplied[v[0]] = v[1];
    }
  for (const auto& al : algo_list) {
    check(in(algos["supported"], al), "unsupported algorithm " + al);
    check(supplied.count(al) || (algos["builtin_config_model_types"].contains(al) && in(algos["builtin_config_model_types"][al], model_type)),
          "no built-in " + al + " config for model_type " + model_type + " (NotImplementedError)");
  }
  check(a.one("--dataset") != "ScienceQA", "--dataset ScienceQA raises NotImplementedError");
  // The flags do what the plan says.
  check(scheme == plan["global_scheme"], "--quant_scheme " + scheme + " but the plan says " + plan["global_scheme"].dump());
  std::vector<std::pair<std::string, std::string>> plan_layers;
  for (auto& [p, s] : plan["layer_quant_config"].items()) plan_layers.emplace_back(p, s);
  check(layers == plan_layers, "--layer_quant_scheme entries differ from the plan's layer_quant_config");
  std::vector<std::string> plan_algos;
  if (plan["algorithm"].is_string()) plan_algos = split_commas(plan["algorithm"].get<std::string>());
  check(algo_list == plan_algos, "--quant_algo differs from the plan's algorithm");
  check(a.one("--kv_cache_dtype") == str(plan, "kv_cache_scheme"),
        "--kv_cache_dtype differs from the plan's kv_cache_scheme");
  // --exclude_layers replaces the template's defaults; without it they apply.
  Json effective = a.has("--exclude_layers") ? Json(a.list("--exclude_layers"))
                                             : analysis["quantization_targets"]["exclude_defaults"];
  check(effective == plan["exclude_layers"], "effective exclusions " + effective.dump() + " differ from the plan's " + plan["exclude_layers"].dump());
  const Json& cal = plan["calibration"];
  // File-to-file: 0.12's --file2file_quantization, 0.13's --quant_flow file2file (where the old flag is a deprecated alias).
  const bool f2f = a.has("--file2file_quantization") || a.one("--quant_flow") == "file2file";
  if (release == "0.12.post1") check(!a.has("--quant_flow"), "--quant_flow is not a flag of Quark 0.12");
  else check(!a.has("--file2file_quantization"), "--file2file_quantization is deprecated in Quark " + release + ": the plan should say --quant_flow file2file");
  if (f2f) {  // it never calibrates: no calibration flags for it to ignore
    for (const char* f : {"--dataset", "--num_calib_data", "--seq_len", "--batch_size"}) check(!a.has(f), std::string(f) + " with file-to-file, which ignores it");
  } else {
    check(a.one("--dataset") == cal["dataset"], "--dataset differs from the plan");
    check(a.one("--num_calib_data") == cal["num_calib_data"].dump(), "--num_calib_data differs from the plan");
    check(a.one("--seq_len") == cal["seq_len"].dump(), "--seq_len differs from the plan");
    check((a.has("--batch_size") ? a.one("--batch_size") : "1") == cal.value("batch_size", Json(1)).dump(), "--batch_size differs from the plan");
  }
  check(a.has("--trust_remote_code") == (plan["trust_remote_code"] == true) && a.has("--trust_remote_code") != a.has("--no_trust_remote_code"),
        "remote code trust differs from the plan (Quark's default is to trust it)");
  check(a.has("--skip_evaluation") == (plan["evaluation_intent"] == "none" || f2f),
        "evaluation runs when the plan says none, or not when it asks for it");
  // Without --num_eval_data Quark evaluates every wikitext sample: a smoke check names a small count, full none.
  if (!a.has("--skip_evaluation"))
    check(a.has("--num_eval_data") == (plan["evaluation_intent"] == "smoke"), "--num_eval_data does not match evaluation_intent " + plan["evaluation_intent"].dump());
  // Exports, file-to-file mode and the device.
  std::vector<std::string> exports;
  if (a.has("--model_export"))
    for (const auto& v : a.flags.at("--model_export")) exports.push_back(v[0]);
  std::string strategy = str(plan, "device_strategy", "single");
  check(f2f == (strategy == "file2file"), "the file-to-file flag differs from device_strategy " + strategy);
  check((a.one("--quant_flow") == "per_block") == (strategy == "per_block"), "--quant_flow per_block differs from device_strategy " + strategy);
  if (strategy == "per_block") check(!a.has("--multi_gpu") && !a.has("--multi_device"), "per_block ignores --multi_gpu/--multi_device");
  std::string plan_export = str(plan, "export_format", "hf_format");
  check(exports == std::vector<std::string>{plan_export}, "--model_export differs from the plan's export_format " + plan_export);
  std::vector<std::string> quantized = {scheme};
  for (const auto& [p, s] : layers) quantized.push_back(s);
  if (f2f) {
    // direct_quantize_checkpoint: weights only, shard by shard, no data, on CUDA; it returns before any export.
    check(plan_export == "hf_format", "file-to-file writes only hf_format; the plan exports " + plan_export);
    check(algo_list.empty(), "file-to-file never applies --quant_algo");
    check(!a.has("--kv_cache_dtype"), "file-to-file writes no KV-cache scales");
    static const std::set<std::string> static_act = {"int8", "fp8", "mxfp4_fp8", "nvfp4", "amdfp4_global16", "amdfp4_global32"};
    for (const auto& s : quantized) {
      check(!static_act.count(s), "file-to-file writes no input scales, and " + s + " has static activations");
      check(s.rfind("uint4", 0) != 0, "file-to-file stores no zero points, and " + s + " is asymmetric");
    }
    check(str(plan, "hardware", "") != "cpu", "file-to-file runs on CUDA only, and the plan is for a CPU");
  }
  if (plan_export == "gguf") {
    // GgufExporter: uint4 per-group 32 for every quantized layer; Llama-style writers only.
    for (const auto& s : quantized) check(s == "uint4_wo_32", "GGUF export takes only uint4_wo_32, not " + s);
    check(!a.has("--kv_cache_dtype"), "GGUF export drops the KV-cache quantization");
  }
  if (plan_export == "onnx") {
    static const std::set<std::string> onnx_ok = {"int8", "fp8"};
    bool int4 = false, int8 = false;
    for (const auto& s : quantized) {
      bool wo4 = (s.rfind("int4_wo", 0) == 0 || s.rfind("uint4_wo", 0) == 0);
      check(wo4 || onnx_ok.count(s), "Quark's ONNX export supports weight-only INT4/UINT4, INT8 and FP8, not " + s);
      int4 |= wo4;
      int8 |= s == "int8";
    }
    check(!(int4 && int8), "Quark's ONNX export cannot mix INT4 and INT8");
  }
  // The command runs as printed: a real output folder named after the model and
  // its scheme, not a placeholder the user must edit.
  const std::string out_dir = a.one("--output_dir");
  check(!out_dir.empty() && out_dir.find_first_of("<>") == std::string::npos, "--output_dir '" + out_dir + "' is a placeholder");
  const std::string global = plan["global_scheme"].is_string() ? plan["global_scheme"].get<std::string>() : "mixed";
  check(out_dir.find("-quark-" + global) != std::string::npos, "--output_dir '" + out_dir + "' does not name the scheme " + global);
  std::string hw = str(plan, "hardware", "");
  check(a.has("--device") == (hw == "cpu" || strategy == "cpu"), "--device cpu differs from the plan's hardware " + hw);
  if (a.has("--device")) check(!a.has("--multi_gpu") && !a.has("--multi_device"), "--multi_gpu/--multi_device override --device cpu");
  check(a.has("--multi_gpu") == (strategy == "multi_gpu"), "--multi_gpu differs from device_strategy " + strategy);
  check(a.has("--multi_device") == (strategy == "multi_device"), "--multi_device differs from device_strategy " + strategy);
  if (a.has("--multi_device"))
    check_or_risk(algo_list.empty(), "torch.device.strategy", "--multi_device supports only quantization without algorithms (its help text)");
  // AWQ and GPTQ as Quark documents them: INT4/UINT4 per-group or per-channel weight-only.
  // (Quark's docs: "AWQ supports INT4 and UINT4 weight-only"; "GPTQ only supports PerGroup and PerChannel".)
  for (const auto& al : algo_list) {
    if (al == "awq")
      check_or_risk(scheme.find("int4_wo") != std::string::npos, "torch.algorithm.awq_needs_int4",
                    "awq with " + scheme + ": Quark's AWQ takes INT4/UINT4 weight-only schemes");
    if (al == "gptq")
      check_or_risk(scheme != "int8" && scheme != "fp8", "torch.algorithm.awq_needs_int4",
                    "gptq with per-tensor " + scheme + ": Quark's GPTQ takes per-group and per-channel weights");
  }
  return bad;
}

struct Tally {
  ~Tally() {
    if (getenv("QP_DEBUG")) std::cerr << invocations << " confirmed, " << drafts << " drafts, " << conflicts << " conflicts\n";
  }
  int invocations = 0, conflicts = 0, drafts = 0;
  std::set<std::string> schemes, algorithms, exports, hardware, strategies;
  std::set<std::string> conflict_rules;
  bool kv = false, layers = false;
};

// Plans `req` on `model`; when it yields a plan, explains it and checks the invocation.
void plan_and_check(const std::string& model, PlanRequest req, Tally& t, const std::string& label) {
  req.confirmed = true;
  const Json& a = hf_analysis(model, req.quark_release);
  quarkplan::PlanOutcome o = quarkplan::make_plan(a, req);
  if (o.plan.is_null() || !o.conflicts.empty()) {
    ++t.conflicts;
    for (const auto& c : o.conflicts) t.conflict_rules.insert(c.rule);
    if (getenv("QP_DEBUG")) std::cerr << label << ": " << static_cast<int>(o.status) << " " << (o.conflicts.empty() ? o.refusal : o.conflicts[0].message) << "\n";
    return;
  }
  quarkplan::Invocation inv = quarkplan::plan_invocation(o.plan, a);
  ASSERT_EQ(inv.tool, "quantize_quark.py") << label;
  Parsed p;
  std::string err = parse_quark_args(inv.args, p, o.plan.value("quark_release", ""));
  ASSERT_EQ(err, "") << label << "\n" << inv.text;
  if (o.status != quarkplan::PlanStatus::kConfirmed) {  // a draft's open question may be what Quark would reject
    ++t.drafts;
    return;
  }
  std::vector<std::string> bad = quark_semantics(p, o.plan, a, inv.files);
  // Steps after Quark (Ryzen AI's model_generate) work on the folder Quark wrote.
  // Each is a shell line: a command, or a comment saying where and why it runs (prose inside a
  // command would be passed to it as arguments).
  for (const auto& step : inv.fields.is_object() ? inv.fields.value("post_quark_steps", Json::array()) : Json::array()) {
    const std::string& line = step.get_ref<const std::string&>();
    if (line.rfind("# ", 0) == 0) continue;
    if (line.find_first_of("<>()'\";") != std::string::npos) bad.push_back("a placeholder or prose in the command after Quark: " + line);
    if (line.find(p.one("--output_dir")) == std::string::npos) bad.push_back("the step after Quark does not use Quark's output folder");
  }
  // quantize_quark.py pins CUDA_VISIBLE_DEVICES=0 when unset: spreading the model needs every device named.
  bool spreads = p.has("--multi_gpu") || p.has("--multi_device");
  std::string visible;
  for (const auto& [k, v] : inv.env)
    if (k == "CUDA_VISIBLE_DEVICES") visible = v;
  if (spreads != !visible.empty()) bad.push_back("CUDA_VISIBLE_DEVICES '" + visible + "' with --multi_gpu/--multi_device " + (spreads ? "set" : "unset"));
  if (!visible.empty() && inv.text.find("CUDA_VISIBLE_DEVICES=" + visible + " python quantize_quark.py") == std::string::npos)
    bad.push_back("the printed command does not set CUDA_VISIBLE_DEVICES");
  EXPECT_TRUE(bad.empty()) << label << ": " << quarkplan::join(bad, "; ") << "\n" << inv.text;
  ++t.invocations;
  t.schemes.insert(str(o.plan, "global_scheme"));
  for (auto& [k, v] : o.plan["layer_quant_config"].items()) t.schemes.insert(v.get<std::string>()), t.layers = true;
  if (o.plan["algorithm"].is_string()) t.algorithms.insert(o.plan["algorithm"].get<std::string>());
  t.exports.insert(str(o.plan, "export_format", "hf_format"));
  t.hardware.insert(str(o.plan, "hardware", ""));
  t.strategies.insert(str(o.plan, "device_strategy", ""));
  t.kv |= o.plan["kv_cache_scheme"].is_string();
}

// The Quark release the tests below plan for ("" is the newest); each test runs once per release.
std::string g_release;

PlanRequest request(const std::string& hw, const std::string& goal = "", const std::string& exp = "") {
  PlanRequest r;
  r.quark_release = g_release;
  r.hardware = hw;
  r.goal = goal;
  r.export_format = exp;
  return r;
}

void set(PlanRequest& r, const std::string& assignment) { quarkplan::apply_set(r, "torch", assignment); }

}  // namespace

// The parser itself: what Quark's argparse rejects, it rejects.
TEST(QuarkCli, TheParserRejectsWhatQuarksArgparseRejects) {
  auto err = [](std::vector<std::string> argv) {
    Parsed p;
    return parse_quark_args(argv, p);
  };
  EXPECT_EQ(err({"--model_dir", "m", "--quant_scheme", "fp8", "--multi_gpu", "--no_trust_remote_code"}), "");
  EXPECT_EQ(err({"--model_dir", "m", "--multi_gpu", "balanced"}), "");
  EXPECT_NE(err({"--quant_scheme", "fp8"}), "");                                      // --model_dir required
  EXPECT_NE(err({"--model_dir", "m", "--fp8_attention_quant"}), "");                  // not a Quark flag
  EXPECT_NE(err({"--model_dir", "m", "--device", "rocm"}), "");                       // choices
  EXPECT_NE(err({"--model_dir", "m", "--seq_len", "12k"}), "");                       // int
  EXPECT_NE(err({"--model_dir", "m", "--layer_quant_scheme", "*mlp*"}), "");          // nargs 2
  EXPECT_NE(err({"--model_dir", "m", "--skip_evaluation", "yes"}), "");               // store_true takes nothing
  EXPECT_NE(err({"--model_dir", "m", "--trust_remote_code", "--no_trust_remote_code"}), "");
  EXPECT_NE(err({"--model_dir", "m", "--quant_scheme", "fp8", "--quant_scheme", "int8"}), "");
  EXPECT_EQ(err({"--model_dir", "m", "--model_export", "hf_format", "--model_export", "gguf"}), "");  // append
  EXPECT_NE(err({"--model_dir", "m", "--kv_cache_dtype", "int8"}), "");
}

// Every hardware class x goal (and none) x export, on dense models (Llama 3, whose tokenizer
// Quark cannot write to GGUF, and Mistral, whose it can), a MoE, an
// MLA model with an FP8 source, and a pre-quantized MXFP4 source.
// One test per release: each is minutes under the sanitizers on two cores.
void every_hardware_goal_and_export(const std::string& release) {
  {
  SCOPED_TRACE("Quark " + release);
  g_release = release;
  Tally t;
  const Json& hw = quarkplan::Catalog::load().hardware();
  std::vector<std::string> accelerators;
  for (const auto& h : hw["accelerators"]) accelerators.push_back(h["name"]);
  ASSERT_GE(accelerators.size(), 20u);
  for (const char* model : {"llama-3.1-8b", "mistral-7b-v0.3", "qwen3-30b-a3b", "deepseek-v3", "gpt-oss-20b"})
    for (const auto& h : accelerators)
      for (const char* goal : {"", "accuracy", "balanced", "size", "experiment", "mixed"})
        for (const char* exp : {"", "gguf", "onnx"}) {
          // The 45,000-module DeepSeek-V3 and the MXFP4 gpt-oss: every goal on the hardware AMD ships for, the default elsewhere.
          bool big = model == std::string("deepseek-v3") || model == std::string("gpt-oss-20b");
          if (big && *goal && h != "mi300x" && h != "mi355x") continue;
          plan_and_check(model, request(h, goal, exp), t, std::string(model) + " " + h + " goal=" + goal + " export=" + exp);
        }
  EXPECT_GT(t.invocations, 600);
  // The only conflicts without a user choice: GGUF asked for a model type Quark's GGUF writer lacks,
  // an export Ryzen AI's flow cannot take, and MoE models far beyond what a Ryzen AI PC runs.
  // An already-quantized source that a goal keeping 8 bits would make larger: served as it is.
  EXPECT_EQ(t.conflict_rules, (std::set<std::string>{"torch.export.format", "torch.hardware.resolve", "torch.pre_quantized.serve_source"}));
  EXPECT_GE(t.hardware.size(), accelerators.size());
  EXPECT_TRUE(t.exports.count("gguf") && t.exports.count("onnx") && t.exports.count("hf_format"));
  EXPECT_TRUE(t.kv);
  EXPECT_TRUE(t.layers);
  }
  g_release.clear();
}

TEST(QuarkCli, EveryHardwareGoalAndExportPrintsAnInvocationQuark013RunsAsPlanned) { every_hardware_goal_and_export("0.13"); }
TEST(QuarkCli, EveryHardwareGoalAndExportPrintsAnInvocationQuark012RunsAsPlanned) { every_hardware_goal_and_export("0.12.post1"); }
// Every release the catalog describes has its test above.
TEST(QuarkCli, EveryReleaseHasItsHardwareGoalAndExportTest) {
  EXPECT_EQ(quarkplan::Catalog::release_versions(), (std::vector<std::string>{"0.12.post1", "0.13"}));
}

// Every registered scheme, as the global scheme and as a layer override, with
// every algorithm, the KV cache, each device strategy and export, insisted on
// where the hardware only emulates it.
TEST(QuarkCli, EverySchemeAlgorithmStrategyAndOverridePrintsAnInvocationQuarkRunsAsPlanned) {
  for (const auto& release : quarkplan::Catalog::release_versions()) {
  SCOPED_TRACE("Quark " + release);
  g_release = release;
  Tally t;
  for (const auto& s : facts(release)["torch_schemes"]["registered"]) {
    std::string scheme = s;
    for (const char* hw : {"mi300x", "mi355x", "b200", "cpu"}) {
      PlanRequest r = request(hw);
      r.insist = true;
      set(r, "global_scheme=" + scheme);
      plan_and_check("llama-3.1-8b", r, t, scheme + " on " + hw);
      PlanRequest l = request(hw);
      l.insist = true;
      set(l, "layer_quant_config.*mlp*=" + scheme);
      plan_and_check("llama-3.1-8b", l, t, "*mlp*=" + scheme + " on " + hw);
    }
    for (const char* strategy : {"single", "multi_gpu", "multi_device", "file2file", "per_block", "cpu"})
      for (const char* exp : {"hf", "gguf", "onnx"}) {
        PlanRequest r = request("mi300x", "", exp);
        r.insist = true;
        set(r, "global_scheme=" + scheme);
        set(r, std::string("device_strategy=") + strategy);
        plan_and_check("mixtral-8x7b-v0.1", r, t, scheme + " " + strategy + " export " + exp);
      }
  }
  for (const auto& al : facts(release)["torch_algorithms"]["supported"])
    for (const char* scheme : {"int4_wo_128", "uint4_wo_32", "fp8", "mxfp4", "int8"})
      for (const char* model : {"llama-3.1-8b", "qwen3-30b-a3b", "phi-4"}) {
        PlanRequest r = request("mi355x");
        r.insist = true;
        set(r, std::string("global_scheme=") + scheme);
        set(r, "algorithm=" + al.get<std::string>());
        plan_and_check(model, r, t, al.get<std::string>() + " with " + scheme + " on " + model);
      }
  for (const char* e : {"none", "smoke", "full"}) {
    PlanRequest r = request("mi300x");
    set(r, std::string("evaluation_intent=") + e);
    plan_and_check("llama-3.1-8b", r, t, std::string("evaluation ") + e);
  }
  for (const char* kv : {"fp8", "null"}) {
    PlanRequest r = request("mi300x");
    set(r, std::string("kv_cache_scheme=") + kv);
    plan_and_check("llama-3.1-70b", r, t, std::string("kv ") + kv);
  }
  EXPECT_GT(t.invocations, 150);
  EXPECT_GE(t.schemes.size(), 20u);
  EXPECT_GE(t.algorithms.size(), 5u);
  EXPECT_GE(t.strategies.size(), 4u);
  }
  g_release.clear();
}

// Every model of the corpus on the accelerators AMD ships recipes for.
TEST(QuarkCli, EveryCorpusModelPrintsAnInvocationQuarkRunsAsPlanned) {
  for (const auto& release : quarkplan::Catalog::release_versions()) {
  SCOPED_TRACE("Quark " + release);
  g_release = release;
  Tally t;
  for (const auto& e : fs::directory_iterator(testdata("hf"))) {
    if (!e.is_directory()) continue;
    std::string model = e.path().filename().string();
    for (const char* hw : {"mi300x", "mi355x", "ryzen-ai", "a100"})
      plan_and_check(model, request(hw), t, model + " on " + hw);
  }
  EXPECT_GT(t.invocations, 100);
  }
  g_release.clear();
}

// What Quark rejects (or silently skips) is never kept by --insist; what it
// only runs slowly (emulation) is kept with a HIGH risk.
TEST(QuarkCli, InsistKeepsEmulationButNeverWhatQuarkRejects) {
  auto outcome = [](const std::string& model, PlanRequest r, std::vector<std::string> sets) {
    r.confirmed = true;
    r.insist = true;
    for (const auto& a : sets) set(r, a);
    return quarkplan::make_plan(hf_analysis(model), r);
  };
  quarkplan::PlanOutcome emulated = outcome("llama-3.1-8b", request("mi300x"), {"global_scheme=nvfp4"});
  EXPECT_TRUE(emulated.conflicts.empty());
  EXPECT_TRUE(cites(emulated, "torch.scheme.hardware_gate"));
  for (const auto& [model, req, sets, rule] :
       std::vector<std::tuple<std::string, PlanRequest, std::vector<std::string>, std::string>>{
           {"llama-3.1-8b", request("mi300x", "", "gguf"), {"global_scheme=int4_wo_128"}, "torch.export.format"},
           {"llama-3.1-8b", request("mi300x", "", "onnx"), {"layer_quant_config.*mlp*=ptpc_fp8"}, "torch.export.format"},
           {"qwen3-30b-a3b", request("mi300x", "", "gguf"), {}, "torch.export.format"},
           {"qwen3-30b-a3b", request("mi300x"), {"algorithm=rotation"}, "torch.algorithm.model_support"},
           {"llama-3.1-8b", request("mi300x"), {"global_scheme=uint4_wo_128", "device_strategy=file2file"}, "torch.device.strategy"},
           {"llama-3.1-8b", request("mi300x"), {"global_scheme=fp8", "device_strategy=file2file"}, "torch.device.strategy"},
           {"llama-3.1-8b", request("cpu"), {"global_scheme=int4_wo_128", "device_strategy=file2file"}, "torch.device.strategy"},
           {"llama-3.1-8b", request("cpu"), {"device_strategy=multi_gpu"}, "torch.device.strategy"},
       }) {
    quarkplan::PlanOutcome o = outcome(model, req, sets);
    ASSERT_FALSE(o.conflicts.empty()) << model << " " << quarkplan::join(sets);
    EXPECT_EQ(o.conflicts[0].rule, rule);
    EXPECT_FALSE(o.conflicts[0].insistable) << o.conflicts[0].message;
    // Neither the flag nor the prompt offers what cannot work.
    std::string said = quarkplan::ui::render_conflicts(o.conflicts, quarkplan::ui::Style{}, 1000, false) +
                       quarkplan::ui::render_conflicts(o.conflicts, quarkplan::ui::Style{}, 1000, true);
    EXPECT_NE(said.find("--insist cannot keep it"), std::string::npos) << said;
    EXPECT_EQ(said.find("Pass --insist"), std::string::npos) << said;
    EXPECT_EQ(said.find("type 'insist'"), std::string::npos) << said;
  }
  // --multi_device with an algorithm: its help text says it runs none; a conflict, kept only when insisted on.
  PlanRequest md = request("mi300x", "size");
  md.confirmed = true;
  set(md, "device_strategy=multi_device");
  quarkplan::PlanOutcome mdo = quarkplan::make_plan(hf_analysis("llama-3.1-8b"), md);
  ASSERT_FALSE(mdo.conflicts.empty());
  EXPECT_EQ(mdo.conflicts[0].rule, "torch.device.strategy");
  EXPECT_EQ(mdo.conflicts[0].alternative, "single");  // an 8B model calibrates on one MI300X
  // File-to-file chosen by the user: the default AWQ of INT4 is left out (f2f applies none), said so.
  quarkplan::PlanOutcome f2f = outcome("llama-3.1-8b", request("mi300x"), {"global_scheme=int4_wo_128", "device_strategy=file2file"});
  ASSERT_TRUE(f2f.conflicts.empty()) << f2f.conflicts[0].message;
  EXPECT_TRUE(f2f.plan["algorithm"].is_null());
  EXPECT_NE(f2f.plan["reasons"]["algorithm"].get<std::string>().find("file-to-file"), std::string::npos);
}

// A default never conflicts with the export asked for: the goal's schemes and
// its mixed-precision layers are limited to what the exporter takes.
TEST(QuarkCli, DefaultsFollowTheExportersLimits) {
  for (const char* hw : {"mi300x", "mi355x", "h100", "b200"})
    for (const char* goal : {"experiment", "mixed"}) {
      PlanRequest r = request(hw, goal, "onnx");
      r.confirmed = true;
      quarkplan::PlanOutcome o = quarkplan::make_plan(hf_analysis("llama-3.1-8b"), r);
      ASSERT_TRUE(o.conflicts.empty()) << hw << " " << goal << ": " << o.conflicts[0].message;
      const Json& ok = quarkplan::Catalog::load().torch()["exports"]["onnx"]["schemes"];
      EXPECT_TRUE(in(ok, o.plan["global_scheme"])) << o.plan["global_scheme"];
      for (auto& [p, s] : o.plan["layer_quant_config"].items()) EXPECT_TRUE(in(ok, s)) << p << "=" << s;
    }
}

// A device count the user never gave (no --gpus, no env_context.json) is the plan's estimate:
// the printed command says so above CUDA_VISIBLE_DEVICES; a given count is printed as given.
TEST(QuarkCli, AnEstimatedDeviceCountIsSaidToBeOne) {
  const Json& a = hf_analysis("llama-3.1-70b");
  PlanRequest r = request("h100", "balanced", "hf");
  r.confirmed = true;
  quarkplan::PlanOutcome o = quarkplan::make_plan(a, r);
  ASSERT_EQ(o.plan["device_strategy"], "multi_gpu");
  quarkplan::Invocation inv = quarkplan::plan_invocation(o.plan, a);
  const std::string n = std::to_string(o.plan["accelerators_needed"].get<int64_t>());
  EXPECT_NE(inv.text.find("# " + n + " GPUs: the plan's estimate of what calibration needs (no --gpus given)"), std::string::npos) << inv.text;
  r.gpus = 4;
  quarkplan::PlanOutcome given = quarkplan::make_plan(a, r);
  quarkplan::Invocation ginv = quarkplan::plan_invocation(given.plan, a);
  EXPECT_EQ(ginv.text.find("the plan's estimate"), std::string::npos) << ginv.text;
  EXPECT_NE(ginv.text.find("CUDA_VISIBLE_DEVICES=0,1,2,3 python quantize_quark.py"), std::string::npos) << ginv.text;
}

// The file-to-file flow is spelled as each release's quantize_quark.py spells it: 0.13's
// --quant_flow file2file (its --file2file_quantization is a deprecated alias), 0.12's flag.
TEST(QuarkCli, FileToFileIsSpelledAsThePlansReleaseSpellsIt) {
  for (const auto& [release, words] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"0.13", {"--quant_flow", "file2file"}}, {"0.12.post1", {"--file2file_quantization"}}}) {
    PlanRequest r;
    r.hardware = "mi355x";
    r.gpus = 8;
    r.quark_release = release;
    r.confirmed = true;
    set(r, "global_scheme=mxfp4");
    set(r, "device_strategy=file2file");
    const Json& a = hf_analysis("deepseek-v3", release);
    quarkplan::PlanOutcome o = quarkplan::make_plan(a, r);
    ASSERT_FALSE(o.plan.is_null()) << release;
    EXPECT_EQ(o.plan["quark_release"], release);
    quarkplan::Invocation inv = quarkplan::plan_invocation(o.plan, a);
    auto at = std::search(inv.args.begin(), inv.args.end(), words.begin(), words.end());
    EXPECT_NE(at, inv.args.end()) << release << "\n" << inv.text;
    EXPECT_EQ(std::count(inv.args.begin(), inv.args.end(), release == "0.13" ? "--file2file_quantization" : "--quant_flow"), 0) << inv.text;
    Parsed p;
    EXPECT_EQ(parse_quark_args(inv.args, p, release), "") << release;
    // DeepSeek-V3 is an FP8 source: Quark 0.13's multi-GPU file-to-file does not take one.
    EXPECT_FALSE(p.has("--multi_gpu")) << inv.text;
    // A BF16 source on 4 GPUs: 0.13 runs one file-to-file worker per GPU (--multi_gpu), 0.12 one.
    PlanRequest b = r;
    b.gpus = 4;
    b.hardware = "mi300x";
    b.choices.clear();
    set(b, "global_scheme=ptpc_fp8");
    set(b, "device_strategy=file2file");
    const Json& la = hf_analysis("llama-3.1-70b", release);
    quarkplan::PlanOutcome lo = quarkplan::make_plan(la, b);
    ASSERT_FALSE(lo.plan.is_null()) << release;
    quarkplan::Invocation li = quarkplan::plan_invocation(lo.plan, la);
    Parsed lp;
    EXPECT_EQ(parse_quark_args(li.args, lp, release), "") << release;
    EXPECT_EQ(lp.has("--multi_gpu"), release == "0.13") << li.text;
    EXPECT_EQ(li.text.find("CUDA_VISIBLE_DEVICES=0,1,2,3 ") != std::string::npos, release == "0.13") << li.text;
  }
}

// Quark 0.13 ships its own mixed-precision search (quark-quant-perf): a mixed-precision plan on
// the GPUs it knows names it as the next step, with the plan's candidates and calibration; 0.12
// plans, other goals and other GPUs do not.
TEST(QuarkCli, AMixedPrecisionPlanNamesQuarksOwnSearchNext) {
  auto follow_up = [](const std::string& release, const std::string& hw, const std::string& goal) {
    PlanRequest r;
    r.hardware = hw;
    r.goal = goal;
    r.quark_release = release;
    r.confirmed = true;
    const Json& a = hf_analysis("llama-3.1-8b", release);
    quarkplan::PlanOutcome o = quarkplan::make_plan(a, r);
    EXPECT_FALSE(o.plan.is_null()) << release << " " << hw << " " << goal;
    return o.plan.is_null() ? Json() : quarkplan::plan_invocation(o.plan, a).follow_up;
  };
  Json f = follow_up("0.13", "mi355x", "mixed");
  ASSERT_TRUE(f.is_object());
  EXPECT_EQ(f["tool"], "quark-quant-perf");
  std::vector<std::string> args = f["args"].get<std::vector<std::string>>();
  auto after = [&](const std::string& flag) {
    std::vector<std::string> v;
    auto it = std::find(args.begin(), args.end(), flag);
    for (it = it == args.end() ? it : it + 1; it != args.end() && it->rfind("--", 0) != 0; ++it) v.push_back(*it);
    return v;
  };
  EXPECT_EQ(after("--gpu-type"), std::vector<std::string>{"mi355x"});
  std::vector<std::string> cands = after("--layer-precision-candidates");
  EXPECT_EQ(cands.front(), "native");
  EXPECT_NE(std::find(cands.begin(), cands.end(), "mxfp4"), cands.end());  // the plan's own scheme is a candidate
  EXPECT_EQ(after("--num-calib-data"), std::vector<std::string>{"128"});  // the plan's calibration
  EXPECT_NE(f["text"].get<std::string>().find("quark-quant-perf \\\n    --model "), std::string::npos);
  EXPECT_TRUE(follow_up("0.12.post1", "mi355x", "mixed").is_null());  // 0.12 has no such tool
  EXPECT_TRUE(follow_up("0.13", "mi355x", "balanced").is_null());
  EXPECT_TRUE(follow_up("0.13", "h100", "mixed").is_null());          // it searches on MI300X..MI355X only
  Json m300 = follow_up("0.13", "mi300x", "mixed");
  ASSERT_TRUE(m300.is_object());
  EXPECT_EQ(m300["text"].get<std::string>().find("mxfp4"), std::string::npos);  // gfx942 searches fp8 and ptpc_fp8 only
}
