// `explain --python FILE`: the plan's Quark ONNX call as a whole script that
// runs as written. The config statements are the ones `explain` prints
// (plan/invocation_onnx.cc); this file adds what a terminal snippet leaves to
// the reader: the paths, the calibration data as Quark's PathDataReader reads
// it (or a reader over a folder given at run time for a draft), and a check
// that loads the quantized model as it will be served and runs one sample.
#include "plan/onnx_script.h"

#include <filesystem>
#include <stdexcept>

#include "catalog/catalog.h"
#include "common/strings.h"
#include "plan/fix_shapes.h"
#include "plan/invocation.h"

namespace quarkplan {

namespace {

std::string py_str(const std::string& s) { return Json(s).dump(); }

// A Python list of strings.
std::string py_list(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + py_str(v[i]);
  return s + "]";
}

// A JSON value as a Python literal (dicts of strings, numbers, booleans).
std::string py_value(const Json& v) {
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + py_value(v[i]);
    return s + "]";
  }
  if (v.is_object()) {
    std::string s = "{";
    bool first = true;
    for (auto& [k, x] : v.items()) {
      s += (first ? "" : ", ") + py_str(k) + ": " + py_value(x);
      first = false;
    }
    return s + "}";
  }
  return v.dump();
}

// Vitis AI EP options as Python: {"env": V, "path": [...]} is a file under
// the Ryzen AI installation (os.path.join(os.environ[V], ...)).
std::string provider_options_text(const Json& o) {
  std::string s = "{";
  bool first = true;
  for (auto& [k, v] : o.items()) {
    std::string value = py_value(v);
    if (v.is_object() && v.contains("env") && v.contains("path")) {
      value = "os.path.join(os.environ[" + py_str(v["env"].get<std::string>()) + "]";
      for (const auto& part : v["path"]) value += ", " + py_str(part.get<std::string>());
      value += ")";
    }
    s += (first ? "" : ", ") + py_str(k) + ": " + value;
    first = false;
  }
  return s + "}";
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

}  // namespace

std::string onnx_python_script(const Json& plan, const Json& analysis, const Catalog& cat, const std::string& plan_path, const std::string& script_path) {
  if (plan.value("backend", "") != "onnx") throw std::logic_error("only an ONNX plan has a Python script (a Torch plan's invocation is the shell command explain prints)");
  Invocation inv = onnx_invocation(plan, analysis, cat);
  const std::string preset = plan["preset"].is_string() ? plan["preset"].get<std::string>() : "";
  const std::string target = plan["deployment_target"].is_string() ? plan["deployment_target"].get<std::string>() : "";  // null until the target is known
  const Json* tj = target.empty() ? nullptr : cat.onnx_target(target);
  const Json* pj = preset.empty() ? nullptr : cat.onnx_preset(preset);
  const std::string model_in = inv.fields.value("model_input", "model.onnx"), model_out = inv.fields.value("model_output", "model_quantized.onnx");
  const Json& calib = plan["calibration"];
  const bool has_set = calib.contains("data_path") && calib["data_path"].is_string();
  const bool reader_needed = inv.py_call_extra.find("calibration_data_reader=data_reader") != std::string::npos;
  // The set's layout as the plan's check found it; else flat only for a one-input model (Quark's PathDataReader).
  const size_t n_inputs = analysis.is_object() && analysis.contains("model") ? analysis["model"]["onnx_specific"].value("inputs", Json::array()).size() : 1;
  // "shared": .npy files directly in the folder (intake/calibration_data.cc), which PathDataReader reads first.
  const bool flat = calib.contains("data_layout") ? calib["data_layout"] != "per_input" : n_inputs <= 1;
  // Quark's own Q/DQ ops (BF16/FP16 extended Q/DQ, BFP, MX: catalog qdq_layout
  // custom_domain) load only with its custom-op library registered.
  bool custom_ops = false;
  if (pj)
    for (const char* k : {"activation_type", "weight_type"}) {
      const Json& types = cat.onnx()["qdq_layout"]["types"];
      if ((*pj)[k].is_string() && types.contains((*pj)[k].get<std::string>()))
        custom_ops = custom_ops || types[(*pj)[k].get<std::string>()].value("custom_domain", false);
    }
  const bool npu = target == "npu_cnn" || target == "npu_transformer";
  const std::string script = std::filesystem::path(script_path).filename().string();
  // Inputs Quark's ConvertNCHWToNHWC turns to NHWC: the calibration samples
  // stay NCHW (Quark reads them for the float model), the quantized model takes NHWC.
  std::vector<std::string> nhwc_inputs;
  if (plan["onnx_specific"]["extra_options"].value("ConvertNCHWToNHWC", false) == true && analysis.is_object() && analysis.contains("model")) {
    const Json& facts = analysis["model"]["onnx_specific"];
    std::vector<ShapeSlot> before = fix_shapes_slots(facts, false), after = fix_shapes_slots(facts, true);
    for (size_t i = 0; i < before.size() && i < after.size(); ++i)
      if (!before[i].output && before[i].dims != after[i].dims) nhwc_inputs.push_back(before[i].name);
  }

  std::string s;
  s += "#!/usr/bin/env python3\n";
  s += "\"\"\"Quantize " + std::filesystem::path(model_in).filename().string() + " with AMD Quark: " + (preset.empty() ? "no preset decided yet" : preset) +
       (tj ? " for the " + (*tj).value("label", target) : std::string()) + ".\n\n";
  s += "Written by quarkplan from " + plan_path + " (" + (plan.value("requires_confirmation", true) ? "a DRAFT: answer its open questions first" : "confirmed") +
       "), for amd-quark " + plan.value("catalog_quark_version", std::string("?")) + " and onnxruntime.\n";
  s += "Run it where Quark is installed (no GPU needed unless the plan says so):\n";
  s += "    python3 " + script + (reader_needed ? " --calib-data DIR" : "") + "\n        quantize, then run one sample through the result\n";
  s += "    python3 " + script + " --check-only\n        only run one sample through an existing " + model_out + "\n";
  if (npu) s += "    python3 " + script + " --check-only --npu\n        the same on the NPU, through the Vitis AI execution provider (on the Ryzen AI PC)\n";
  s += "\"\"\"\n";
  // What the plan accepted, where the script cannot show it.
  std::vector<std::string> risk_lines;
  if (plan.contains("risks"))
    for (const auto& r : plan["risks"])
      if (r.value("severity", "") == "high") risk_lines.push_back("# HIGH (" + r.value("rule", std::string()) + "): " + r.value("message", std::string()));
  if (!risk_lines.empty()) {
    s += "# Risks the plan carries (quarkplan explain " + plan_path + " shows them all):\n";
    for (const auto& l : risk_lines) s += l + "\n";
  }
  s += "import argparse\nimport os\nimport sys\n\nimport numpy as np\nimport onnxruntime as ort\n";
  if (reader_needed) s += "from onnxruntime.quantization import CalibrationDataReader\n";
  s += inv.py_imports;
  if (custom_ops) s += "from quark.onnx import get_library_path\n";
  s += "\nMODEL_INPUT = " + py_str(model_in) + "\n";
  s += "MODEL_OUTPUT = " + py_str(model_out) + "\n";
  if (has_set) {
    s += "# The plan's calibration set, " + std::string(flat ? "one .npy per sample (the model's one input)" : "one folder per input, the same file names in each") +
         ", as Quark's PathDataReader reads it.\n";
    s += "CALIBRATION_DATA = " + py_str(calib["data_path"].get<std::string>()) + "\n";
    s += std::string("CALIBRATION_FLAT = ") + (flat ? "True" : "False") + "\n";
  } else if (reader_needed) {
    s += "CALIBRATION_DATA = None  # --calib-data DIR: one .npy per sample, in one folder per input when the model has several\n";
  } else {
    s += "CALIBRATION_DATA = None  # " + preset + " reads no calibration data\n";
  }
  // The config: the statements explain prints, with the paths as the names above.
  std::string config = inv.py_config;
  s += config;
  if (config.empty() || config.back() != '\n') s += "\n";

  s += "\nNUMPY_TYPES = {\"tensor(float)\": np.float32, \"tensor(float16)\": np.float16, \"tensor(double)\": np.float64,\n"
       "               \"tensor(int64)\": np.int64, \"tensor(int32)\": np.int32, \"tensor(int8)\": np.int8,\n"
       "               \"tensor(uint8)\": np.uint8, \"tensor(bool)\": np.bool_}\n";
  if (!nhwc_inputs.empty())
    s += "# Inputs ConvertNCHWToNHWC makes NHWC in the quantized model (the calibration samples stay NCHW).\nNHWC_INPUTS = " + py_list(nhwc_inputs) + "\n";
  s += "\n\ndef sample_files(folder):\n    return sorted(f for f in os.listdir(folder) if f.endswith(\".npy\"))\n";
  s += "\n\ndef shaped(array, shape, dtype, nhwc=False):\n"
       "    \"\"\"One sample as the session takes it: batch dimension added, dtype cast (NCHW to NHWC where the model was converted).\"\"\"\n"
       "    array = array.astype(dtype)\n"
       "    if nhwc and array.ndim == 3:\n"
       "        array = np.expand_dims(array, 0)\n"
       "    if nhwc and array.ndim == 4:\n"
       "        return array.transpose(0, 2, 3, 1)\n"
       "    if array.ndim == len(shape) - 1:\n"
       "        array = np.expand_dims(array, 0)\n"
       "    elif array.ndim == 1 and len(shape) > 1:\n"
       "        array = array.reshape([d if isinstance(d, int) and d > 0 else 1 for d in shape])\n"
       "    return array\n";
  if (reader_needed) {
    s += "\n\nclass FolderReader(CalibrationDataReader):\n"
         "    \"\"\"The calibration set: DIR/*.npy for a one-input model, else DIR/<input name>/*.npy.\"\"\"\n\n"
         "    def __init__(self, folder, inputs):\n"
         "        self.folder, self.inputs = folder, inputs\n"
         "        flat = len(inputs) == 1 and sample_files(folder)\n"
         "        self.names = sample_files(folder if flat else os.path.join(folder, inputs[0][0]))\n"
         "        self.flat = bool(flat)\n"
         "        self.index = 0\n\n"
         "    def get_next(self):\n"
         "        if self.index >= len(self.names):\n"
         "            return None\n"
         "        feeds = {}\n"
         "        for name, shape, dtype in self.inputs:\n"
         "            folder = self.folder if self.flat else os.path.join(self.folder, name)\n"
         "            feeds[name] = shaped(np.load(os.path.join(folder, self.names[self.index])), shape, dtype)\n"
         "        self.index += 1\n"
         "        return feeds\n";
  }
  // The sample the check runs: the first of the set, or zeros shaped to the inputs.
  s += "\n\ndef first_sample(name, shape, dtype):\n";
  if (has_set) {
    s += "    folder = CALIBRATION_DATA if CALIBRATION_FLAT else os.path.join(CALIBRATION_DATA, name)\n"
         "    return shaped(np.load(os.path.join(folder, sample_files(folder)[0])), shape, dtype" +
         std::string(nhwc_inputs.empty() ? "" : ", name in NHWC_INPUTS") + ")\n";
  } else if (reader_needed) {
    s += "    folder = CALIBRATION_DATA if sample_files(CALIBRATION_DATA) else os.path.join(CALIBRATION_DATA, name)\n"
         "    return shaped(np.load(os.path.join(folder, sample_files(folder)[0])), shape, dtype" +
         std::string(nhwc_inputs.empty() ? "" : ", name in NHWC_INPUTS") + ")\n";
  } else {
    s += "    return np.zeros([d if isinstance(d, int) and d > 0 else 1 for d in shape], dtype=dtype)\n";
  }

  s += "\n\ndef quantize():\n";
  if (reader_needed) {
    s += "    inputs = [(i.name, i.shape, NUMPY_TYPES.get(i.type, np.float32)) for i in ort.InferenceSession(MODEL_INPUT, providers=[\"CPUExecutionProvider\"]).get_inputs()]\n";
    s += "    data_reader = FolderReader(CALIBRATION_DATA, inputs)\n";
  }
  std::string extra = inv.py_call_extra;
  if (has_set) replace_all(extra, "calibration_data_path=" + py_str(calib["data_path"].get<std::string>()), "calibration_data_path=CALIBRATION_DATA");
  s += "    quantizer = ModelQuantizer(config)\n";
  s += "    quantizer.quantize_model(MODEL_INPUT, MODEL_OUTPUT" + extra + ")\n";
  // Quark logs some failures (a float model its data cannot run, say) and returns without
  // writing the model: stop there, not at a confusing "file doesn't exist" from the check.
  s += "    if not os.path.exists(MODEL_OUTPUT):\n";
  s += "        sys.exit(f\"Quark wrote no {MODEL_OUTPUT}: its [QUARK-ERROR] lines above say why\")\n";

  // The check: the quantized model loaded as it will be served.
  std::vector<std::string> providers = {"CPUExecutionProvider"};
  if (tj && !npu) providers = string_list((*tj).value("execution_providers", Json::array({"CPUExecutionProvider"})));
  s += "\n\ndef check(npu=False):\n";
  s += "    \"\"\"Load " + model_out + " as it will be served and run one sample through it.\"\"\"\n";
  s += "    options = ort.SessionOptions()\n";
  if (custom_ops) {
    // Quark's own ops (BFP, MX, BF16/FP16 extended Q/DQ) need its library in the session.
    std::string device = target == "cuda" ? "\"CUDA\"" : target == "rocm" ? "\"ROCM\"" : "";
    s += "    options.register_custom_ops_library(get_library_path(" + device + "))  # Quark's custom Q/DQ ops run only with its library\n";
  }
  s += "    model = MODEL_OUTPUT\n";
  s += "    providers, provider_options = " + py_list(providers) + ", None\n";
  if (npu) {
    // The Vitis AI EP's options for the plan's NPU generation (catalog
    // npu_generations vitisai_provider_options, from Ryzen AI's modelrun page).
    const Json& gname = plan["onnx_specific"].value("npu_generation", Json());
    const Json* gen = gname.is_string() ? cat.npu_generation(gname.get<std::string>()) : nullptr;
    const Json* grp = gen && pj ? cat.npu_group(*gen, target, preset) : nullptr;
    const bool bf16 = grp && grp->value("scales", "") == "bf16";
    Json vai = Json::object();
    if (gen && (*gen).contains("vitisai_provider_options")) vai = (*gen)["vitisai_provider_options"].value(bf16 ? "bf16" : "int8", Json::object());
    s += "    if npu:\n";
    if (!gen) s += "        # No NPU generation in the plan: Phoenix/Hawk Point need {\"target\": \"X1\", \"xclbin\": ...} (Ryzen AI's modelrun page).\n";
    if (bf16) {
      s += "        # BF16 on the NPU: the Vitis AI EP compiles the FP32 model to BF16 itself (Ryzen AI 1.6+);\n"
           "        # Quark's BF16 model above checks that accuracy on the CPU. A config_file is optional here;\n"
           "        # a deployed application passes the one its precompiled BF16 model was compiled with.\n";
      s += "        model = MODEL_INPUT\n";
    }
    s += "        providers, provider_options = [\"VitisAIExecutionProvider\"], [" + provider_options_text(vai) + "]\n";
  }
  s += "    session = ort.InferenceSession(model, sess_options=options, providers=providers, provider_options=provider_options)\n";
  s += "    feeds = {i.name: first_sample(i.name, i.shape, NUMPY_TYPES.get(i.type, np.float32)) for i in session.get_inputs()}\n";
  s += "    outputs = session.run(None, feeds)\n";
  s += "    for i, value in enumerate(outputs):\n";
  s += "        print(f\"output {i}: shape {getattr(value, 'shape', None)}\")\n";

  s += "\n\ndef main():\n";
  if (reader_needed) s += "    global CALIBRATION_DATA\n";
  s += "    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])\n";
  s += "    parser.add_argument(\"--check-only\", action=\"store_true\", help=\"skip quantization: run a sample through MODEL_OUTPUT\")\n";
  if (npu) s += "    parser.add_argument(\"--npu\", action=\"store_true\", help=\"run the check on the NPU (Vitis AI execution provider)\")\n";
  if (reader_needed) s += "    parser.add_argument(\"--calib-data\", required=True, help=\"the calibration set (one .npy per sample)\")\n";
  s += "    args = parser.parse_args()\n";
  if (reader_needed) s += "    CALIBRATION_DATA = args.calib_data\n";
  s += "    if not args.check_only:\n        quantize()\n";
  s += std::string("    check(") + (npu ? "npu=args.npu" : "") + ")\n";
  s += "\n\nif __name__ == \"__main__\":\n    sys.exit(main())\n";
  return s;
}

}  // namespace quarkplan
