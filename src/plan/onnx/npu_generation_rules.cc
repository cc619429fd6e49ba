// Which Ryzen AI NPU runs the model — onnx.npu.generation. NPUs differ by
// generation (XDNA: Phoenix, Hawk Point; XDNA2: Strix, Krackan, Strix Halo),
// and Ryzen AI documents different formats for each (catalog onnx.json
// npu_generations, every fact with its page). A known generation gates the
// NPU targets by what Ryzen AI documents for it; an unknown one keeps Quark's
// planning guide's gate (XINT8 with power-of-two scales on npu_cnn), which
// every generation runs, and an open question asks which NPU.
#include <string>
#include <vector>

#include "common/strings.h"
#include "plan/onnx/rule_helpers.h"
#include "plan/rules.h"

namespace quarkplan::onnx_rules {

using detail::spec;
using detail::target;

namespace {

std::vector<std::string> generation_names(const Catalog& cat) {
  std::vector<std::string> names;
  if (cat.onnx().contains("npu_generations"))
    for (const auto& g : cat.onnx()["npu_generations"]["generations"]) names.push_back(g["name"]);
  return names;
}

// After the target is known: an NPU target of no known generation asks which
// NPU (the plan keeps the guide's gate meanwhile, so it can still be confirmed).
void ask_generation(PlanState& s) {
  const std::string t = target(s);
  if (t != "npu_cnn" && t != "npu_transformer") return;
  if (spec(s)["npu_generation"].is_string()) return;
  std::vector<std::string> names = generation_names(s.cat);
  s.question("Which Ryzen AI NPU will run this model? (--hardware " + join(names, " | ") + ") Until it is known the plan keeps Quark's planning guide's gate for " + t +
                 (t == "npu_cnn" ? " (XINT8, which every generation runs); STX/KRK also run A8W8, A16W8 and BF16."
                                 : " (its INT8/INT16 NPU transformer presets); STX/KRK document transformers in BF16."),
             false);
  // What the guide's gate leaves unsaid for this target (catalog unknown_generation_notes).
  const Json& notes = s.cat.onnx()["npu_generations"].value("unknown_generation_notes", Json::object());
  if (notes.contains(t)) {
    const Json& n = notes[t];
    s.risk("onnx.npu.generation", n["severity"], n["message"].get<std::string>() + ".", n["hint"].get<std::string>() + " (" + n["source"].get<std::string>() + ").");
  }
  if (!s.reasons.contains("onnx_specific.npu_generation"))
    s.reason("onnx_specific.npu_generation", "onnx.npu.generation", "Not given: asked as an open question (the guide's gate applies meanwhile)");
}

}  // namespace

std::string npu_generation_name(const PlanState& s, std::string* source) {
  if (const Json* c = s.choice("onnx_specific.npu_generation")) {
    if (source) *source = "your choice";
    return c->is_string() ? c->get<std::string>() : "";
  }
  if (!s.req.hardware.empty()) {
    if (source) *source = "--hardware " + s.req.hardware;
    return s.req.hardware;
  }
  // env_context.json: the NPU this machine has (quarkplan env reads it from the amdxdna driver).
  const Json& env = s.req.env_context;
  if (env.is_object() && env.contains("hardware") && env["hardware"].is_object()) {
    const Json& hw = env["hardware"];
    for (const char* k : {"npu_generation", "npu_model"})
      if (hw.contains(k) && hw[k].is_string() && !hw[k].get<std::string>().empty()) {
        if (source) *source = "env_context.json (the NPU of the machine it describes)";
        return hw[k].get<std::string>();
      }
  }
  return "";
}

void npu_generation(PlanState& s) {
  spec(s)["npu_generation"] = nullptr;
  std::string source;
  const std::string given = npu_generation_name(s, &source);
  if (given.empty()) {
    ask_generation(s);
    return;
  }
  const std::vector<std::string> names = generation_names(s.cat);
  if (const Json* g = s.cat.npu_generation(given)) {
    spec(s)["npu_generation"] = (*g)["name"];
    s.reason("onnx_specific.npu_generation", "onnx.npu.generation", (*g)["label"].get<std::string>() + ", from " + source);
    return;
  }
  if (s.cat.npu_generic_name(given)) {
    s.reason("onnx_specific.npu_generation", "onnx.npu.generation",
             "A Ryzen AI NPU of no stated generation (" + source + "): Quark's planning guide's NPU gate applies");
    ask_generation(s);
    return;
  }
  std::vector<std::string> spellings = names;
  for (const auto& g : s.cat.onnx()["npu_generations"]["generations"])
    for (const auto& a : g["aliases"]) spellings.push_back(a);
  s.error((source == "your choice" ? "onnx_specific.npu_generation" : source) + " is not a Ryzen AI NPU generation (" + join(names) +
          "; or ryzen-ai when the generation is not known)" + did_you_mean(given, spellings) +
          ". An ONNX plan for a GPU or a CPU takes --target rocm, cuda or cpu");
}

}  // namespace quarkplan::onnx_rules
