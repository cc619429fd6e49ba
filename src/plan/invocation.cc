#include "plan/invocation.h"

#include "catalog/catalog.h"
#include "common/strings.h"

#include <algorithm>

namespace quarkplan {

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=,:") == std::string::npos) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

namespace {

// Where Quark writes the quantized model: beside the current directory, named
// after the model and the plan's scheme (as AMD names its releases, e.g.
// Llama-3.1-8B-Instruct-FP8-KV), so the command runs as printed.
std::string output_dir_for(const Json& plan, const std::string& model) {
  std::string base = model;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  if (auto slash = base.find_last_of('/'); slash != std::string::npos) base = base.substr(slash + 1);
  if (base.empty() || base == "." || base == ".." || base.find('<') != std::string::npos) base = "model";
  std::string scheme = plan["global_scheme"].is_string() ? plan["global_scheme"].get<std::string>() : "mixed";
  std::string out = "./" + base + "-quark-" + scheme;
  // Per-layer schemes name the folder too (fp8 with int4_fp8 experts is AMD's W4A8, not FP8).
  std::set<std::string> layer_schemes;
  if (const Json lqc = plan.value("layer_quant_config", Json::object()); lqc.is_object())
    for (const auto& [pattern, sch] : lqc.items())
      if (sch.is_string() && sch.get<std::string>() != scheme) layer_schemes.insert(sch.get<std::string>());
  for (const auto& x : layer_schemes) out += "-" + x;
  if (plan.value("kv_cache_scheme", Json(nullptr)).is_string()) out += "-kv-" + plan["kv_cache_scheme"].get<std::string>();
  return out;
}

// The catalog's after-Quark steps name Quark's output and the folder they
// write as placeholders; the printed steps use this plan's folders.
std::string replace_all_of(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}
std::string replace_output_dir(const std::string& s, const std::string& dir, const std::string& model) {
  return replace_all_of(replace_all_of(replace_all_of(s, "<OUTPUT_DIR>", dir), "<OGA model dir>", dir + "-oga"), "<MODEL_DIR>", model);
}

// The next step with Quark's own mixed-precision search (quark-quant-perf, 0.13): for a
// mixed-precision goal on the GPUs it knows, with candidates and calibration matching
// the plan. Null when the plan's release, goal or GPU has none.
Json follow_up(const Json& plan, const Catalog& cat, const std::string& model) {
  const Json tools = cat.torch().value("follow_up_tools", Json::object());
  if (!tools.contains("quark_quant_perf")) return nullptr;
  const Json& t = tools["quark_quant_perf"];
  const std::string goal = plan.value("goal", Json(nullptr)).is_string() ? plan["goal"].get<std::string>() : "";
  const std::string hw = plan.value("hardware", Json(nullptr)).is_string() ? plan["hardware"].get<std::string>() : "";
  const Json lqc = plan.value("layer_quant_config", Json::object());
  auto listed = [](const Json& list, const std::string& v) { return list.is_array() && std::count(list.begin(), list.end(), Json(v)) > 0; };
  bool wanted = listed(t["goals"], goal) || (listed(t["goals_with_layer_overrides"], goal) && lqc.is_object() && !lqc.empty());
  if (!wanted || !t["layer_modes"].contains(hw)) return nullptr;
  // Candidates: the schemes the plan weighs (its own, its overrides, its alternatives) that the
  // search takes on this GPU, with native (the fallback it always keeps); else the search's defaults.
  const Json& modes = t["layer_modes"][hw];
  std::vector<std::string> weighed;
  auto weigh = [&](const Json& v) {
    if (v.is_string() && listed(modes, v.get<std::string>()) && !std::count(weighed.begin(), weighed.end(), v.get<std::string>())) weighed.push_back(v);
  };
  weigh(plan.value("global_scheme", Json(nullptr)));
  if (lqc.is_object())
    for (auto& [p, v] : lqc.items()) weigh(v);
  for (const auto& alt : plan.value("alternatives", Json::array()))
    if (alt.is_object()) weigh(alt.value("scheme", Json(nullptr)));
  std::vector<std::string> a = {"--model", model, "--gpu-type", hw};
  if (weighed.size() >= 2 || (weighed.size() == 1 && weighed[0] != "native")) {
    a.push_back("--layer-precision-candidates");
    a.push_back("native");
    for (const auto& m : weighed) a.push_back(m);
  }
  if (plan.value("kv_cache_scheme", Json(nullptr)) == "fp8") a.insert(a.end(), {"--kv-cache-precision-candidates", "native", "fp8"});
  // The plan's exclusions, template defaults included: the search applies its own defaults
  // otherwise (quark/experimental/torch/mix_precision), not the template's or AMD's recipe's.
  if (const Json ex = plan.value("exclude_layers", Json::array()); ex.is_array() && !ex.empty()) {
    a.push_back("--exclude-layers");
    for (const auto& p : ex)
      if (p.is_string()) a.push_back(p);
  }
  const Json cal = plan.value("calibration", Json::object());
  const Json& d = t["defaults"];
  if (cal.value("dataset", Json(nullptr)).is_string() && cal["dataset"] != d["calib_dataset"]) a.insert(a.end(), {"--calib-dataset", cal["dataset"].get<std::string>()});
  if (cal.value("num_calib_data", Json(nullptr)).is_number_integer() && cal["num_calib_data"] != d["num_calib_data"])
    a.insert(a.end(), {"--num-calib-data", cal["num_calib_data"].dump()});
  if (cal.value("seq_len", Json(nullptr)).is_number_integer() && cal["seq_len"] != d["calib_seqlen"]) a.insert(a.end(), {"--calib-seqlen", cal["seq_len"].dump()});
  a.insert(a.end(), {"--accuracy-gap", d["accuracy_gap"].dump(), "--max-search-candidates", d["max_search_candidates"].dump()});
  std::string text = t["command"].get<std::string>();
  for (const auto& w : a) text += (w.rfind("--", 0) == 0 ? " \\\n    " : " ") + shell_quote(w);
  return {{"tool", t["command"]}, {"why", t["label"].get<std::string>() + "; it needs " + t["needs"].get<std::string>()}, {"args", a}, {"text", text + "\n"}};
}

}  // namespace

// The command that serves Quark's output with the plan's runtime (plan["serve"], decided by
// the torch.serve.* rules; the command's shape is catalog/runtimes.json's serve section).
Json serve_command(const Json& plan, const Catalog& cat, const std::string& output_dir, const std::string& model_type) {
  const Json serve = plan.value("serve", Json(nullptr));
  if (!serve.is_object() || !serve.value("runtime", Json(nullptr)).is_string()) return nullptr;
  const Json* r = cat.runtime(serve["runtime"]);
  if (!r) return nullptr;
  const Json& s = (*r)["serve"];
  const std::string name = (*r)["name"];
  std::vector<std::pair<std::string, std::string>> env;
  const Json env_in = serve.value("env", Json::object());
  for (auto& [k, v] : env_in.items())
    if (v.is_string()) env.emplace_back(k, v.get<std::string>());
  std::vector<std::string> args;
  std::string comment, program = s["command"];
  const std::string model_file = replace_all_of(replace_all_of(s.value("model_file", std::string("<OUTPUT_DIR>")), "<OUTPUT_DIR>", output_dir), "<MODEL_TYPE>", model_type);
  if (name == "vllm" || name == "sglang") {
    if (s.value("model_arg", "") == "positional") args.push_back(model_file);
    else args.insert(args.end(), {s["model_arg"].get<std::string>(), model_file});
    auto count = [&](const char* key) { return serve.value(key, Json(nullptr)).is_number_integer() ? serve[key].get<int64_t>() : int64_t{1}; };
    if (count("tensor_parallel_size") > 1) args.insert(args.end(), {s["tensor_parallel_flag"].get<std::string>(), std::to_string(count("tensor_parallel_size"))});
    if (count("pipeline_parallel_size") > 1 && s.contains("pipeline_parallel_flag"))
      args.insert(args.end(), {s["pipeline_parallel_flag"].get<std::string>(), std::to_string(count("pipeline_parallel_size"))});
    if (serve.value("max_model_len", Json(nullptr)).is_number_integer() && s.contains("context_flag"))
      args.insert(args.end(), {s["context_flag"].get<std::string>(), serve["max_model_len"].dump()});
    if (count("tensor_parallel_size") * count("pipeline_parallel_size") > s.value("gpus_per_node", int64_t{8}) && s.contains("multi_node"))
      comment = "# " + std::to_string(count("tensor_parallel_size") * count("pipeline_parallel_size")) + " GPUs, " + s["multi_node"].get<std::string>() + "\n";
    if (serve.value("kv_cache_flag", Json(nullptr)).is_array())
      for (const auto& w : serve["kv_cache_flag"]) args.push_back(w);
    if (serve.value("trust_remote_code", false)) args.push_back(s["trust_remote_code_flag"]);
  } else if (name == "llama.cpp") {
    args = {s["model_arg"].get<std::string>(), model_file};
    comment = "# Quark's GGUF exporter writes " + model_file + "\n";
  } else if (name == "ort-genai") {
    args = {"import onnxruntime_genai as og; og.Model(\"" + model_file + "\")"};
    comment = "# ONNX Runtime GenAI loads the folder the steps above wrote (Ryzen AI serves it through Lemonade or the OGA examples)\n";
  } else {  // transformers
    args = {"from transformers import AutoModelForCausalLM; AutoModelForCausalLM.from_pretrained(\"" + output_dir + "\", device_map=\"auto\"" +
            std::string(serve.value("trust_remote_code", false) ? ", trust_remote_code=True" : "") + ")"};
    comment = "# transformers needs amd-quark installed to load a Quark checkpoint; it runs Quark's modules (dequantized matmuls)\n";
  }
  std::string t = comment;
  for (const auto& [k, v] : env) t += k + "=" + shell_quote(v) + " ";
  t += program;
  for (const auto& w : args) t += (w.rfind("-", 0) == 0 ? " \\\n    " : " ") + shell_quote(w);
  Json env_json = Json::object();
  for (const auto& [k, v] : env) env_json[k] = v;
  return {{"runtime", name}, {"label", (*r)["label"]}, {"program", program}, {"env", env_json}, {"args", args}, {"text", t + "\n"}};
}

Invocation plan_invocation(const Json& plan, const Json& analysis, const std::string& catalog_dir) {
  const Catalog& cat = Catalog::for_plan(plan, catalog_dir);
  Invocation inv;
  if (plan.value("backend", "") == "onnx") return onnx_invocation(plan, analysis, cat);
  inv.tool = "quantize_quark.py";
  std::vector<std::string>& a = inv.args;
  std::string model = analysis.is_object() ? analysis["model"].value("model_path", "<MODEL_DIR>") : "<MODEL_DIR>";
  const std::string output_dir = output_dir_for(plan, model);
  a = {"--model_dir", model, "--output_dir", output_dir};
  if (plan["global_scheme"].is_string()) a.insert(a.end(), {"--quant_scheme", plan["global_scheme"]});
  for (auto& [pattern, scheme] : plan["layer_quant_config"].items()) a.insert(a.end(), {"--layer_quant_scheme", pattern, scheme.get<std::string>()});
  // --exclude_layers only when the plan differs from the template defaults
  // (the flag replaces them; an empty flag would exclude nothing).
  Json defaults = analysis.is_object() ? analysis["quantization_targets"]["exclude_defaults"] : Json(nullptr);
  if (defaults.is_null()) {
    const Json* t = cat.torch_template(plan["model"]["model_type"]);
    defaults = t ? (*t)["exclude_defaults"] : Json::array({"lm_head"});
  }
  if (plan["exclude_layers"] != defaults) {
    a.push_back("--exclude_layers");
    for (const auto& p : plan["exclude_layers"]) a.push_back(p);
  }
  if (plan["algorithm"].is_string()) a.insert(a.end(), {"--quant_algo", plan["algorithm"]});
  // Configs Quark has none built in for: the command reads them, explain writes them first.
  const Json algo_files = plan.value("algorithm_config_files", Json::object());
  for (auto& [algo, f] : algo_files.items()) {
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string()) continue;
    a.insert(a.end(), {"--quant_algo_config_file", algo, f["path"].get<std::string>()});
    inv.files.push_back({{"path", f["path"]}, {"content", f.value("config", Json::object()).dump(2) + "\n"},
                         {"why", "the " + algo + " config quantize_quark.py reads with --quant_algo_config_file (Quark has none built in for this model type)"}});
  }
  if (plan["kv_cache_scheme"].is_string()) a.insert(a.end(), {"--kv_cache_dtype", plan["kv_cache_scheme"]});
  std::string strategy = plan.value("device_strategy", "");
  if (strategy != "file2file") {  // file-to-file never calibrates: its calibration flags would be ignored
    a.insert(a.end(), {"--dataset", plan["calibration"]["dataset"], "--num_calib_data", plan["calibration"]["num_calib_data"].dump(),
                       "--seq_len", plan["calibration"]["seq_len"].dump()});
    if (plan["calibration"].contains("batch_size") && plan["calibration"]["batch_size"] != 1)
      a.insert(a.end(), {"--batch_size", plan["calibration"]["batch_size"].dump()});
  }
  if (plan.contains("data_type") && plan["data_type"].is_string()) a.insert(a.end(), {"--data_type", plan["data_type"]});
  std::string export_flag = plan.value("export_format", "hf_format");
  // The file-to-file flow returns right after writing hf_format shards:
  // the planner never pairs it with another export (a conflict).
  a.insert(a.end(), {"--model_export", strategy == "file2file" ? "hf_format" : export_flag});
  if (strategy == "file2file")
    for (const auto& w : cat.file2file_flag()) a.push_back(w);
  else if (strategy == "per_block")
    for (const auto& w : cat.torch()["device_facts"]["per_block"]["flag"]) a.push_back(w.get<std::string>());
  else if (strategy == "multi_gpu") a.push_back("--multi_gpu");
  else if (strategy == "multi_device") a.push_back("--multi_device");
  if (strategy == "cpu" || plan.value("hardware", Json(nullptr)) == "cpu") a.insert(a.end(), {"--device", "cpu"});
  // Evaluation flags per intent are catalog data; file-to-file never evaluates.
  if (strategy == "file2file") a.push_back("--skip_evaluation");
  else if (plan["evaluation_intent"].is_string() && cat.torch()["evaluation_flags"].contains(plan["evaluation_intent"].get<std::string>()))
    for (const auto& f : cat.torch()["evaluation_flags"][plan["evaluation_intent"].get<std::string>()]) a.push_back(f);
  if (!plan.value("trust_remote_code", false)) a.push_back("--no_trust_remote_code");
  // quantize_quark.py sets CUDA_VISIBLE_DEVICES=0 at import when it is unset
  // (ROCm's PyTorch honours it too): a plan that spreads the model must name
  // every device, or accelerate's device map sees one.
  int64_t estimated_n = 0;  // a device count from the plan's estimate, not from --gpus or env_context.json
  // Quark 0.13's file-to-file runs one worker per visible GPU with --multi_gpu, except from an FP8
  // source (catalog device_facts.file2file.multi_gpu): with a known count above one, the plan uses them.
  bool f2f_multi = false;
  if (strategy == "file2file" && cat.torch()["device_facts"]["file2file"].value("multi_gpu", false) &&
      plan.value("accelerator_count", Json(nullptr)).is_number_integer() && plan["accelerator_count"].get<int64_t>() > 1) {
    const Json* m = analysis.is_object() && analysis.contains("model") ? &analysis["model"] : nullptr;
    f2f_multi = m && !(m->contains("pre_quantized") && (*m)["pre_quantized"] == "fp8");
  }
  if (f2f_multi) a.push_back("--multi_gpu");
  if (strategy == "multi_gpu" || strategy == "multi_device" || f2f_multi) {
    int64_t n = 0;
    if (plan.contains("request") && plan["request"].value("gpus", Json(0)).is_number_integer()) n = plan["request"]["gpus"].get<int64_t>();
    if (n <= 0 && plan.value("accelerator_count", Json(nullptr)).is_number_integer()) n = plan["accelerator_count"].get<int64_t>();
    if (n <= 0 && plan.value("accelerators_needed", Json(nullptr)).is_number_integer()) {
      n = plan["accelerators_needed"].get<int64_t>();
      if (n > 0 && n <= 4096) estimated_n = n;
    }
    if (n <= 0 || n > 4096) n = 8;
    std::string devices;
    for (int64_t i = 0; i < n; ++i) devices += (i ? "," : "") + std::to_string(i);
    inv.env.emplace_back("CUDA_VISIBLE_DEVICES", devices);
    inv.fields["env"] = {{"CUDA_VISIBLE_DEVICES", devices}};
  }
  std::string t;
  if (!inv.env.empty())
    t = "# quantize_quark.py makes only GPU 0 visible unless CUDA_VISIBLE_DEVICES is set\n";
  if (estimated_n)  // a count the user never gave: say where it comes from
    t += "# " + std::to_string(estimated_n) + " GPUs: the plan's estimate of what calibration needs (no --gpus given); list the ones to use\n";
  for (const auto& [k, v] : inv.env) t += k + "=" + shell_quote(v) + " ";
  t += "python quantize_quark.py";
  for (size_t i = 0; i < a.size(); ++i) t += (a[i].rfind("--", 0) == 0 ? " \\\n    " : " ") + shell_quote(a[i]);
  inv.text = t + "\n";
  // Steps after Quark the plan's hardware needs (Ryzen AI: ONNX Runtime GenAI export).
  if (plan.contains("post_quark_steps") && plan["post_quark_steps"].is_array() && !plan["post_quark_steps"].empty()) {
    inv.text += "# then:\n";
    Json steps = Json::array();
    for (const auto& step : plan["post_quark_steps"])
      if (step.is_string()) {
        steps.push_back(replace_output_dir(step.get<std::string>(), output_dir, shell_quote(model)));
        inv.text += steps.back().get<std::string>() + "\n";
      }
    inv.fields["post_quark_steps"] = steps;
  }
  inv.follow_up = follow_up(plan, cat, model);
  inv.serve = serve_command(plan, cat, output_dir, plan["model"].value("model_type", "model"));
  return inv;
}

}  // namespace quarkplan
