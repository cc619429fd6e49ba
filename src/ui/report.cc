// The report page put together: render_report lays out the sections and charts
// of src/ui/report/ (model card, decisions and risks, charts, what gets
// quantized, weight outliers, invocation and rules) with the page's style.
#include "ui/report.h"

#include <string>
#include <utility>
#include <vector>

#include "catalog/catalog.h"
#include "common/units.h"
#include "ui/report/report_parts.h"
#include "ui/report/sections.h"

namespace quarkplan::ui {

using namespace report_detail;

namespace {

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

std::string model_name(const ReportInput& in) {
  std::string path = str(get(get(in.analysis, "model"), "model_path"));
  if (!path.empty()) return basename_of(path);
  return str(get(get(in.plan, "model"), "model_type"), "model");
}

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
  std::string layers = onnx ? onnx_ops(p, in.analysis, in.catalog_dir) : torch_layers(p, in.analysis, in.catalog_dir);
  std::string outliers = weight_stats(p, in.analysis);
  std::string quark = invocation_section(in);
  std::string verification = verification_section(in.verification);
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
          "<li><a href=\"#rules\">Rules</a></li>" +
          std::string(verification.empty() ? "" : "<li><a href=\"#verification\">Verification</a></li>") + "</ul></nav>\n</header>\n<main>\n";
  html += card + decisions + risks + size + fit + layers + outliers + quark + verification + rules;
  std::string quark_version = str(get(get(in.analysis, "intake"), "catalog_quark_version"));
  if (quark_version.empty()) quark_version = Catalog::for_plan(in.plan, in.catalog_dir).version_stamp();
  html += "</main>\n<footer>Made by " + e(in.tool_version) + " from " + e(in.plan_path) + " with Quark facts of " + e(quark_version) +
          ". Sizes use binary units (1 KiB = 1024 bytes, 1 GiB = 2^30 bytes).</footer>\n";
  html += "<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  cited_rules().clear();
  return html;
}

}  // namespace quarkplan::ui
