#include "ui/report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "catalog/catalog.h"
#include "common/error.h"
#include "common/strings.h"
#include "common/units.h"
#include "intake/module_names.h"
#include "plan/fix_shapes.h"
#include "plan/invocation.h"
#include "plan/onnx_weights.h"
#include "plan/planner.h"
#include "plan/rule_docs.h"
#include "plan/rules.h"
#include "ui/decision_table.h"
#include "ui/markdown.h"
#include "ui/svg.h"

namespace quarkplan::ui {

namespace {

// ---- Tolerant reading: the analysis may come from another tool or version,
// so every field is checked for its type before use.

const Json* get(const Json& j, const std::string& key) {
  return j.is_object() && j.contains(key) ? &j[key] : nullptr;
}
const Json* get(const Json* j, const std::string& key) { return j ? get(*j, key) : nullptr; }

std::string str(const Json* j, const std::string& def = "") {
  if (!j) return def;
  if (j->is_string()) return j->get<std::string>();
  if (j->is_boolean()) return j->get<bool>() ? "yes" : "no";
  if (j->is_number()) return j->dump();
  return def;
}

std::optional<double> number(const Json* j) {
  if (!j || !j->is_number()) return std::nullopt;
  double v = j->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<uint64_t> count(const Json* j) {
  auto v = number(j);
  if (!v || *v < 0 || *v > 1.8e19) return std::nullopt;
  if (j->is_number_unsigned()) return j->get<uint64_t>();
  if (j->is_number_integer()) return static_cast<uint64_t>(j->get<int64_t>());
  return static_cast<uint64_t>(std::llround(*v));
}

bool truthy(const Json* j) { return j && j->is_boolean() && j->get<bool>(); }

const Json& array_or_empty(const Json* j) {
  static const Json empty = Json::array();
  return j && j->is_array() ? *j : empty;
}

std::string e(const std::string& s) { return html_escape(s); }

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Four significant digits ("0.01963", "9"), or "" when not a number.
std::string significant(const Json* j) {
  auto v = number(j);
  if (!v) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", *v);
  return buf;
}

std::string upper_first(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string basename_of(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// ---- Small HTML builders.

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

std::string omitted(const std::string& sentence) { return "<p class=\"omitted\">" + e(sentence) + "</p>\n"; }

std::string figure(const std::string& svg, const std::string& caption) {
  return "<figure>\n" + svg + "\n<figcaption>" + e(caption) + "</figcaption>\n</figure>\n";
}

// A table whose columns sort when their header is clicked; cells are
// (html, sort key) pairs — a numeric sort key makes the column sort by number.
struct Cell {
  std::string html;
  std::string sort;  // empty: sort by the text
};
std::string sortable_table(const std::string& caption, const std::vector<std::string>& heads, const std::vector<std::vector<Cell>>& rows,
                           const std::vector<std::string>& row_classes = {}) {
  // A column no row fills (a fact this analysis does not have) is left out.
  std::vector<bool> used(heads.size(), false);
  for (const auto& r : rows)
    for (size_t k = 0; k < r.size() && k < used.size(); ++k) used[k] = used[k] || !r[k].html.empty();
  std::string out = "<div class=\"scroll\"><table class=\"sortable\">\n<caption>" + e(caption) + "</caption>\n<thead><tr>";
  for (size_t k = 0; k < heads.size(); ++k)
    if (used[k]) out += "<th scope=\"col\" aria-sort=\"none\"><button type=\"button\" class=\"sort\">" + e(heads[k]) + "</button></th>";
  out += "</tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    out += "<tr" + (i < row_classes.size() && !row_classes[i].empty() ? " class=\"" + e(row_classes[i]) + "\"" : std::string()) + ">";
    for (size_t k = 0; k < rows[i].size() && k < used.size(); ++k)
      if (used[k]) {
        const Cell& c = rows[i][k];
        bool numeric = !c.sort.empty() && c.sort.find_first_not_of("0123456789.-e+") == std::string::npos;
        out += "<td" + std::string(numeric ? " class=\"num\"" : "") + (c.sort.empty() ? std::string() : " data-sort=\"" + e(c.sort) + "\"") + ">" + c.html + "</td>";
      }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table></div>\n";
}

// ---- Rule references.

std::set<std::string>& cited_rules() {
  static thread_local std::set<std::string> ids;
  return ids;
}

std::string rule_link(const std::string& id) {
  cited_rules().insert(id);
  if (documented_purpose(id)) return "<a class=\"rule\" href=\"#rule-" + e(id) + "\">" + e(id) + "</a>";
  return "<span class=\"rule\">" + e(id) + "</span>";
}

// Reason text with each "[rule.id]" turned into a link to its documentation.
std::string reason_html(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find('[', i);
    if (open == std::string::npos) break;
    size_t close = text.find(']', open);
    if (close == std::string::npos) break;
    std::string id = text.substr(open + 1, close - open - 1);
    bool is_id = !id.empty() && id.find('.') != std::string::npos &&
                 id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.") == std::string::npos;
    if (!is_id) {
      out += e(text.substr(i, open + 1 - i));
      i = open + 1;
      continue;
    }
    out += e(text.substr(i, open - i)) + "[" + rule_link(id) + "]";
    i = close + 1;
  }
  return out + e(text.substr(i));
}

// A decision the user made (a flag, --set, or an edit at the prompt): the
// rules word those reasons "Your choice", "Your list", "From --hardware: ...",
// "... from --target".
bool users_choice(const std::string& reason) {
  return reason.rfind("Your ", 0) == 0 || reason.rfind("From --", 0) == 0 || reason.find("; Your ") != std::string::npos || reason.find(": Your choice") != std::string::npos ||
         reason.find("from --") != std::string::npos || reason.find("the user insisted") != std::string::npos;
}

// ---- Sections.

std::string model_name(const ReportInput& in) {
  std::string path = str(get(get(in.analysis, "model"), "model_path"));
  if (!path.empty()) return basename_of(path);
  return str(get(get(in.plan, "model"), "model_type"), "model");
}

bool is_onnx(const Json& plan) { return str(get(plan, "backend")) == "onnx"; }

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
                    {"onnx.intake.fp16_model", "ConvertFP16ToFP32", "onnx.fp16.convert"}};
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

std::string decision_section(const Json& plan) {
  std::string out = "<section id=\"decisions\">\n<h2>Decisions</h2>\n";
  // The planner's rows; a plan written by another tool may lack a field they
  // read, and the page then says so instead of failing.
  Json rows;
  try {
    rows = decision_table(plan);
  } catch (const std::exception&) {
    return out + omitted("The decision table cannot be read from this plan: a field it needs is missing or of another type.") + "</section>\n";
  }
  size_t user = 0;
  std::string body;
  for (const auto& r : rows) {
    std::string reason = str(get(r, "reason"));
    bool mine = users_choice(reason);
    user += mine;
    const Json& v = r.contains("value") ? r["value"] : Json(nullptr);
    std::string value = (v.is_array() || v.is_object()) ? value_display(v) : str(get(r, "value_text"), value_display(v));
    if (str(get(r, "key")) == "estimates.weights" && count(&v)) value = format_bytes(*count(&v));  // one unit convention
    body += "<tr class=\"decision" + std::string(mine ? " user" : "") + "\" data-key=\"" + e(str(get(r, "key"))) + "\"><th scope=\"row\"><code>" +
            e(str(get(r, "decision"))) + "</code>" + (mine ? " <span class=\"badge user\">your choice</span>" : "") + "</th><td><code>" + e(value) +
            "</code></td><td>" + reason_html(reason) + "</td></tr>\n";
  }
  out += "<p>Each reason names the rule that made it; the rule IDs link to their documentation below. " +
         std::string(user ? "Rows marked <span class=\"badge user\">your choice</span> were set by you (a flag, --set, or an edit at the prompt)."
                          : "No decision was set by hand: every value is the rules' default for this model.") +
         "</p>\n";
  out += "<div class=\"scroll\"><table class=\"decisions\">\n<caption>Decision table (" + std::to_string(rows.size()) +
         " decisions)</caption>\n<thead><tr><th scope=\"col\">Decision</th><th scope=\"col\">Value</th><th scope=\"col\">Reason</th></tr></thead>\n<tbody>\n" +
         body + "</tbody>\n</table></div>\n";
  return out + "</section>\n";
}

std::string risks_section(const Json& plan) {
  std::string out = "<section id=\"risks\">\n<h2>Risks and open questions</h2>\n";
  const Json& risks = array_or_empty(get(plan, "risks"));
  if (risks.empty()) out += "<p>The plan records no risks.</p>\n";
  for (const char* sev : {"high", "medium", "low"}) {
    std::string items;
    size_t n = 0;
    for (const auto& r : risks) {
      if (str(get(r, "severity")) != sev) continue;
      ++n;
      std::string hint = str(get(r, "recovery_hint"));
      items += "<li class=\"risk sev-" + std::string(sev) + "\"><span class=\"sev\">" +
               (std::string(sev) == "high" ? "HIGH" : std::string(sev) == "medium" ? "MEDIUM" : "LOW") + "</span> " + e(str(get(r, "message"))) + " [" +
               rule_link(str(get(r, "rule"))) + "]" + (hint.empty() ? "" : "<br><span class=\"hint\">What to do: " + e(hint) + "</span>") + "</li>\n";
    }
    if (!n) continue;
    std::string title = std::string(sev) == "high" ? "High" : std::string(sev) == "medium" ? "Medium" : "Low";
    out += "<h3>" + title + " (" + std::to_string(n) + ")</h3>\n<ul class=\"risks\">\n" + items + "</ul>\n";
  }
  const Json& qs = array_or_empty(get(plan, "open_questions"));
  if (!qs.empty()) {
    out += "<h3>Open questions (" + std::to_string(qs.size()) + ")</h3>\n<ol class=\"questions\">\n";
    for (const auto& q : qs) out += "<li class=\"question\">" + e(q.is_string() ? q.get<std::string>() : q.dump()) + "</li>\n";
    out += "</ol>\n";
  } else {
    out += "<p>No open questions.</p>\n";
  }
  return out + "</section>\n";
}

std::string chosen_scheme(const Json& plan) {
  return is_onnx(plan) ? str(get(plan, "preset")) : str(get(plan, "global_scheme"));
}

std::string size_chart(const Json& plan) {
  std::string out = "<section id=\"size\">\n<h2>Weight size per scheme</h2>\n";
  const Json& w = array_or_empty(get(get(plan, "estimates"), "weights"));
  if (w.empty())
    return out + omitted("The plan holds no weight-size estimates (its analysis had no parameter counts), so there is nothing to chart.") + "</section>\n";
  svg::BarChart c;
  c.id = "chart-size";
  c.title = "Estimated weight size per scheme";
  std::string chosen = chosen_scheme(plan);
  std::vector<std::string> words;
  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> classes;
  for (size_t i = 0; i < w.size(); ++i) {
    std::string scheme = str(get(w[i], "scheme"), "?");
    uint64_t bytes = count(get(w[i], "bytes")).value_or(0);
    double bits = number(get(w[i], "bits_per_weight_effective")).value_or(0);
    bool original = scheme == "original";
    bool mine = !original && scheme == chosen;
    svg::Bar b;
    b.label = original ? "original (as stored)" : scheme + (mine ? " (this plan)" : "");
    b.emphasis = mine;
    b.segments.push_back({static_cast<double>(bytes), original ? "hatch" : mine ? "main" : "muted", b.label});
    b.value_text = format_bytes(bytes) + ", " + fixed(bits, 2) + " bits/weight";
    c.bars.push_back(b);
    words.push_back(b.label + ": " + b.value_text);
    rows.push_back({{e(b.label), scheme},
                    {e(format_bytes(bytes)), std::to_string(bytes)},
                    {with_commas(bytes), std::to_string(bytes)},
                    {fixed(bits, 3), fixed(bits, 6)},
                    {e(str(get(w[i], "method"))), ""}});
    classes.push_back(mine ? "chosen" : original ? "original" : "");
  }
  c.desc = "Horizontal bars, one per scheme. " + join(words, "; ") + ".";
  c.legend = {{"hatch", "original model"}, {"main", "this plan's scheme"}, {"muted", "other candidates"}};
  out += figure(svg::bar_chart(c), "Estimated weight size per scheme: the original is hatched, this plan's choice is solid. Sizes in binary units (1 GiB = 2^30 bytes).");
  out += sortable_table("Weight size estimates", {"Scheme", "Size", "Bytes", "Bits per weight", "How it was estimated"}, rows, classes);
  return out + "</section>\n";
}

std::string fit_chart(const Json& plan) {
  std::string out = "<section id=\"fit\">\n<h2>Memory fit</h2>\n";
  const Json* est = get(plan, "estimates");
  const Json* fit = get(est, "fit");
  if (!fit || fit->is_null() || (fit->is_array() && fit->empty())) {
    std::string why = is_onnx(plan) ? "ONNX plans carry no accelerator memory estimate (the model runs under ONNX Runtime), so there is no fit to chart."
                      : str(get(plan, "hardware")).empty() ? "The plan names no accelerator, so there is no memory to fit against (plan with --hardware or an env_context.json)."
                      : str(get(plan, "hardware")) == "ryzen-ai"
                          ? "Ryzen AI plans hold no memory-fit estimate because the Ryzen AI PC does not run the quantization: Quark runs on a Linux machine with an AMD Instinct or NVIDIA GPU, which the plan does not name, and the PC runs the exported model (Ryzen AI's 'Preparing OGA Models')."
                          : "The plan holds no memory-fit estimate (its analysis had no parameter counts, or the accelerator's memory is not known), so there is nothing to chart.";
    return out + omitted(why) + "</section>\n";
  }
  std::vector<const Json*> fits;
  if (fit->is_array())
    for (const auto& f : *fit) fits.push_back(&f);
  else
    fits.push_back(fit);
  const Json& w = array_or_empty(get(est, "weights"));
  std::string chosen = chosen_scheme(plan);
  uint64_t weights = 0;
  for (const auto& x : w)
    if (str(get(x, "scheme")) == chosen) weights = count(get(x, "bytes")).value_or(0);
  const Json* kv = get(est, "kv_cache");
  uint64_t kv_bytes = kv && kv->is_object() ? count(get(kv, "bytes")).value_or(0) : 0;
  std::string kv_label = kv && kv->is_object() ? "KV cache at " + with_commas(count(get(kv, "context_length")).value_or(0)) + " tokens x batch " +
                                                     with_commas(count(get(kv, "batch")).value_or(1)) + " (" + str(get(kv, "dtype")) + ")"
                                               : "KV cache";
  size_t index = 0;
  for (const Json* f : fits) {
    ++index;
    std::string acc = str(get(f, "accelerator"), "the accelerator");
    uint64_t mem = count(get(f, "memory_bytes")).value_or(0);
    uint64_t needed = count(get(f, "needed_bytes")).value_or(0);
    uint64_t deploy = count(get(f, "deployment_bytes")).value_or(weights + kv_bytes);
    auto calib = count(get(f, "calibration_bytes"));
    if (!mem) {
      out += omitted("The fit on " + acc + " names no memory size, so it cannot be charted.");
      continue;
    }
    // Accelerators needed: the plan's own count when it has one, else the
    // smallest count whose memory holds what the plan needs.
    // The plan counts accelerators against their usable memory (the runtime
    // keeps some): the chart's lines are drawn where the count changes.
    double usable_fraction = 1.0;
    if (f->contains("usable_fraction") && (*f)["usable_fraction"].is_number()) {
      double u = (*f)["usable_fraction"].get<double>();
      if (u > 0 && u <= 1) usable_fraction = u;
    }
    const uint64_t usable = std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<double>(mem) * usable_fraction));
    const std::string usable_text = usable_fraction < 1 ? std::to_string(static_cast<int>(std::lround(usable_fraction * 100))) + "% of " : "";
    uint64_t n = count(get(f, "accelerators_needed")).value_or(count(get(f, "count")).value_or(0));
    auto calib_n = count(get(f, "calibration_accelerators"));
    auto deploy_n = count(get(f, "deployment_accelerators"));
    if (!n) n = std::max<uint64_t>(calib_n.value_or(0), deploy_n.value_or(0));
    if (!n) n = std::max<uint64_t>(1, (needed + usable - 1) / usable);
    bool fits_one = f->contains("fits") && (*f)["fits"].is_boolean() ? (*f)["fits"].get<bool>() : needed <= usable;
    svg::BarChart c;
    c.id = "chart-fit-" + std::to_string(index);
    c.title = "Memory needed against " + acc + " memory";
    svg::Bar dep;
    dep.label = "Deployment: weights + KV cache";
    uint64_t wpart = weights && weights <= deploy ? weights : (deploy > kv_bytes ? deploy - kv_bytes : deploy);
    dep.segments.push_back({static_cast<double>(wpart), "main", "weights (" + chosen + "): " + format_bytes(wpart)});
    if (deploy > wpart) dep.segments.push_back({static_cast<double>(deploy - wpart), "alt", kv_label + ": " + format_bytes(deploy - wpart)});
    dep.value_text = format_bytes(deploy);
    c.bars.push_back(dep);
    std::string calib_note;
    if (calib) {
      svg::Bar cal;
      const bool dequantized = f->contains("method") && (*f)["method"].is_string() &&
                               (*f)["method"].get<std::string>().find("dequantized") != std::string::npos;
      cal.label = dequantized ? "Calibration: the model loaded, dequantized to BF16" : "Calibration: the original model loaded";
      cal.segments.push_back({static_cast<double>(*calib), "cross", "calibration load: " + format_bytes(*calib)});
      cal.value_text = *calib ? format_bytes(*calib) : "0 (streamed shard by shard)";
      c.bars.push_back(cal);
      if (!*calib) calib_note = " File-to-file quantization streams one shard at a time, so calibration loads no full model.";
    }
    uint64_t shown = std::min<uint64_t>(n, 8);
    for (uint64_t k = 1; k <= shown; ++k)
      c.markers.push_back({static_cast<double>(usable * k), (k == 1 ? "1 x " + acc + ": " : std::to_string(k) + " x: ") + format_bytes(usable * k)});
    c.legend = {{"main", "quantized weights"}, {"alt", "KV cache"}};
    if (calib) c.legend.push_back({"cross", "calibration load"});
    std::string counts;
    if (calib_n && deploy_n && *calib_n != *deploy_n)
      counts = ": calibration needs " + std::to_string(*calib_n) + " of them, deployment " + std::to_string(*deploy_n) + ".";
    std::string verdict = fits_one ? "It fits one " + acc + " (" + format_bytes(mem) + ")."
                                   : "It does not fit one " + acc + " (" + format_bytes(mem) + ")" +
                                         (counts.empty() ? ": it needs at least " + std::to_string(n) + " of them." : counts);
    c.desc = "Deployment needs " + format_bytes(deploy) + " (weights " + format_bytes(wpart) + ", " + kv_label + " " + format_bytes(deploy - wpart) + ")" +
             (calib ? "; calibration loads " + format_bytes(*calib) : std::string()) + ". " + verdict;
    out += "<p class=\"verdict " + std::string(fits_one ? "fits" : "nofit") + "\"><strong>" + (fits_one ? "Fits" : "Does not fit") + "</strong>: " + e(verdict + calib_note) +
           "</p>\n";
    out += figure(svg::bar_chart(c), "What the plan needs against the memory of " + acc + "; dashed lines mark the usable memory of 1, 2, ... accelerators (" +
                                         usable_text + format_bytes(mem) + " each: " + format_bytes(usable) + "). Sizes in binary units.");
    std::vector<std::vector<Cell>> rows = {
        {{"Quantized weights (" + e(chosen) + ")", ""}, {e(format_bytes(wpart)), std::to_string(wpart)}, {with_commas(wpart), std::to_string(wpart)}},
        {{e(kv_label), ""}, {e(format_bytes(deploy - wpart)), std::to_string(deploy - wpart)}, {with_commas(deploy - wpart), std::to_string(deploy - wpart)}},
        {{"Deployment total", ""}, {e(format_bytes(deploy)), std::to_string(deploy)}, {with_commas(deploy), std::to_string(deploy)}}};
    if (calib) rows.push_back({{"Calibration load", ""}, {e(format_bytes(*calib)), std::to_string(*calib)}, {with_commas(*calib), std::to_string(*calib)}});
    rows.push_back({{"Memory of one " + e(acc), ""}, {e(format_bytes(mem)), std::to_string(mem)}, {with_commas(mem), std::to_string(mem)}});
    if (usable < mem)
      rows.push_back({{"Usable per " + e(acc) + " (" + e(usable_text) + "its memory; the runtime keeps the rest)", ""},
                      {e(format_bytes(usable)), std::to_string(usable)}, {with_commas(usable), std::to_string(usable)}});
    rows.push_back({{"Accelerators needed", ""}, {std::to_string(n), std::to_string(n)}, {"", std::to_string(n)}});
    out += sortable_table("Memory on " + acc, {"What", "Size", "Bytes"}, rows);
  }
  return out + "</section>\n";
}

// The first all-digit path component of a module name (its layer), or -1.
long layer_of(const std::string& name) {
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    std::string part = name.substr(start, dot - start);
    if (!part.empty() && part.size() < 9 && part.find_first_not_of("0123456789") == std::string::npos) return std::stol(part);
    start = dot + 1;
  }
  return -1;
}

std::string kind_of(const std::string& name) {
  std::string out;
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    std::string part = name.substr(start, dot - start);
    bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    out += (out.empty() ? "" : ".") + (digits ? std::string("*") : part);
    start = dot + 1;
  }
  return out;
}

// How many names a collapsed module name ("layers.{0..31}.q_proj") stands
// for; nullopt when its ranges are malformed. Checked before expanding, so a
// hostile analysis cannot make the page (or its memory) unbounded.
std::optional<uint64_t> expanded_count(const std::string& c) {
  uint64_t n = 1;
  for (size_t open = c.find('{'); open != std::string::npos; open = c.find('{', open + 1)) {
    size_t dots = c.find("..", open), close = c.find('}', open);
    if (dots == std::string::npos || close == std::string::npos || dots > close) return n;  // no more ranges
    std::string lo = c.substr(open + 1, dots - open - 1), hi = c.substr(dots + 2, close - dots - 2);
    auto digits = [](const std::string& x) { return !x.empty() && x.size() <= 9 && x.find_first_not_of("0123456789") == std::string::npos; };
    if (!digits(lo) || !digits(hi) || std::stoul(lo) > std::stoul(hi)) return std::nullopt;
    n *= std::stoul(hi) - std::stoul(lo) + 1;
    if (n > 10000000) return std::nullopt;
  }
  return n;
}

std::string torch_layers(const Json& plan, const Json& analysis) {
  std::string out = "<section id=\"layers\">\n<h2>What gets quantized</h2>\n";
  const Json* q = get(analysis, "quantization_targets");
  const Json& names = array_or_empty(get(q, "module_names"));
  if (analysis.is_null()) return out + omitted("The analysis is not available, so the model's modules cannot be shown.") + "</section>\n";
  if (names.empty())
    return out + omitted("The analysis lists no module names (it was made without them), so the quantized, excluded and overridden layers cannot be shown.") +
           "</section>\n";
  const Json& shapes = array_or_empty(get(q, "module_shapes"));
  std::vector<QuarkPattern> excl;
  std::vector<std::string> excl_text;
  for (const auto& p : array_or_empty(get(plan, "exclude_layers")))
    if (p.is_string()) excl.emplace_back(p.get<std::string>()), excl_text.push_back(p.get<std::string>());
  std::vector<std::pair<QuarkPattern, std::string>> overrides;
  if (auto lqc = get(plan, "layer_quant_config"); lqc && lqc->is_object())
    for (auto& [pat, sch] : lqc->items())
      if (sch.is_string()) overrides.emplace_back(QuarkPattern(pat), sch.get<std::string>());
  std::string global = str(get(plan, "global_scheme"));
  struct Group {
    std::string kind, status, detail;
    uint64_t modules = 0, params = 0;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Group> groups;
  std::map<long, std::array<uint64_t, 3>> per_layer;  // quantized, overridden, excluded
  uint64_t totals[3] = {0, 0, 0};
  bool have_params = false;
  size_t expanded_total = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!names[i].is_string()) continue;
    uint64_t params = 0;
    if (i < shapes.size() && shapes[i].is_array() && !shapes[i].empty()) params = count(&shapes[i][0]).value_or(0);
    auto n_names = expanded_count(names[i].get<std::string>());
    if (!n_names || expanded_total + *n_names > 2000000) continue;  // malformed or unbounded: left out
    expanded_total += *n_names;
    have_params = have_params || params > 0;
    std::vector<std::string> expanded = expand_module_names({names[i].get<std::string>()});
    for (const auto& n : expanded) {
      int status = 0;
      std::string detail = global.empty() ? "no scheme chosen yet" : global;
      for (size_t k = 0; k < excl.size(); ++k)
        if (excl[k].matches(n)) {
          status = 2;
          detail = excl_text[k];
          break;
        }
      if (status == 0)
        for (const auto& [p, sch] : overrides)
          if (p.matches(n)) status = 1, detail = sch;
      uint64_t weight = params ? params : 1;
      auto& g = groups[{kind_of(n), status == 0 ? "quantized" : status == 1 ? "overridden" : "excluded", detail}];
      g.kind = kind_of(n);
      g.status = status == 0 ? "quantized" : status == 1 ? "overridden" : "excluded";
      g.detail = detail;
      ++g.modules;
      g.params += params;
      per_layer[layer_of(n)][static_cast<size_t>(status)] += weight;
      totals[status] += weight;
    }
  }
  const char* unit = have_params ? "parameters" : "modules";
  uint64_t all = totals[0] + totals[1] + totals[2];
  auto share = [&](uint64_t v) { return all ? fixed(100.0 * static_cast<double>(v) / static_cast<double>(all), 1) + "%" : "0%"; };
  auto amount = [&](uint64_t v) { return have_params ? format_params(v) + " parameters" : with_commas(v) + " modules"; };
  out += "<p>Linear modules only (embeddings and norms are never quantized): " + e(amount(totals[0])) + " quantized with <code>" +
         e(global.empty() ? "no scheme yet" : global) + "</code> (" + share(totals[0]) + "), " + e(amount(totals[1])) + " given their own scheme (" +
         share(totals[1]) + "), " + e(amount(totals[2])) + " excluded (" + share(totals[2]) + ").</p>\n";
  // Per-layer strip.
  svg::ColumnChart cc;
  cc.id = "chart-layers";
  cc.title = std::string("Linear ") + unit + " per layer, by what the plan does with them";
  std::vector<std::string> words;
  std::vector<std::pair<long, std::array<uint64_t, 3>>> ordered;
  for (const auto& [layer, v] : per_layer)
    if (layer >= 0) ordered.emplace_back(layer, v);
  if (per_layer.count(-1)) ordered.emplace_back(-1, per_layer[-1]);  // lm_head and the like, last
  for (const auto& [layer, v] : ordered) {
    svg::Column col;
    col.label = layer < 0 ? "other" : std::to_string(layer);
    std::string where = layer < 0 ? "outside the numbered layers" : "layer " + std::to_string(layer);
    col.segments = {{static_cast<double>(v[0]), "main", where + ": " + amount(v[0]) + " quantized"},
                    {static_cast<double>(v[1]), "alt", where + ": " + amount(v[1]) + " overridden"},
                    {static_cast<double>(v[2]), "hatch", where + ": " + amount(v[2]) + " excluded"}};
    cc.columns.push_back(col);
  }
  cc.legend = {{"main", "quantized (" + (global.empty() ? std::string("global scheme") : global) + ")"}, {"alt", "own scheme (layer_quant_config)"},
               {"hatch", "excluded (full precision)"}};
  cc.axis_label = std::string("Layer index (\"other\": modules outside the numbered layers, such as lm_head); height: ") + unit + ".";
  cc.desc = "Stacked columns, one per layer. Totals: " + amount(totals[0]) + " quantized, " + amount(totals[1]) + " with their own scheme, " +
            amount(totals[2]) + " excluded.";
  out += figure(svg::column_chart(cc), "Per layer: solid is quantized with the global scheme, dotted has its own scheme, hatched stays in full precision.");
  // Per module kind.
  std::vector<Group> list;
  for (auto& [k, g] : groups) list.push_back(g);
  std::stable_sort(list.begin(), list.end(), [&](const Group& a, const Group& b) { return (have_params ? a.params > b.params : a.modules > b.modules); });
  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> classes;
  for (const auto& g : list) {
    uint64_t v = have_params ? g.params : g.modules;
    std::string status = g.status == "quantized" ? "with " + g.detail : g.status == "overridden" ? "with its own scheme " + g.detail : "by the pattern " + g.detail;
    rows.push_back({{"<code>" + e(g.kind) + "</code>", g.kind},
                    {with_commas(g.modules), std::to_string(g.modules)},
                    {have_params ? e(format_params(g.params)) : "", std::to_string(g.params)},
                    {share(v), std::to_string(v)},
                    {"<span class=\"badge " + g.status + "\">" + e(g.status) + "</span> " + e(status), g.status}});
    classes.push_back(g.status);
  }
  out += sortable_table("Module kinds (layer indices shown as *)", {"Module kind", "Modules", "Parameters", "Share", "What the plan does"}, rows, classes);
  return out + "</section>\n";
}

std::string onnx_ops(const Json& plan, const Json& analysis, const std::string& catalog_dir) {
  std::string out = "<section id=\"layers\">\n<h2>What gets quantized</h2>\n";
  if (analysis.is_null()) return out + omitted("The analysis is not available, so the model's operators cannot be shown.") + "</section>\n";
  const Json* qo = get(get(analysis, "quantization_targets"), "onnx_specific");
  const Json* ops = get(qo, "op_counts");
  const Json* spec = get(plan, "onnx_specific");
  const Catalog& cat = Catalog::load(catalog_dir);
  std::string preset = str(get(plan, "preset"));
  const Json* pj = preset.empty() ? nullptr : cat.onnx_preset(preset);
  // The weights the preset's quantizer takes (catalog preset_op_sets), from
  // the analysis' weights per op type: main graph and If/Loop/Scan bodies.
  std::optional<PresetWeights> pw;
  if (const Json* wbo = get(get(analysis, "quantization_targets"), "weights_by_op_type"); pj && wbo && wbo->is_object()) {
    bool shaped = true;
    for (auto& [op, x] : wbo->items()) shaped = shaped && x.is_object();
    try {
      if (shaped) pw = preset_weights(analysis, cat, *pj);
    } catch (const Json::exception&) {
      pw.reset();  // counts of another type: say nothing rather than guess
    }
    if (pw && !pw->known) pw.reset();
  }
  // The op types the plan quantizes: its own list, else the preset's kind.
  std::set<std::string> quantized;
  std::string why;
  if (auto list = get(spec, "op_types_to_quantize"); list && list->is_array()) {
    for (const auto& x : *list)
      if (x.is_string()) quantized.insert(x.get<std::string>());
    why = "the plan's op_types_to_quantize";
  } else {
    // A weights-only preset quantizes exactly its op set's weights.
    bool weights_only = pj && !(*pj)["activation_type"].is_string();
    const Json& sets = cat.onnx()["preset_op_sets"];
    std::string op_set = pj ? pj->value("op_set", "static") : "static";
    const Json& pool = weights_only && sets.contains(op_set) ? sets[op_set]["ops"] : cat.onnx()["quantizable_op_types"];
    for (const auto& x : pool) quantized.insert(x.get<std::string>());
    why = preset.empty() ? "the op types Quark's QDQ presets quantize (no preset chosen yet)"
                         : std::string(weights_only ? "the weighted op types " : "the op types ") + preset + " quantizes";
  }
  if (!ops || !ops->is_object() || ops->empty()) {
    out += omitted("The analysis has no op histogram, so the operators cannot be charted.");
  } else {
    std::vector<std::pair<std::string, uint64_t>> sorted;
    for (auto& [op, n] : ops->items()) sorted.emplace_back(op, count(&n).value_or(0));
    std::stable_sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.second > b.second; });
    const Json* wbo = get(get(analysis, "quantization_targets"), "weights_by_op_type");
    svg::BarChart c;
    c.id = "chart-ops";
    c.title = "Operators in the graph, by count";
    std::vector<std::string> words;
    std::vector<std::vector<Cell>> rows;
    std::vector<std::string> classes;
    uint64_t rest_types = 0, rest_nodes = 0;
    for (size_t i = 0; i < sorted.size(); ++i) {
      const auto& [op, n] = sorted[i];
      bool q = quantized.count(op) > 0;
      std::string weights;
      if (auto wp = count(get(get(wbo, op), "weight_params")); wp && *wp) {
        weights = format_params(*wp) + " weights";
        if (auto sub = count(get(get(wbo, op), "weight_params_in_subgraphs")); sub && *sub)
          weights += *sub >= *wp ? " (all in subgraphs)" : " (" + format_params(*sub) + " in subgraphs)";
      }
      if (i < 24) {
        svg::Bar b;
        b.label = op + (q ? " (quantized)" : "");
        b.emphasis = q;
        std::string nodes = with_commas(n) + (n == 1 ? " node" : " nodes");
        b.segments.push_back({static_cast<double>(n), q ? "main" : "muted", op + ": " + nodes});
        b.value_text = nodes + (weights.empty() ? "" : ", " + weights);
        c.bars.push_back(b);
        words.push_back(op + " " + with_commas(n) + (q ? " (quantized)" : ""));
      } else {
        ++rest_types;
        rest_nodes += n;
      }
      rows.push_back({{"<code>" + e(op) + "</code>", op},
                      {with_commas(n), std::to_string(n)},
                      {e(weights), std::to_string(count(get(get(wbo, op), "weight_params")).value_or(0))},
                      {q ? "<span class=\"badge quantized\">quantized</span>" : "stays float", q ? "1" : "0"}});
      classes.push_back(q ? "quantized" : "");
    }
    c.legend = {{"main", "quantized by the plan"}, {"muted", "stays in float"}};
    c.desc = "Horizontal bars, one per operator type: " + join(words, "; ") + ".";
    out += "<p>Highlighted: " + e(why) + ".</p>\n";
    // Node by node when the analysis has them: the plan's op types and
    // exclusions applied, as the estimate counts them.
    std::optional<PlanWeights> nw;
    bool into_subgraphs = false;
    if (pj && spec) {
      try {
        const Json* es = get(get(spec, "extra_options"), "EnableSubgraph");
        bool on = es && es->is_boolean() && es->get<bool>(), off = es && es->is_boolean() && !es->get<bool>();
        into_subgraphs = on || (!off && pw && pw->only_in_subgraphs()) || (pw && pw->recurses_into_subgraphs);
        PlanWeights w = plan_weights(analysis, cat, *pj, spec->value("op_types_to_quantize", Json()), spec->value("nodes_to_exclude", Json()),
                                     into_subgraphs);
        if (w.known) nw = w;
      } catch (const Json::exception&) {
        nw.reset();
      }
    }
    if (nw) {
      std::vector<std::string> kept;
      if (nw->other_type_nodes)
        kept.push_back(format_params(nw->other_type_params) + " in " + with_commas(nw->other_type_nodes) + (nw->other_type_nodes == 1 ? " node" : " nodes") +
                       " outside op_types_to_quantize");
      if (nw->excluded_nodes)
        kept.push_back(format_params(nw->excluded_params) + " in " + with_commas(nw->excluded_nodes) + (nw->excluded_nodes == 1 ? " excluded node" : " excluded nodes"));
      if (pw && pw->sub_params && !into_subgraphs)
        kept.push_back(format_params(pw->sub_params) + " in " + with_commas(pw->sub_nodes) + (pw->sub_nodes == 1 ? " node" : " nodes") +
                       " inside If/Loop/Scan bodies");
      out += "<p>" + e(preset) + " quantizes " + e(pw ? pw->label : std::string("its op types")) + ": " +
             (nw->params ? e(format_params(nw->params)) + " weights in " + with_commas(nw->nodes) + (nw->nodes == 1 ? " node" : " nodes")
                         : std::string("none of this model's weights")) +
             (kept.empty() ? std::string() : "; kept in float: " + e(join(kept, ", "))) + ".</p>\n";
    } else if (pw) {
      uint64_t params = pw->main_params + pw->sub_params, nodes = pw->main_nodes + pw->sub_nodes;
      out += "<p>" + e(preset) + " quantizes " + e(pw->label) + ": " +
             (params ? e(format_params(params)) + " weights in " + with_commas(nodes) + (nodes == 1 ? " node" : " nodes") +
                           (pw->sub_params ? (pw->main_params ? ", " + e(format_params(pw->sub_params)) + " of them" : ", all of them") +
                                                 std::string(" inside If/Loop/Scan bodies")
                                           : std::string())
                     : std::string("this model holds none of them")) +
             ".</p>\n";
    }
    out += figure(svg::bar_chart(c), "Operator histogram (all graphs, subgraphs included); solid bars are quantized." +
                                         (rest_types ? " Not drawn: " + std::to_string(rest_types) + (rest_types == 1 ? " more op type with " : " more op types with ") + with_commas(rest_nodes) + " nodes (see the table)." : std::string()));
    out += sortable_table("Operators", {"Op type", "Nodes", "Weights", "Quantized"}, rows, classes);
  }
  // Exclusions.
  std::vector<std::string> items;
  auto names = [&](const char* key) {
    std::vector<std::string> v;
    for (const auto& x : array_or_empty(get(spec, key)))
      if (x.is_string()) v.push_back(x.get<std::string>());
    return v;
  };
  if (auto v = names("nodes_to_exclude"); !v.empty()) {
    std::string li;
    for (const auto& n : v) li += "<li><code>" + e(n) + "</code></li>";
    items.push_back("<h3>Nodes kept in float (" + std::to_string(v.size()) + ")</h3><ul class=\"nodes\">" + li + "</ul>");
  }
  if (auto v = names("nodes_to_quantize"); !v.empty()) {
    std::string li;
    for (const auto& n : v) li += "<li><code>" + e(n) + "</code></li>";
    items.push_back("<h3>Only these nodes are quantized (" + std::to_string(v.size()) + ")</h3><ul class=\"nodes\">" + li + "</ul>");
  }
  const Json& sg = array_or_empty(get(spec, "subgraphs_to_exclude"));
  if (!sg.empty()) {
    std::string li;
    for (const auto& pair : sg) {
      auto side = [&](size_t k) {
        std::vector<std::string> v;
        if (pair.is_array() && pair.size() > k)
          for (const auto& x : array_or_empty(&pair[k]))
            if (x.is_string()) v.push_back(x.get<std::string>());
        return e(join(v));
      };
      li += "<li>from <code>" + side(0) + "</code> to <code>" + side(1) + "</code></li>";
    }
    items.push_back("<h3>Subgraphs kept in float (" + std::to_string(sg.size()) + ")</h3><ul class=\"nodes\">" + li + "</ul>");
  }
  if (items.empty()) out += "<p>No nodes or subgraphs are excluded: every node of a quantized op type is quantized.</p>\n";
  for (const auto& i : items) out += i + "\n";
  if (auto sgc = count(get(get(get(analysis, "model"), "onnx_specific"), "subgraph_count")); sgc && *sgc) {
    bool on = truthy(get(get(spec, "extra_options"), "EnableSubgraph"));
    std::string text = "The graph holds " + with_commas(*sgc) + " subgraphs (If/Loop/Scan)";
    if (!pw) {
      text += std::string(": their ops ") + (on ? "are quantized too (EnableSubgraph)." : "stay in float unless EnableSubgraph is set.");
    } else if (pw->sub_params == 0) {
      text += "; none of the weights " + preset + " quantizes sits in them.";
    } else {
      text += ": " + format_params(pw->sub_params) + " of the weights " + preset + " quantizes (" + with_commas(pw->sub_nodes) +
              (pw->sub_nodes == 1 ? " node" : " nodes") + (pw->main_params ? "" : ", all of them") + ") sit in them";
      if (pw->recurses_into_subgraphs) text += " and are quantized too: Quark's MatMulNBits quantizer walks If/Loop bodies by itself.";
      else if (on) text += " and are quantized too (EnableSubgraph).";
      else text += std::string(" and stay in float unless EnableSubgraph is set") + (pw->main_params ? "." : ", so the plan quantizes no weight.");
    }
    out += "<p>" + e(text) + "</p>\n";
  }
  return out + "</section>\n";
}

std::string weight_stats(const Json& plan, const Json& analysis) {
  std::string out = "<section id=\"outliers\">\n<h2>Weight outliers per layer</h2>\n";
  const Json* ws = get(analysis, "weight_stats");
  if (analysis.is_null()) return out + omitted("The analysis is not available, so there are no weight statistics to show.") + "</section>\n";
  if (!ws || !ws->is_object())
    return out + omitted("The analysis was made without --weight-stats, so there are no per-layer statistics; run quarkplan intake MODEL --weight-stats to add them.") +
           "</section>\n";
  const Json* mods = get(ws, "top_modules");
  if (!mods) mods = get(ws, "modules");
  if (!mods || !mods->is_array() || mods->empty())
    return out + omitted("The weight scan found no weights it could read (BF16, F16 or F32), so there is nothing to chart.") + "</section>\n";
  std::set<std::string> flagged;
  for (const auto& x : array_or_empty(get(ws, "outlier_modules")))
    if (x.is_string()) flagged.insert(x.get<std::string>());
  double threshold = number(get(ws, "outlier_max_over_std")).value_or(50);
  // ONNX plans keep outlier layers in float by node name (nodes_to_exclude).
  std::set<std::string> kept;
  for (const auto& x : array_or_empty(get(get(plan, "onnx_specific"), "nodes_to_exclude")))
    if (x.is_string()) kept.insert(x.get<std::string>());
  svg::BarChart c;
  c.id = "chart-outliers";
  c.title = "Share of weights beyond 6 standard deviations, per layer";
  std::vector<std::string> words;
  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> classes;
  size_t shown = 0;
  for (const auto& m : *mods) {
    std::string name = str(get(m, "module"), str(get(m, "name"), "?"));
    double ratio = number(get(m, "outlier_ratio_6sigma")).value_or(number(get(m, "outlier_ratio")).value_or(0));
    double mos = number(get(m, "max_over_std")).value_or(0);
    bool flag = flagged.count(name) > 0, float_kept = kept.count(name) > 0;
    std::string op = str(get(m, "op_type"));
    if (shown++ < 30) {
      svg::Bar b;
      b.label = name + (op.empty() ? "" : " (" + op + ")");
      b.emphasis = flag;
      b.segments.push_back({ratio * 100, flag ? "hatch" : "main", name + ": " + fixed(ratio * 100, 4) + "% beyond 6 sigma"});
      b.value_text = fixed(ratio * 100, 4) + "%, max " + fixed(mos, 0) + " sigma" + (flag ? ", FLAGGED" : "") + (float_kept ? ", kept in float" : "");
      c.bars.push_back(b);
      words.push_back(name + " " + fixed(ratio * 100, 4) + "%" + (flag ? " (flagged)" : "") + (float_kept ? " (kept in float)" : ""));
    }
    rows.push_back({{"<code>" + e(name) + "</code>" + (flag ? " <span class=\"badge flagged\">flagged</span>" : "") +
                         (float_kept ? " <span class=\"badge excluded\">kept in float</span>" : ""),
                     name},
                    {e(op), op},
                    {fixed(ratio * 100, 4) + "%", fixed(ratio, 9)},
                    {fixed(mos, 1), fixed(mos, 3)},
                    {significant(get(m, "max_abs")), fixed(number(get(m, "max_abs")).value_or(0), 9)},
                    {significant(get(m, "std")), fixed(number(get(m, "std")).value_or(0), 9)}});
    classes.push_back(flag ? "flagged" : "");
  }
  c.legend = {{"main", "within bounds"}, {"hatch", "flagged: max beyond " + fixed(threshold, 0) + " sigma"}};
  c.desc = "Horizontal bars, one per layer, most extreme first: " + join(words, "; ") + ".";
  // How many were scanned and how many are listed (intake keeps the most
  // extreme ones), so a short list is not read as the whole model.
  auto scanned = count(get(ws, "tensors"));
  std::string listed = scanned && *scanned > mods->size()
                           ? "The scan read " + with_commas(*scanned) + " weight tensors; the " + with_commas(mods->size()) +
                                 " with the most extreme weights are listed here. "
                           : std::string();
  std::string verdict =
      flagged.empty()
          ? "No layer is flagged: no weight sits more than " + fixed(threshold, 0) + " standard deviations out, the point where a per-tensor scale's range is wasted."
          : with_commas(flagged.size()) + (flagged.size() == 1 ? " layer is" : " layers are") + " flagged: " + (flagged.size() == 1 ? "its" : "their") +
                " largest weight sits more than " + fixed(threshold, 0) +
                " standard deviations out, which wastes a per-tensor scale's range. Flagged layers are hatched and marked FLAGGED.";
  out += "<p>" + listed + verdict +
         [&] {
           size_t n = 0;
           for (const auto& m : *mods) n += kept.count(str(get(m, "module"), str(get(m, "name")))) > 0;
           return n ? " The plan keeps " + with_commas(n) + " of these layers in float (nodes_to_exclude)." : std::string();
         }() +
         "</p>\n";
  out += figure(svg::bar_chart(c), "Weight outliers per layer (the layers with the most extreme weights first): the bar is the share of weights beyond 6 sigma.");
  out += sortable_table("Weight statistics", {"Layer", "Op", "Beyond 6 sigma", "Max / std", "Max |w|", "Std"}, rows, classes);
  return out + "</section>\n";
}

std::string invocation_section(const ReportInput& in) {
  std::string out = "<section id=\"quark\">\n<h2>The Quark invocation</h2>\n";
  Invocation inv;
  try {
    inv = plan_invocation(in.plan, in.analysis, in.catalog_dir);
  } catch (const InputError&) {
    throw;  // a bad --catalog: the command reports it
  } catch (const std::exception&) {
    return out + omitted("The Quark invocation cannot be derived from this plan: a field it needs is missing or of another type.") + "</section>\n";
  }
  out += "<p>What this plan makes Quark do (" + e(inv.tool) + "). quarkplan never runs it.</p>\n";
  out += "<div class=\"code\"><button type=\"button\" class=\"copy\" data-copy=\"invocation\">Copy</button><pre id=\"invocation\"><code>" + e(inv.text) +
         "</code></pre></div>\n";
  if (inv.fields.is_object() && !inv.fields.empty())
    out += "<details><summary>QConfig fields as data</summary><div class=\"code\"><button type=\"button\" class=\"copy\" data-copy=\"qconfig\">Copy</button><pre id=\"qconfig\"><code>" +
           e(inv.fields.dump(2)) + "</code></pre></div></details>\n";
  return out + "</section>\n";
}

std::string rules_section() {
  std::string out = "<section id=\"rules\">\n<h2>Rules and intake checks this plan cites</h2>\n";
  std::vector<std::string> ids;
  for (const auto& id : documented_ids())
    if (cited_rules().count(id)) ids.push_back(id);
  std::vector<std::string> other;
  for (const auto& id : cited_rules())
    if (!documented_purpose(id)) other.push_back(id);
  if (ids.empty()) out += "<p>The plan cites no registered rule or intake check.</p>\n";
  for (const auto& id : ids) {
    out += "<article class=\"ruledoc\" id=\"rule-" + e(id) + "\">\n<h3><code>" + e(id) + "</code></h3>\n";
    if (auto d = rule_doc(id)) {
      out += "<p class=\"purpose\">" + e(d->purpose) + "</p>\n";
      const std::pair<const char*, const std::string*> secs[] = {{"Decides", &d->decides}, {"Fires when", &d->fires_when}, {"Follows", &d->follows}, {"Example", &d->example}};
      for (const auto& [title, body] : secs) out += "<h4>" + std::string(title) + "</h4>\n" + markdown_to_html(*body);
    } else {
      out += "<p class=\"purpose\">" + e(documented_purpose(id)) + "</p>\n" + omitted("This build has no documentation file for the rule.");
    }
    out += "</article>\n";
  }
  if (!other.empty())
    out += "<p>Also cited, by another tool: " + e(join(other)) + " (quarkplan rules lists the rules and intake checks it documents).</p>\n";
  return out + "</section>\n";
}

const char* kStyle = R"CSS(
:root{--bg:#ffffff;--fg:#1c2128;--muted:#57606a;--line:#d0d7de;--card:#f6f8fa;--link:#0550ae;
--c-main:#b3262d;--c-muted:#aab4be;--c-alt:#f3c1c4;--c-hatch:#ffffff;--c-cross:#fde7b0;
--high:#a40e26;--med:#7d4e00;--low:#57606a;--user:#0b5cad;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0f1419;--fg:#e6edf3;--muted:#9aa5b1;--line:#3b434b;--card:#171d24;--link:#79b8ff;
--c-main:#ff6b6b;--c-muted:#59636e;--c-alt:#6b2d33;--c-hatch:#0f1419;--c-cross:#5a4a1a;--high:#ff8182;--med:#e3b341;--low:#9aa5b1;--user:#79b8ff}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0 auto;max-width:76rem;padding:1rem;background:var(--bg);color:var(--fg);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
h1,p,dd,li,figcaption,blockquote,.path{overflow-wrap:anywhere}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid var(--line);padding-bottom:.2rem}
h3{font-size:1.05rem}h4{font-size:.95rem;margin:.8rem 0 .2rem}
a{color:var(--link)}code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em}
.status{display:inline-block;padding:.1rem .5rem;border:2px solid currentColor;border-radius:.3rem;font-weight:700}
.status.draft{color:var(--med)}.status.confirmed{color:var(--fg)}
.sub{color:var(--muted);margin:.2rem 0}
nav ul{display:flex;flex-wrap:wrap;gap:.3rem 1rem;padding:0;margin:.6rem 0;list-style:none}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(11.5rem,1fr));gap:.6rem;margin:1rem 0}
.card{background:var(--card);border:1px solid var(--line);border-radius:.4rem;padding:.5rem .7rem}
.card .k{color:var(--muted);font-size:.8rem}.card .v{font-weight:600;overflow-wrap:anywhere}.card{min-width:0}
.banner{border:2px solid var(--med);border-radius:.4rem;padding:.5rem .8rem;margin:1rem 0}
dl.facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:.2rem 1.5rem;margin:.5rem 0}
dl.facts div.wide{grid-column:1/-1}
dl.facts div{display:flex;gap:.6rem;border-bottom:1px dotted var(--line);padding:.15rem 0}
dl.facts dt{color:var(--muted);min-width:8.5rem;flex:0 0 auto}dl.facts dd{margin:0;min-width:0}
.scroll{overflow-x:auto;max-width:100%;margin:.6rem 0}
.scroll td:last-child{min-width:14rem}
table{border-collapse:collapse;width:100%}caption{text-align:left;font-weight:600;padding:.3rem 0}
th,td{border:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top}
thead th{background:var(--card)}td.num{white-space:nowrap}
table.decisions{min-width:40rem}table.decisions th[scope=row]{font-weight:400;white-space:nowrap}
table.decisions td:nth-child(2){min-width:9rem;max-width:22rem}
td code{overflow-wrap:normal;word-break:normal}
tr.user th[scope=row]{border-left:4px solid var(--user)}
.badge{display:inline-block;font-size:.75rem;border:1px solid currentColor;border-radius:.7rem;padding:0 .45rem;white-space:nowrap}
.badge.user{color:var(--user)}.badge.flagged{color:var(--high);font-weight:700}.badge.excluded{color:var(--muted)}
button.sort{all:unset;cursor:pointer;font-weight:600}button.sort::after{content:" \2195";color:var(--muted)}
th[aria-sort=ascending] button.sort::after{content:" \2191"}th[aria-sort=descending] button.sort::after{content:" \2193"}
button.sort:focus-visible,button.copy:focus-visible{outline:2px solid var(--link);outline-offset:2px}
ul.risks{padding-left:0;list-style:none}ul.risks li{margin:.4rem 0;padding-left:.6rem;border-left:4px solid var(--line)}
.sev{font-weight:700;font-size:.8rem;margin-right:.3rem}
li.sev-high{border-left-color:var(--high)!important}li.sev-high .sev{color:var(--high)}
li.sev-medium{border-left-color:var(--med)!important}li.sev-medium .sev{color:var(--med)}
li.sev-low .sev{color:var(--low)}li.sev-handled .sev{color:var(--low)}.hint{color:var(--muted)}
.rule{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em}
.omitted{color:var(--muted);font-style:italic;border-left:4px solid var(--line);padding-left:.6rem}
.verdict.nofit strong{color:var(--high)}
figure{margin:1rem 0}figcaption{color:var(--muted);font-size:.85rem}
svg.chart{width:100%;height:auto;display:block;max-width:60rem}
svg text{fill:var(--fg);font:12px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
svg text.strong{font-weight:700}svg text.value,svg text.tick,svg text.legend,svg text.marker-label{font-size:11px}
svg text.marker-label{fill:var(--muted)}
svg text.marker-label{paint-order:stroke;stroke:var(--bg);stroke-width:3px;stroke-linejoin:round}.backdrop{fill:var(--bg)}
.seg-main{fill:var(--c-main)}.seg-muted{fill:var(--c-muted)}
.pat-bg-alt{fill:var(--c-alt)}.pat-bg-hatch{fill:var(--c-hatch)}.pat-bg-cross{fill:var(--c-cross)}
.pat-fg{fill:var(--fg)}.pat-line{stroke:var(--fg);stroke-width:1.4;fill:none}
.outline{fill:none;stroke:var(--fg);stroke-width:.6}.marker{stroke:var(--fg);stroke-width:1.2;stroke-dasharray:5 3}.axis{stroke:var(--line)}
.code{position:relative}pre{background:var(--card);border:1px solid var(--line);border-radius:.4rem;padding:.7rem;overflow-x:auto;white-space:pre}
button.copy{position:absolute;right:.4rem;top:.4rem;font:inherit;font-size:.8rem;padding:.15rem .6rem;border:1px solid var(--line);border-radius:.3rem;
background:var(--bg);color:var(--fg);cursor:pointer}
article.ruledoc{border-top:1px solid var(--line);padding-top:.3rem}article.ruledoc:target{outline:2px solid var(--link);outline-offset:4px}
.purpose{font-style:italic}blockquote{margin:.4rem 0;padding-left:.7rem;border-left:3px solid var(--line);color:var(--muted)}
footer{margin-top:2rem;color:var(--muted);font-size:.85rem;border-top:1px solid var(--line);padding-top:.5rem}
@media print{:root{--bg:#fff;--fg:#000;--muted:#333;--line:#999;--card:#fff;--c-main:#555;--c-muted:#ccc;--c-alt:#ddd;--c-hatch:#fff;--c-cross:#eee}
body{max-width:none;font-size:11pt}nav,button.copy{display:none}.scroll{overflow:visible}pre{white-space:pre-wrap}
section,figure,tr,li,article{break-inside:avoid}h2{break-after:avoid}a{color:inherit;text-decoration:none}details{display:block}details>*{display:block}}
)CSS";

const char* kScript = R"JS(
(function(){
function fallbackCopy(text,done){var a=document.createElement('textarea');a.value=text;a.setAttribute('readonly','');
a.style.position='fixed';a.style.top='0';a.style.opacity='0';document.body.appendChild(a);a.select();
try{if(document.execCommand('copy'))done();}catch(e){}document.body.removeChild(a);}
document.querySelectorAll('button.copy').forEach(function(b){b.addEventListener('click',function(){
var el=document.getElementById(b.getAttribute('data-copy'));if(!el)return;var text=el.textContent;
var done=function(){b.textContent='Copied';setTimeout(function(){b.textContent='Copy';},1500);};
if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(text).then(done,function(){fallbackCopy(text,done);});}
else{fallbackCopy(text,done);}});});
document.querySelectorAll('table.sortable').forEach(function(t){var heads=t.querySelectorAll('thead th');
heads.forEach(function(th,i){var btn=th.querySelector('button.sort');if(!btn)return;btn.addEventListener('click',function(){
var asc=th.getAttribute('aria-sort')!=='ascending';heads.forEach(function(h){h.setAttribute('aria-sort','none');});
th.setAttribute('aria-sort',asc?'ascending':'descending');var body=t.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
var key=function(r){var c=r.cells[i];if(!c)return '';var s=c.getAttribute('data-sort');return s!==null?s:c.textContent.trim();};
var numeric=rows.every(function(r){var k=key(r);return k===''||!isNaN(parseFloat(k))&&isFinite(k);});
rows.sort(function(a,b){var x=key(a),y=key(b);var d=numeric?(parseFloat(x||0)-parseFloat(y||0)):x.localeCompare(y);return asc?d:-d;});
rows.forEach(function(r){body.appendChild(r);});});});});
})();
)JS";

}  // namespace

std::string render_report(const ReportInput& in) {
  cited_rules().clear();
  const Json& p = in.plan;
  const bool onnx = is_onnx(p);
  const bool draft = !p.contains("requires_confirmation") || !p["requires_confirmation"].is_boolean() || p["requires_confirmation"].get<bool>();
  const std::string name = model_name(in);
  // Sections first (they collect the cited rules), then the page around them.
  std::string card = model_card(in);
  std::string decisions = decision_section(p);
  std::string risks = risks_section(p);
  std::string size = size_chart(p);
  std::string fit = fit_chart(p);
  std::string layers = onnx ? onnx_ops(p, in.analysis, in.catalog_dir) : torch_layers(p, in.analysis);
  std::string outliers = weight_stats(p, in.analysis);
  std::string quark = invocation_section(in);
  std::string rules = rules_section();

  // Summary cards: the few facts people look for first.
  std::vector<std::pair<std::string, std::string>> cards;
  if (onnx) {
    cards.push_back({"Deployment target", str(get(p, "deployment_target"), "not known yet")});
    cards.push_back({"Preset", str(get(p, "preset"), "not chosen yet")});
    cards.push_back({"Calibration", str(get(get(p, "calibration"), "method"), "the preset's")});
  } else {
    cards.push_back({"Accelerator", str(get(p, "hardware"), "not known yet")});
    cards.push_back({"Scheme", str(get(p, "global_scheme"), "not chosen yet")});
    cards.push_back({"Algorithm", str(get(p, "algorithm"), "none")});
  }
  const Json& w = array_or_empty(get(get(p, "estimates"), "weights"));
  std::string chosen = chosen_scheme(p);
  for (const auto& x : w)
    if (str(get(x, "scheme")) == chosen && !chosen.empty()) cards.push_back({"Estimated weights", format_bytes(count(get(x, "bytes")).value_or(0))});
  if (!w.empty() && str(get(w[0], "scheme")) == "original") cards.push_back({"Original", format_bytes(count(get(w[0], "bytes")).value_or(0))});
  if (const Json* fit_j = get(get(p, "estimates"), "fit"); fit_j && fit_j->is_object() && get(fit_j, "fits"))
    cards.push_back({"Fits one " + str(get(fit_j, "accelerator")), truthy(get(fit_j, "fits")) ? "yes" : "no"});
  size_t high = 0;
  for (const auto& r : array_or_empty(get(p, "risks"))) high += str(get(r, "severity")) == "high";
  cards.push_back({"Risks", std::to_string(array_or_empty(get(p, "risks")).size()) + " (" + std::to_string(high) + " high)"});

  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     // Nothing may load from anywhere: the page is complete as it is.
                     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
                     "<meta name=\"generator\" content=\"" + e(in.tool_version) + "\">\n"
                     "<title>" + e("Quantization plan: " + name) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  html += "<header>\n<p class=\"sub\">AMD Quark quantization plan, " + std::string(onnx ? "ONNX" : "Torch (Hugging Face LLM)") + "</p>\n<h1>" + e(name) + "</h1>\n";
  const char* badge = draft ? "DRAFT: requires confirmation" : in.verified ? "CONFIRMED" : "CONFIRMED BY ITS AUTHOR, NOT VERIFIED";
  html += "<p><span class=\"status " + std::string(draft ? "draft" : in.verified ? "confirmed" : "draft") + "\">" + badge + "</span> " +
          "<code class=\"path\">" + e(in.plan_path) + "</code></p>\n";
  if (!in.integrity.empty()) html += "<p class=\"sub\">" + e(upper_first(in.integrity)) + ".</p>\n";
  if (draft)
    html += "<div class=\"banner\" role=\"note\">This plan is a draft (requires_confirmation: true). " +
            std::string(array_or_empty(get(p, "open_questions")).empty() ? "Confirm it at the prompt or with --yes before Quark runs it."
                                                                         : "Answer the open questions below, then confirm it.") +
            "</div>\n";
  html += "<div class=\"cards\">\n";
  for (const auto& [k, v] : cards) html += "<div class=\"card\"><div class=\"k\">" + e(k) + "</div><div class=\"v\">" + e(v) + "</div></div>\n";
  html += "</div>\n<nav aria-label=\"Sections\"><ul><li><a href=\"#model\">Model</a></li><li><a href=\"#decisions\">Decisions</a></li>"
          "<li><a href=\"#risks\">Risks</a></li><li><a href=\"#size\">Size</a></li><li><a href=\"#fit\">Memory fit</a></li>"
          "<li><a href=\"#layers\">What gets quantized</a></li><li><a href=\"#outliers\">Outliers</a></li><li><a href=\"#quark\">Quark invocation</a></li>"
          "<li><a href=\"#rules\">Rules</a></li></ul></nav>\n</header>\n<main>\n";
  html += card + decisions + risks + size + fit + layers + outliers + quark + rules;
  std::string quark_version = str(get(get(in.analysis, "intake"), "catalog_quark_version"));
  if (quark_version.empty()) quark_version = Catalog::load(in.catalog_dir).version_stamp();
  html += "</main>\n<footer>Made by " + e(in.tool_version) + " from " + e(in.plan_path) + " with Quark facts of " + e(quark_version) +
          ". Sizes use binary units (1 KiB = 1024 bytes, 1 GiB = 2^30 bytes).</footer>\n";
  html += "<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  cited_rules().clear();
  return html;
}

}  // namespace quarkplan::ui
