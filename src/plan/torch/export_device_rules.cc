// The export format Quark writes and how the run is spread over devices.
// Rules torch.export.format, torch.device.strategy.
#include <algorithm>
#include <fstream>

#include "common/strings.h"
#include "plan/rules.h"
#include "plan/torch/rule_helpers.h"

namespace quarkplan {

namespace torch_rules {

using namespace detail;

namespace {

// "1 is available", "2 are available".
std::string available(int64_t n) { return std::to_string(n) + (n == 1 ? " is available" : " are available"); }

// The plan's steps after Quark, with `steps` added at the end (an absent list starts empty).
void append_post_quark_steps(PlanState& s, const Json& steps) {
  Json all = s.plan.value("post_quark_steps", Json::array());
  for (const auto& step : steps) all.push_back(step);
  s.plan["post_quark_steps"] = all;
}

}  // namespace

void export_format(PlanState& s) {
  std::string e = export_key(s);
  const Json& ex = s.cat.torch()["exports"];
  if (!ex.contains(e) || e == "about") {
    s.error("export_format must be hf, gguf or onnx (got '" + e + "')");
    return;
  }
  const Json& spec = ex[e];
  s.plan["export_format"] = spec["flag"];
  if (const Json* acc = s.accelerator; acc && (*acc).contains("llm_export") && (*acc)["llm_export"] != spec["flag"])
    s.conflict("torch.export.format", "export_format",
               "On " + hw_name(s) + ", LLMs run from a " + (*acc)["llm_export"].get<std::string>() + " checkpoint (" +
                   (*acc).value("llm_export_why", std::string("the accelerator's own flow")) + "): Quark's " + e + " export does not run there.",
               "--export hf");
  std::string who = s.req.export_format.empty() && !s.choice("export_format") ? "The default: " : "Your choice: ";
  s.reason("export_format", "torch.export.format", who + spec["flag"].get<std::string>() + (e == "hf" ? " (Hugging Face safetensors)" : ""));
  // quantize_quark.py re-saves the tokenizer Quark calibrated with; for some model types Quark's
  // get_tokenizer changed a key a runtime reads (found by running Quark: tests/quark_real).
  if (spec.contains("tokenizer_rewrites")) {
    const Json& tr = spec["tokenizer_rewrites"];
    const Json& types = tr["model_types"];
    if (std::count(types.begin(), types.end(), model_type(s)) > 0) {
      s.risk("torch.export.format", "medium", tr["message"], tr["hint"]);
      append_post_quark_steps(s, tr["steps"]);
      s.reason("post_quark_steps", "torch.export.format", "Put back the source's tokenizer_config.json, which quantize_quark.py rewrites for this model type");
    }
  }
  const Json* sc = scheme(s);
  if (!sc) return;
  std::string name = (*sc)["name"];
  if (spec["schemes"].is_array()) {
    const Json& ok = spec["schemes"];
    auto allowed = [&](const std::string& n) { return std::count(ok.begin(), ok.end(), n) > 0; };
    if (!allowed(name)) {
      // The closest exportable scheme: same family and native here, else native, else the first.
      std::string closest;
      for (int pass = 0; pass < 2 && closest.empty(); ++pass)
        for (const auto& o : ok) {
          const Json* osc = s.cat.torch_scheme(o.get<std::string>());
          bool native = !s.accelerator || support_of(s, o.get<std::string>()) == "native";
          if (osc && native && (pass == 1 || (*osc)["family"] == (*sc)["family"])) {
            closest = o.get<std::string>();
            break;
          }
        }
      if (closest.empty() && !ok.empty()) closest = ok[0].get<std::string>();
      s.conflict("torch.export.format", "global_scheme",
                 "Quark's " + e + " export does not accept " + name + " (" + spec["source"].get<std::string>() + "; it accepts " +
                     join(string_list(ok)) + ").",
                 closest, true);
    }
    // Layer overrides must be exportable too; ONNX export cannot mix INT4 and INT8.
    std::vector<std::string> override_schemes;
    for (const auto& [k, v] : s.req.choices)
      if (k.rfind("layer_quant_config.", 0) == 0 && v.is_string()) override_schemes.push_back(v);
    if (const Json* c = s.choice("layer_quant_config"); c && c->is_object())
      for (auto& [p, v] : c->items())
        if (v.is_string()) override_schemes.push_back(v);
    bool int4 = is_int4_weight_only(sc), int8 = (*sc)["family"] == "int8";
    for (const auto& o : override_schemes) {
      if (!allowed(o))
        s.conflict("torch.export.format", "layer_quant_config", "Quark's " + e + " export does not accept the layer scheme " + o + ".",
                   "drop the override or export to hf_format", true);
      const Json* osc = s.cat.torch_scheme(o);
      int4 = int4 || is_int4_weight_only(osc);
      int8 = int8 || (osc && (*osc)["family"] == "int8");
    }
    if (spec.value("no_int4_with_int8", false) && int4 && int8)
      s.conflict("torch.export.format", "layer_quant_config", "Quark's ONNX export does not support INT4 layers mixed with INT8 layers.",
                 "one scheme for every layer, or export to hf_format", true);
  }
  if (spec.contains("model_types") && !std::count(spec["model_types"].begin(), spec["model_types"].end(), model_type(s)))
    s.conflict("torch.export.format", "export_format",
               "Quark's " + e + " export supports only " + join(string_list(spec["model_types"])) + " architectures, not " + model_type(s) + ".",
               "--export hf (then convert with llama.cpp's own tools)", true);
  if (spec.contains("needs_file")) {
    // The file the exporter reads (GGUF: a SentencePiece tokenizer.model). Quark fails on its absence
    // only after calibration, so it is checked now: from the folder's tokenizer files when they are
    // there, else from a config whose vocabulary is known to be BPE (catalog bpe_tokenizer_configs).
    const std::string needed = spec["needs_file"];
    const std::string dir = model(s).value("model_path", "");
    bool has_tokenizer = false, has_needed = false;
    for (const char* f : {"tokenizer.json", "tokenizer.model", "tokenizer_config.json", "vocab.json", "tiktoken.model"})
      if (!dir.empty() && std::ifstream(dir + "/" + f).good()) {
        has_tokenizer = true;
        has_needed = has_needed || f == needed;
      }
    std::string bpe_why;
    const Json arch = model(s).value("architecture", Json::object());
    const int64_t vocab = arch.is_object() && arch.contains("vocab_size") && arch["vocab_size"].is_number_integer() ? arch["vocab_size"].get<int64_t>() : 0;
    for (const auto& b : spec.value("bpe_tokenizer_configs", Json::array()))
      if (std::count(b["model_types"].begin(), b["model_types"].end(), model_type(s)) && vocab >= b["vocab_size_at_least"].get<int64_t>()) bpe_why = b["why"];
    // llama.cpp's converter refuses a Quark checkpoint ("Quant method is not yet supported: 'quark'"):
    // a GGUF of this model comes from llama.cpp's own tools on the unquantized weights.
    const std::string hint = "llama.cpp's own tools on the unquantized model (convert_hf_to_gguf.py reads BPE tokenizers, then llama-quantize to Q4_K_M or Q8_0); "
                             "its converter refuses a Quark checkpoint ('Quant method is not yet supported: quark'), so no Quark plan makes this GGUF";
    if (has_tokenizer && !has_needed)
      s.conflict("torch.export.format", "export_format",
                 "Quark's " + e + " exporter reads a SentencePiece " + needed + ", which " + dir + " does not have (its tokenizer is tokenizer.json): " +
                     spec.value("needs_file_why", std::string("the export fails")) + ".",
                 hint, true);
    else if (!has_tokenizer && !bpe_why.empty())
      s.conflict("torch.export.format", "export_format",
                 "Quark's " + e + " exporter reads a SentencePiece " + needed + ", and " + bpe_why + ": " + spec.value("needs_file_why", std::string("the export fails")) + ".",
                 hint, true);
    else if (!has_tokenizer)
      s.risk("torch.export.format", "medium",
             "Quark's " + e + " exporter reads a SentencePiece " + needed + " from the model folder, which holds no tokenizer files to check (" + spec.value("needs_file_why", std::string("")) + ").",
             "Download the tokenizer with the model and make sure " + needed + " is there, or " + hint + ".");
  }
}

void device_strategy(PlanState& s) {
  const Json& fit = s.plan["estimates"].value("fit", Json(nullptr));
  const Json* sc = scheme(s);
  std::string hw = hw_name(s);
  // File-to-file writes weights and their scales, shard by shard, on CUDA
  // (catalog device_facts.file2file): every scheme it would write, global or
  // per layer, must need neither input scales nor zero points.
  std::string f2f_blocker;
  std::vector<std::string> written = {sc ? (*sc)["name"].get<std::string>() : ""};
  const Json layers = s.plan.value("layer_quant_config", Json::object());
  for (auto& [p, v] : layers.items())
    if (v.is_string()) written.push_back(v);
  for (const auto& n : written) {
    const Json* w = s.cat.torch_scheme(n);
    if (!w || !f2f_blocker.empty()) continue;
    if ((*w)["needs_calibration_data"] == true) f2f_blocker = "static activation scales (" + n + ")";
    else if ((*w)["weight_symmetric"] == false) f2f_blocker = "zero points of asymmetric weights (" + n + ")";
  }
  if (f2f_blocker.empty() && s.plan["kv_cache_scheme"].is_string()) f2f_blocker = "a KV-cache scheme";
  if (f2f_blocker.empty() && s.plan.value("export_format", "hf_format") != "hf_format")
    f2f_blocker = "the " + s.plan["export_format"].get<std::string>() + " export";
  if (f2f_blocker.empty() && hw == "cpu") f2f_blocker = "a CPU run (it always quantizes on cuda)";
  // Only a default algorithm in the way: file-to-file can still run without it.
  bool f2f_but_default_algorithm = sc && f2f_blocker.empty() && !algorithms_of(s).empty() && !s.choice("algorithm");
  if (f2f_blocker.empty() && !algorithms_of(s).empty()) f2f_blocker = "algorithms (" + join(algorithms_of(s)) + ")";
  bool f2f_eligible = sc && f2f_blocker.empty();
  std::string strategy, why;
  int64_t gpus_needed = 1;
  // Block-by-block calibration (Quark 0.13's --quant_flow per_block): the model stays in CPU memory.
  const Json per_block = s.cat.torch()["device_facts"].value("per_block", Json(nullptr));
  const Json* c = s.choice("device_strategy");
  if (c && !c->is_string()) {
    s.error("device_strategy must be one of single, multi_gpu, multi_device, file2file, per_block, cpu");
    return;
  }
  std::string want = c ? c->get<std::string>() : "";
  if (!want.empty() && want != "single" && want != "multi_gpu" && want != "multi_device" && want != "file2file" && want != "cpu" && want != "per_block") {
    s.error("device_strategy must be one of single, multi_gpu, multi_device, file2file, per_block, cpu (got '" + want + "')");
    return;
  }
  // per_block is driven by the activation calibration pass: Quark 0.13 refuses a config with nothing
  // to calibrate (weight-only, or dynamic activations without a per-tensor scale: api.py quantize_model).
  std::string pb_blocker;
  if (sc && (*sc)["activation_static"] != true)
    pb_blocker = (*sc)["name"].get<std::string>() + (((*sc)["weight_only"] == true) ? " is weight-only" : " has dynamic activations without a per-tensor scale");
  if (want == "per_block" && !per_block.is_object()) {
    s.error("device_strategy per_block is Quark 0.13's --quant_flow per_block; this plan is for Quark " + s.cat.release() +
            ", which has no such flow (plan with --quark-version 0.13)");
    return;
  }
  if (fit.is_object()) gpus_needed = fit.value("calibration_accelerators", int64_t{1});
  // quantize_quark.py's --multi_gpu is one process on one host: with no count given, a calibration that
  // needs more GPUs than a node holds is planned for one node (catalog device_facts.gpus_per_node).
  const int64_t node = s.cat.torch()["device_facts"].value("gpus_per_node", int64_t{8});
  const int64_t have = s.accelerator_count > 0 ? s.accelerator_count : (gpus_needed > node ? node : 0);
  const std::string have_text = s.accelerator_count > 0 ? available(have) : "one node holds " + std::to_string(node) + " (no --gpus given; --multi_gpu is one process on one host)";
  if (!want.empty()) {
    strategy = want;
    why = "Your choice";
    if (want == "file2file" && !f2f_eligible)
      s.conflict("torch.device.strategy", "device_strategy",
                 s.cat.file2file_flag_text() + " writes weights and scales shard by shard, without calibration, only as hf_format, on cuda: it cannot do " +
                     f2f_blocker + ".",
                 hw == "cpu" ? "cpu" : gpus_needed <= 1 ? "single" : "multi_gpu", true);
    if (want == "per_block" && !pb_blocker.empty())
      s.conflict("torch.device.strategy", "device_strategy",
                 "--quant_flow per_block calibrates block by block, and Quark refuses it for a configuration with no activation scales to calibrate: " +
                     pb_blocker + " (quark/torch/quantization/api.py, amd-quark 0.13).",
                 f2f_eligible ? "file2file" : gpus_needed <= 1 ? "single" : "multi_gpu", true);
    if (hw == "cpu" && want == "per_block")
      s.conflict("torch.device.strategy", "device_strategy",
                 "--quant_flow per_block streams decoder blocks from CPU memory through a GPU: on a CPU there is nothing to stream to.", "cpu", true);
    if (hw == "cpu" && (want == "multi_gpu" || want == "multi_device"))
      s.conflict("torch.device.strategy", "device_strategy",
                 "--" + want + " places the model with accelerate's device map, which overrides --device cpu: on a CPU the plan runs with --device cpu.",
                 "cpu", true);
    // Spreading over one device does nothing: the command names GPUs 0..N-1
    // (CUDA_VISIBLE_DEVICES) from --gpus or the fit.
    const int64_t spread = s.req.gpus > 0 ? s.req.gpus : gpus_needed;
    if (hw != "cpu" && want == "multi_gpu" && spread < 2)
      s.risk("torch.device.strategy", "medium",
             "--multi_gpu over " + std::string(s.req.gpus > 0 ? "the 1 GPU you have" : "1 GPU (the model fits one, and no --gpus was given)") +
                 " spreads nothing: the command makes only GPU 0 visible.",
             "Give the GPUs to spread over with --gpus N, or keep device_strategy=single.");
  } else if (hw == "cpu") {
    strategy = "cpu";
    why = "The CPU runs quantization (--device cpu; the script's default device is cuda)";
  } else if (hw == "ryzen-ai") {
    strategy = "single";
    why = "Quantization runs on a Linux machine with an AMD Instinct or NVIDIA GPU (Ryzen AI's 'Preparing OGA Models' step 1); the Ryzen AI PC runs the exported model";
  } else if (s.recipe && s.recipe->value("device_strategy", "") == "file2file" && f2f_eligible) {
    strategy = "file2file";
    why = "AMD's recipe (" + s.recipe_name + "): file-to-file, shard by shard (about one shard in memory)";
  } else if (f2f_eligible && gpus_needed > 1 && model(s)["pre_quantized"] == "fp8") {
    // An FP8 source loaded whole is dequantized to 16-bit first, for a scheme that calibrates nothing:
    // file-to-file dequantizes and re-quantizes it shard by shard with the same result.
    strategy = "file2file";
    why = "The fp8 source loaded whole is dequantized to 16-bit (" + std::to_string(gpus_needed) + " x " + hw + "), and " +
          (*sc)["name"].get<std::string>() + " calibrates nothing: file-to-file dequantizes and quantizes it shard by shard instead (about one shard in memory, same weights)";
  } else if (gpus_needed <= 1) {
    strategy = "single";
    why = fit.is_object() ? "Calibration fits one " + hw : "Single accelerator until the hardware is known";
  } else if (f2f_eligible && have > 0 && have < gpus_needed) {
    strategy = "file2file";
    why = "Calibration needs " + std::to_string(gpus_needed) + " x " + hw + " but " + have_text + ": file-to-file quantization streams the shards instead (no calibration needed for " + (*sc)["name"].get<std::string>() + ")";
  } else if (f2f_but_default_algorithm && have > 0 && have < gpus_needed) {
    // The default algorithm needs the whole model in memory, which the
    // accelerators available cannot hold: stream the shards without it.
    strategy = "file2file";
    std::string dropped = s.plan["algorithm"].get<std::string>();
    why = "Calibration with " + dropped + " needs " + std::to_string(gpus_needed) + " x " + hw + " but " + have_text + ": file-to-file quantization streams the shards instead, without " + dropped;
    s.plan["algorithm"] = nullptr;
    s.reason("algorithm", "torch.device.strategy",
             "None: the default " + dropped + " needs the whole model in memory (" + std::to_string(gpus_needed) + " x " + hw + "), and file-to-file applies none");
    s.risk("torch.device.strategy", "medium",
           (*sc)["name"].get<std::string>() + " without " + dropped + " rounds every weight to nearest: " + std::to_string(have) + " x " + hw +
               " cannot hold the model for " + dropped + ".",
           gpus_needed <= node ? "With " + std::to_string(gpus_needed) + " or more accelerators (--gpus), --algorithm " + dropped + " and device_strategy=multi_gpu."
                               : "Calibrating with " + dropped + " needs " + std::to_string(gpus_needed) + " x " + hw + ", more than one host's " + std::to_string(node) +
                                     " (--multi_gpu is one process): accept round-to-nearest, or pick a scheme " + dropped + " needs less memory for.");
  } else if (!f2f_eligible && algorithms_of(s).empty() && have > 0 && have < gpus_needed && per_block.is_object() &&
             pb_blocker.empty()) {
    // Static scales need calibration: Quark 0.13 calibrates block by block from CPU memory.
    strategy = "per_block";
    why = "Calibration needs " + std::to_string(gpus_needed) + " x " + hw + " but " + have_text + ", and file-to-file cannot do " + f2f_blocker +
          ": --quant_flow per_block keeps the model in CPU memory and calibrates one decoder block at a time on one GPU (the host needs the whole model's memory)";
  } else if (!f2f_eligible && algorithms_of(s).empty() && have > 0 && have < gpus_needed) {
    // Static scales need calibration: CPU offload is the one way that fits.
    strategy = "multi_device";
    why = "Calibration needs " + std::to_string(gpus_needed) + " x " + hw + " but " + have_text + ", and file-to-file cannot do " + f2f_blocker + ": --multi_device offloads the rest to CPU memory (slow)";
  } else {
    strategy = "multi_gpu";
    why = "Calibration needs " + std::to_string(gpus_needed) + " x " + hw + " (--multi_gpu spreads the model)";
  }
  if (strategy == "multi_gpu" && std::max(s.accelerator_count, gpus_needed) > node && hw != "cpu")
    s.risk("torch.device.strategy", "high",
           "--multi_gpu spreads one process over the GPUs of one host, which holds " + std::to_string(node) + ": calibration needs " + std::to_string(gpus_needed) + " x " + hw +
               (s.accelerator_count > node ? " and " + std::to_string(s.accelerator_count) + " were given (--gpus)" : "") + ".",
           "Stream it instead: device_strategy=file2file (no calibration, no algorithm) or per_block (static scales, Quark 0.13), or a smaller scheme.");
  if (strategy == "multi_gpu" && s.accelerator_count > 0 && s.accelerator_count < gpus_needed)
    s.risk("torch.device.strategy", "high",
           "Calibration needs " + std::to_string(gpus_needed) + " x " + hw + " but only " + available(s.accelerator_count) + " (" +
               s.accelerator_count_source + ").",
           f2f_eligible ? "Use file-to-file quantization (device_strategy=file2file), or run on a machine with more accelerators."
                        : "Run on a machine with " + std::to_string(gpus_needed) + " accelerators, or use --multi_device (CPU offload: slow, no algorithms).");
  if (strategy == "multi_device" && !algorithms_of(s).empty())
    s.conflict("torch.device.strategy", "device_strategy",
               "--multi_device offloads to CPU and, as its help text says, supports only quantization without algorithms (the plan has " +
                   s.plan["algorithm"].get<std::string>() + ").",
               gpus_needed <= 1 ? "single" : "multi_gpu");
  // File-to-file loads about one shard and never calibrates: the calibration
  // rows and the calibration-memory risk no longer apply.
  if (strategy == "file2file") {
    // The file-to-file command always skips evaluation (--skip_evaluation): the table says so.
    if (s.plan.value("evaluation_intent", "") != "none") {
      s.plan["evaluation_intent"] = "none";
      s.reason("evaluation_intent", "torch.device.strategy",
               std::string(s.choice("evaluation_intent") ? "none, not your choice: " : "none: ") +
                   "file-to-file quantization writes the shards without loading the model, and the command skips evaluation (--skip_evaluation)");
    }
    for (const char* row : {"calibration_dataset", "num_calib_data", "seq_len"})
      if (s.reasons.contains(row)) s.reason(row, "torch.device.strategy", "Not used: file-to-file quantization does not calibrate (the command leaves it out)");
    Json kept = Json::array();
    for (auto r : s.risks) {
      if (r["rule"] == "torch.fit.accelerators" && r["message"].get<std::string>().rfind("Calibration loads", 0) == 0) continue;
      if (r["rule"] == "torch.pre_quantized.dequantized" && r["message"].get<std::string>().find("dequantizes it to BF16 on load") != std::string::npos) {
        std::string m = model(s)["pre_quantized"];
        r["message"] = "The checkpoint is already quantized (" + m + "). File-to-file dequantizes it shard by shard (FP8 sources with a Triton kernel on CUDA), so memory stays at about one shard, and the result is bounded by the " + m + " source's quality.";
      }
      kept.push_back(r);
    }
    s.risks = kept;
  }
  if (strategy == "per_block") {
    // Quark skips evaluation when the model does not fit the device after calibration (the reason per_block was chosen).
    if (want.empty() && !s.choice("evaluation_intent") && s.plan.value("evaluation_intent", "") != "none") {
      s.plan["evaluation_intent"] = "none";
      s.reason("evaluation_intent", "torch.device.strategy",
               "none: the model does not fit the accelerators, and per_block's evaluation would be skipped by Quark with a warning (--skip_evaluation)");
    }
    // Calibration no longer needs the whole model on the accelerators.
    Json kept = Json::array();
    for (const auto& r : s.risks)
      if (!(r["rule"] == "torch.fit.accelerators" && r["message"].get<std::string>().rfind("Calibration loads", 0) == 0)) kept.push_back(r);
    s.risks = kept;
  }
  s.plan["device_strategy"] = strategy;
  // A strategy that streams the model (shard by shard, block by block, or offloaded to CPU memory)
  // never holds it whole on the accelerators: only serving decides whether the plan fits.
  if (strategy == "file2file" || strategy == "per_block" || strategy == "multi_device")
    if (s.plan.contains("estimates") && s.plan["estimates"].is_object() && s.plan["estimates"].contains("fit") && s.plan["estimates"]["fit"].is_object()) {
      Json& fit = s.plan["estimates"]["fit"];
      fit["calibration_streamed"] = strategy;
      int64_t have = fit["accelerators_available"].is_number_integer() ? fit["accelerators_available"].get<int64_t>() : 0;
      fit["fits"] = fit.value("deployment_accelerators", int64_t{1}) <= std::max<int64_t>(have, 1);
    }
  s.plan["accelerators_needed"] = fit.is_object() ? Json(strategy == "per_block" ? int64_t{1} : gpus_needed) : Json(nullptr);
  s.reason("device_strategy", "torch.device.strategy", why);
  // Ryzen AI: what happens after Quark.
  if (hw == "ryzen-ai") {
    // After any step already there (restoring the tokenizer).
    append_post_quark_steps(s, s.recipe && s.recipe->contains("after_quark") ? (*s.recipe)["after_quark"] : Json::array());
    s.reason("post_quark_steps", "torch.device.strategy",
             "AMD's Ryzen AI flow (\"Preparing OGA Models\"): export hf_format, then model_generate on the Ryzen AI PC, which builds the ONNX Runtime GenAI model from it");
  }
}

}  // namespace torch_rules
}  // namespace quarkplan
