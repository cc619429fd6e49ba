#include "ui/intake_summary.h"

#include <algorithm>
#include <fmt/format.h>

#include "common/units.h"

namespace quarkplan::ui {

// Sizes in the tool's one unit convention (binary, see common/units.h).
std::string human_bytes(double b) { return format_bytes(b > 0 ? static_cast<uint64_t>(b) : 0); }

namespace {

// The model's size: exact bytes when intake recorded them, else the GB value.
std::string model_size(const Json& m) {
  // ONNX analyses record the file's bytes, Hugging Face ones the checkpoint's.
  for (const char* k : {"size_bytes", "file_size_bytes"})
    if (m.contains(k) && m[k].is_number_unsigned()) return format_bytes(m[k].get<uint64_t>());
  return human_bytes(m.value("estimated_size_gb", 0.0) * 1e9);
}

std::string shape_text(const Json& shape) {
  if (shape.is_null()) return "[?]";
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].is_string() ? shape[i].get<std::string>() : std::to_string(shape[i].get<int64_t>());
  }
  return s + "]";
}

std::string join(const Json& arr, const std::string& sep = ", ") {
  std::string s;
  for (const auto& v : arr) s += (s.empty() ? "" : sep) + (v.is_string() ? v.get<std::string>() : v.dump());
  return s;
}

std::string risks_text(const Json& risks, const Style& st, const std::string& indent) {
  if (risks.empty()) return "None\n";
  std::string out;
  bool first = true;
  for (const auto& r : risks) {
    std::string sev = r["severity"];
    std::string tag = sev == "high" ? st.red("[high]") : sev == "medium" ? st.yellow("[medium]") : st.dim("[low]");
    // The check's ID, so `quarkplan rules ID` finds its documentation.
    std::string rule = r.contains("rule") && r["rule"].is_string() && !r["rule"].get<std::string>().empty() ? " [" + r["rule"].get<std::string>() + "]" : "";
    out += (first ? "" : indent) + tag + " " + r["message"].get<std::string>() + rule + "\n";
    if (r.contains("recovery_hint") && !r["recovery_hint"].get<std::string>().empty())
      out += indent + "  -> " + r["recovery_hint"].get<std::string>() + "\n";
    first = false;
  }
  return out;
}

}  // namespace

std::string render_intake_summary(const Json& a, const Style& st) {
  const Json& m = a["model"];
  const std::string ind(21, ' ');
  std::string out;
  if (m.contains("onnx_specific")) {
    const Json& o = m["onnx_specific"];
    const Json& q = a["quantization_targets"]["onnx_specific"];
    out += st.bold("ONNX Model Analysis:") + "\n";
    out += fmt::format("  Model path:        {}\n", m["model_path"].get<std::string>());
    out += fmt::format("  File size:         {}  external-data: {}\n",
                       model_size(m), o["uses_external_data"].get<bool>() ? "Yes" : "No");
    std::string ai = "?";
    for (const auto& op : o["opsets"])
      if (op["domain"] == "ai.onnx") ai = std::to_string(op["version"].get<int64_t>());
    out += fmt::format("  IR / Opset:        ir={}, ai.onnx={}  (custom domains: {})\n", o["ir_version"].get<int64_t>(), ai,
                       o["custom_domains"].empty() ? "None" : join(o["custom_domains"]));
    {
      // The detail says what the guess cannot: an MLP, or an unrolled recurrent cell.
      std::string guess = o["architecture_guess"], detail = o.value("architecture_detail", guess);
      static const std::map<std::string, std::string> said = {{"mlp", "an MLP: Gemm/MatMul layers without attention"},
                                                               {"unrolled_recurrent", "recurrent cells unrolled into Gemm/Sigmoid/Tanh"}};
      auto it = said.find(detail);
      out += fmt::format("  Architecture:      {}{}\n", guess, detail != guess && it != said.end() ? " (" + it->second + ")" : "");
    }
    out += fmt::format("  Nodes:             {} ({} subgraphs)   layout: {}\n", o["node_count"].get<uint64_t>(),
                       o["subgraph_count"].get<uint64_t>(), o["input_layout_guess"].get<std::string>());
    bool first = true;
    for (const auto& i : o["inputs"]) {
      out += fmt::format("  {:<19}{}: {} {}\n", first ? "Inputs:" : "", i["name"].get<std::string>(), i["dtype"].get<std::string>(), shape_text(i["shape"]));
      first = false;
    }
    first = true;
    for (const auto& i : o["outputs"]) {
      out += fmt::format("  {:<19}{}: {} {}\n", first ? "Outputs:" : "", i["name"].get<std::string>(), i["dtype"].get<std::string>(), shape_text(i["shape"]));
      first = false;
    }
    const Json& qc = q["quantizable_op_counts"];
    out += fmt::format("  Quantizable ops:   Conv={}, MatMul={}, Gemm={}  (linear_layer_count={})\n", qc["Conv"].get<uint64_t>(),
                       qc["MatMul"].get<uint64_t>(), qc["Gemm"].get<uint64_t>(), a["quantization_targets"]["linear_layer_count"].get<uint64_t>());
    out += fmt::format("  Weights:           {} params ({} in Constant nodes)\n", o["weights"]["total_params"].get<uint64_t>(),
                       o["weights"]["in_constant_nodes"].get<uint64_t>());
    // Name the quantized form found (QDQ, QOperator, dynamic, MatMulNBits, Quark's ops), not just "QDQ".
    Json forms = Json::array();
    if (o.contains("quantized_forms") && o["quantized_forms"].is_array())
      for (const auto& fm : o["quantized_forms"])
        if (fm.contains("label") && fm["label"].is_string())
          forms.push_back(fm["label"].get<std::string>() + (fm.contains("ops") && fm["ops"].is_array() ? " [" + join(fm["ops"]) + "]" : ""));
    if (forms.empty() && (o["has_qdq_already"].get<bool>() || o["has_quark_custom_ops"].get<bool>()))
      forms.push_back(join(o.value("quantized_op_types", Json::array())));
    out += fmt::format("  Already quantized: {}\n", forms.empty() ? std::string("No") : "Yes: " + join(forms, "; "));
    out += fmt::format("  Preset candidates: [{}]\n", join(q["preset_candidates"]));
  } else {
    out += st.bold("Model Analysis:") + "\n";
    out += fmt::format("  Model path:       {}\n", m["model_path"].get<std::string>());
    out += fmt::format("  Model type:       {}{}\n", m["model_type"].get<std::string>(),
                       m.value("template_supported", true) ? "" : "  (no Quark template)");
    if (m.contains("num_hidden_layers") && !m["num_hidden_layers"].is_null())
      out += fmt::format("  Hidden layers:    {}\n", m["num_hidden_layers"].dump());
    out += fmt::format("  Linear layers:    {}{}\n",
                       a["quantization_targets"].value("module_names_source", "") == "safetensors" ? "" : "~",
                       a["quantization_targets"]["linear_layer_count"].dump());
    if (m.contains("total_params") && !m["total_params"].is_null())
      out += fmt::format("  Parameters:       {}\n", m["total_params"].is_number_unsigned()
                                                        ? format_params(m["total_params"].get<uint64_t>()) +
                                                              (m["total_params"].get<uint64_t>() >= 100000 ? " (" + with_commas(m["total_params"].get<uint64_t>()) + ")" : "")
                                                        : m["total_params"].dump());
    out += fmt::format("  Size:             {}\n", model_size(m));
    if (m.contains("is_moe"))
      out += fmt::format("  MoE:              {}{}\n", m["is_moe"].get<bool>() ? "Yes" : "No",
                         m["is_moe"].get<bool>() && !m["num_experts"].is_null() ? " (" + m["num_experts"].dump() + " experts)" : "");
    {
      // A template pattern that matches no module is marked where it stands.
      const Json& q = a["quantization_targets"];
      const Json unmatched = q.value("exclude_defaults_unmatched", Json::array());
      std::string list;
      for (const auto& d : q["exclude_defaults"]) {
        if (!list.empty()) list += ", ";
        list += d.is_string() ? d.get<std::string>() : d.dump();
        if (std::count(unmatched.begin(), unmatched.end(), d)) list += " (matches nothing)";
      }
      out += fmt::format("  Exclude defaults: [{}]\n", list);
    }
    if (m.contains("transformers_version_required"))
      out += fmt::format("  Compatibility:    transformers {}\n", m["transformers_version_required"].get<std::string>());
    if (m.contains("pre_quantized") && !m["pre_quantized"].is_null())
      out += fmt::format("  Pre-quantized:    {}\n", m["pre_quantized"].get<std::string>());
  }
  out += "  Risks:             ";
  if (!m.contains("onnx_specific")) out.pop_back();
  out += risks_text(a["risks"], st, m.contains("onnx_specific") ? ind : std::string(20, ' '));
  if (a["analysis_status"] == "partial") {
    out += st.yellow("  Analysis is PARTIAL:") + " " + join(a.value("partial_reasons", Json::array()), "; ") + "\n";
  }
  return out;
}

}  // namespace quarkplan::ui
