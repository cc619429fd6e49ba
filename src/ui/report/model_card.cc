// The report's model card: the model's facts from the analysis (Torch or
// ONNX), its inputs and outputs, and what intake found.
#include "ui/report/sections.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "common/strings.h"
#include "common/units.h"
#include "plan/fix_shapes.h"
#include "ui/decision_table.h"
#include "ui/report/report_parts.h"

namespace quarkplan::ui::report_detail {

namespace {

struct Fact {
  std::string name, html;  // html already escaped
  bool wide = false;       // spans the whole row (long paths)
};

std::string facts_list(const std::vector<Fact>& facts) {
  std::string out = "<dl class=\"facts\">\n";
  for (const auto& f : facts)
    if (!f.html.empty()) out += std::string(f.wide ? "<div class=\"wide\">" : "<div>") + "<dt>" + e(f.name) + "</dt><dd>" + f.html + "</dd></div>\n";
  return out + "</dl>\n";
}

}  // namespace

std::string model_card(const ReportInput& in) {
  std::string out = "<section id=\"model\">\n<h2>Model</h2>\n";
  const Json& p = in.plan;
  if (in.analysis.is_null()) {
    out += omitted(in.analysis_note.empty() ? "The analysis is not available, so only the plan's own facts are shown." : in.analysis_note);
    out += facts_list({{"Model type", e(str(get(get(p, "model"), "model_type")))},
                       {"Architecture", e(str(get(get(p, "model"), "architecture_guess")))},
                       {"Analysis", "<code>" + e(str(get(get(p, "model"), "analysis_ref"))) + "</code>"}});
    return out + "</section>\n";
  }
  const Json& a = in.analysis;
  const Json* m = get(a, "model");
  std::vector<Fact> f;
  f.push_back({"Path", "<code class=\"path\">" + e(str(get(m, "model_path"))) + "</code>", true});
  std::string status = str(get(a, "analysis_status"));
  std::string st_html = e(status);
  if (status == "partial") {
    std::vector<std::string> why;
    for (const auto& r : array_or_empty(get(a, "partial_reasons")))
      if (r.is_string()) why.push_back(r.get<std::string>());
    st_html = "<strong>partial</strong>" + (why.empty() ? std::string() : ": " + e(join(why, "; ")));
  }
  f.push_back({"Analysis", st_html});
  if (is_onnx(p) || str(get(m, "model_type")) == "onnx") {
    const Json* o = get(m, "onnx_specific");
    std::string arch = str(get(o, "architecture_guess"));
    std::string detail = str(get(o, "architecture_detail"));
    f.push_back({"Architecture", e(arch + (!detail.empty() && detail != arch ? " (" + detail + ")" : ""))});
    std::string producer = str(get(o, "producer_name"));
    if (!producer.empty()) producer += " " + str(get(o, "producer_version"));
    f.push_back({"Producer", e(producer.empty() ? "not recorded" : producer) + (get(o, "ir_version") ? ", IR version " + e(str(get(o, "ir_version"))) : "")});
    std::vector<std::string> opsets;
    for (const auto& x : array_or_empty(get(o, "opsets"))) opsets.push_back(str(get(x, "domain"), "ai.onnx") + " " + str(get(x, "version")));
    if (!opsets.empty()) f.push_back({"Opsets", e(join(opsets))});
    if (auto w = get(o, "weights")) {
      std::string params;
      if (auto t = count(get(w, "total_params"))) params = format_params(*t) + " weights";
      std::vector<std::string> dt;
      if (auto by = get(w, "by_dtype"); by && by->is_object())
        for (auto& [k, v] : by->items())
          if (auto c = count(&v)) dt.push_back(k + " " + format_params(*c));
      if (!dt.empty()) params += " (" + join(dt) + ")";
      if (auto q = count(get(w, "quantizable_params"))) params += "; " + format_params(*q) + " feed Conv/Gemm/MatMul";
      if (!params.empty()) f.push_back({"Parameters", e(params)});
    }
    uint64_t size = count(get(m, "file_size_bytes")).value_or(0) + count(get(o, "external_data_bytes")).value_or(0);
    if (size) f.push_back({"Size", e(format_bytes(size)) + " <span class=\"exact\">(" + with_commas(size) + " bytes)</span>"});
    std::string nodes;
    if (auto n = count(get(o, "node_count"))) nodes = with_commas(*n) + " nodes";
    if (auto s = count(get(o, "subgraph_count"))) nodes += ", " + with_commas(*s) + " subgraphs (If/Loop/Scan)";
    if (auto fn = count(get(o, "function_count")); fn && *fn) nodes += ", " + with_commas(*fn) + " functions";
    if (!nodes.empty()) f.push_back({"Graph", e(nodes)});
    if (truthy(get(o, "uses_external_data"))) {
      std::vector<std::string> files;
      for (const auto& x : array_or_empty(get(o, "external_data_files")))
        if (x.is_string()) files.push_back(x.get<std::string>());
      f.push_back({"External data", e("yes" + (files.empty() ? std::string() : ": " + join(files)))});
    }
    std::string layout = str(get(o, "input_layout_guess"));
    if (!layout.empty()) f.push_back({"Input layout", e(layout) + (truthy(get(o, "has_dynamic_dims")) ? ", with dynamic dimensions" : ", static shapes")});
    std::vector<std::string> forms;
    for (const auto& x : array_or_empty(get(o, "quantized_forms"))) forms.push_back(str(get(x, "label"), str(get(x, "form"))));
    if (forms.empty())
      for (const auto& x : array_or_empty(get(o, "quantized_op_types")))
        if (x.is_string()) forms.push_back(x.get<std::string>());
    f.push_back({"Already quantized", forms.empty() ? "no" : "<strong>yes</strong>: " + e(join(forms, "; "))});
    std::vector<std::string> domains;
    for (const auto& x : array_or_empty(get(o, "custom_domains")))
      if (x.is_string()) domains.push_back(x.get<std::string>());
    if (!domains.empty()) f.push_back({"Custom op domains", e(join(domains))});
    out += facts_list(f);
    // Inputs and outputs with their shapes.
    for (const char* io : {"inputs", "outputs"}) {
      const Json& list = array_or_empty(get(o, io));
      if (list.empty()) continue;
      std::vector<std::vector<Cell>> rows;
      for (const auto& x : list) {
        std::vector<std::string> dims;
        for (const auto& d : array_or_empty(get(x, "shape"))) dims.push_back(d.is_string() ? d.get<std::string>() : d.dump());
        rows.push_back({{"<code>" + e(str(get(x, "name"))) + "</code>", ""}, {e(str(get(x, "dtype"))), ""}, {"<code>[" + e(join(dims)) + "]</code>", ""}});
      }
      out += sortable_table(std::string(io) == "inputs" ? "Inputs" : "Outputs", {"Name", "Type", "Shape"}, rows);
    }
  } else {
    std::vector<std::string> classes;
    for (const auto& x : array_or_empty(get(m, "architectures")))
      if (x.is_string()) classes.push_back(x.get<std::string>());
    f.push_back({"Model type", "<code>" + e(str(get(m, "model_type"))) + "</code>" + (classes.empty() ? "" : " (" + e(join(classes)) + ")")});
    if (auto t = count(get(m, "total_params")))
      f.push_back({"Parameters", e(format_params(*t)) + " <span class=\"exact\">(" + with_commas(*t) + "; " + e(str(get(m, "params_method"), "")) + ")</span>"});
    if (auto gb = number(get(m, "estimated_size_gb")); gb && *gb > 0) {
      uint64_t bytes = count(get(m, "size_bytes")) ? *count(get(m, "size_bytes")) : static_cast<uint64_t>(*gb * 1e9);
      // What the bytes hold: a pre-quantized checkpoint stores its weights in
      // that format (config.json's dtype is then the unquantized rest), so
      // the format and the bits per weight say it; else the stored dtype.
      std::vector<std::string> how;
      std::string pre = str(get(m, "pre_quantized")), dtype = str(get(m, "dtype"));
      if (!pre.empty()) how.push_back(pre + " weights (quantization_config)" + (dtype.empty() ? "" : ", the rest " + dtype));
      else if (!dtype.empty()) how.push_back(dtype);
      if (auto t = count(get(m, "total_params")); t && *t > 0 && !pre.empty()) {
        char bpw[32];
        std::snprintf(bpw, sizeof bpw, "%.1f", static_cast<double>(bytes) * 8.0 / static_cast<double>(*t));
        how.push_back(std::string(bpw) + " bits per weight on average");
      }
      f.push_back({"Size", e(format_bytes(bytes)) + " as stored" + (how.empty() ? "" : " (" + e(join(how, "; ")) + ")")});
    }
    std::string layers;
    if (auto n = count(get(m, "num_hidden_layers"))) layers = with_commas(*n) + (*n == 1 ? " layer" : " layers");
    if (auto h = count(get(m, "hidden_size"))) layers += (layers.empty() ? "" : ", ") + std::string("hidden size ") + with_commas(*h);
    if (!layers.empty()) f.push_back({"Shape", e(layers)});
    const Json* arch = get(m, "architecture");
    if (truthy(get(m, "is_moe"))) {
      std::string moe = "Mixture of experts";
      if (auto n = count(get(m, "num_experts"))) moe += ": " + with_commas(*n) + " experts";
      if (auto k = count(get(arch, "num_experts_per_tok"))) moe += ", " + with_commas(*k) + " active per token";
      if (auto s = count(get(arch, "shared_experts")); s && *s) moe += ", " + with_commas(*s) + " shared";
      f.push_back({"Experts", e(moe)});
    }
    if (get(arch, "kv_lora_rank") && number(get(arch, "kv_lora_rank")))
      f.push_back({"Attention", e("Multi-head latent attention (MLA), kv_lora_rank " + str(get(arch, "kv_lora_rank")))});
    else if (auto h = count(get(arch, "num_attention_heads"))) {
      auto kv = count(get(arch, "num_key_value_heads"));
      f.push_back({"Attention", e(with_commas(*h) + " heads" + (kv && *kv != *h ? ", " + with_commas(*kv) + " key/value heads (grouped-query)" : ""))});
    }
    std::map<std::string, uint64_t> types;
    for (const auto& t : array_or_empty(get(arch, "layer_types")))
      if (t.is_string()) ++types[t.get<std::string>()];
    if (types.size() > 1) {
      std::vector<std::string> parts;
      for (const auto& [k, n] : types) parts.push_back(with_commas(n) + " " + k);
      f.push_back({"Hybrid layers", e(join(parts))});
    }
    std::string pre = str(get(m, "pre_quantized"));
    f.push_back({"Already quantized", pre.empty() ? "no" : "<strong>yes</strong>: " + e(pre)});
    if (truthy(get(m, "trust_remote_code"))) f.push_back({"Remote code", "needed (the config has an auto_map)"});
    std::vector<std::string> mods;
    for (const auto& x : array_or_empty(get(m, "modalities")))
      if (x.is_string()) mods.push_back(x.get<std::string>());
    if (!mods.empty()) f.push_back({"Modalities", e(join(mods))});
    if (get(m, "template_supported")) f.push_back({"Quark template", truthy(get(m, "template_supported")) ? "yes" : "<strong>no</strong>"});
    if (auto tv = str(get(m, "transformers_version_required")); !tv.empty()) f.push_back({"transformers", "<code>" + e(tv) + "</code>"});
    out += facts_list(f);
  }
  // What intake flagged.
  const Json& risks = array_or_empty(get(a, "risks"));
  if (!risks.empty()) {
    out += "<h3>What intake found</h3>\n<ul class=\"risks\">\n";
    // Findings the plan already fixes with a Quark extra option are marked
    // so, with the rule that set it, instead of a bare HIGH.
    static const struct {
      const char *intake, *option, *rule;
    } kHandled[] = {{"onnx.intake.dynamic_dims_npu", "FixShapes", "onnx.npu.static_shapes"},
                    {"onnx.intake.opset_below_13", "ConvertOpsetVersion", "onnx.opset.upgrade"},
                    {"onnx.intake.nchw_npu_cnn", "ConvertNCHWToNHWC", "onnx.npu_cnn.nhwc"},
                    {"onnx.intake.fp16_model", "QuantizeFP16", "onnx.fp16.convert"}};
    const Json* extra = get(get(in.plan, "onnx_specific"), "extra_options");
    // Quark skips NCHW inputs whose C, H or W is dynamic: setting the option
    // does not handle those.
    const Json* facts = get(get(a, "model"), "onnx_specific");
    std::vector<std::string> nhwc_skipped = facts ? nhwc_skipped_inputs(*facts) : std::vector<std::string>{};
    auto handled_by = [&](const std::string& rule) -> std::string {
      for (const auto& h : kHandled) {
        const Json* v = get(extra, h.option);
        if (rule == h.intake && v && !v->is_null() && !(v->is_boolean() && !v->get<bool>()) &&
            !(std::string(h.option) == "ConvertNCHWToNHWC" && !nhwc_skipped.empty()))
          return "The plan handles it: extra option " + std::string(h.option) + " = " + value_display(*v) + " [" + rule_link(h.rule) + "].";
      }
      return "";
    };
    auto not_handled = [&](const std::string& rule) -> std::string {
      if (rule != "onnx.intake.nchw_npu_cnn" || nhwc_skipped.empty()) return "";
      return "Not handled by the plan: Quark's ConvertNCHWToNHWC skips " + e(join(nhwc_skipped, "; ")) +
             " (C, H and W must be integers, and it runs before FixShapes); fix the shapes in the model file first [" + rule_link("onnx.npu_cnn.nhwc") + "].";
    };
    for (const char* sev : {"high", "medium", "low"})
      for (const auto& r : risks)
        if (str(get(r, "severity")) == sev) {
          std::string handled = handled_by(str(get(r, "rule")));
          std::string label = std::string(sev) == "high" ? "HIGH" : std::string(sev) == "medium" ? "MEDIUM" : "LOW";
          out += "<li class=\"sev-" + std::string(handled.empty() ? sev : "handled") + "\"><span class=\"sev\">" +
                 (handled.empty() ? label : "HANDLED") + "</span> " + e(str(get(r, "message"))) +
                 (get(r, "rule") ? " [" + rule_link(str(get(r, "rule"))) + "]" : "") +
                 (handled.empty() ? (str(get(r, "recovery_hint")).empty() ? "" : "<br><span class=\"hint\">What to do: " + e(str(get(r, "recovery_hint"))) + "</span>")
                                  : "<br><span class=\"hint\">" + handled + "</span>") +
                 (not_handled(str(get(r, "rule"))).empty() ? "" : "<br><span class=\"hint\">" + not_handled(str(get(r, "rule"))) + "</span>") +
                 "</li>\n";
        }
    out += "</ul>\n";
  }
  return out + "</section>\n";
}

}  // namespace quarkplan::ui::report_detail
