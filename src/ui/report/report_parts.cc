// The helpers the report's sections share (declared in report_parts.h):
// tolerant reading, the small HTML builders and the rule links.
#include "ui/report/report_parts.h"

#include <cmath>
#include <cstdio>

#include "plan/rules.h"
#include "ui/markdown.h"

namespace quarkplan::ui::report_detail {

// ---- Tolerant reading: the analysis may come from another tool or version,
// so every field is checked for its type before use.

const Json* get(const Json& j, const std::string& key) {
  return j.is_object() && j.contains(key) ? &j[key] : nullptr;
}
const Json* get(const Json* j, const std::string& key) { return j ? get(*j, key) : nullptr; }

std::string str(const Json* j, const std::string& def) {
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
  return static_cast<uint64_t>(std::round(*v));  // 0 <= v <= 1.8e19 < 2^64: defined (llround stops at 2^63)
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

// ---- Small HTML builders.

std::string omitted(const std::string& sentence) { return "<p class=\"omitted\">" + e(sentence) + "</p>\n"; }

std::string figure(const std::string& svg, const std::string& caption) {
  return "<figure>\n" + svg + "\n<figcaption>" + e(caption) + "</figcaption>\n</figure>\n";
}

std::string sortable_table(const std::string& caption, const std::vector<std::string>& heads, const std::vector<std::vector<Cell>>& rows,
                           const std::vector<std::string>& row_classes) {
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

// ---- What kind of plan this is.

bool is_onnx(const Json& plan) { return str(get(plan, "backend")) == "onnx"; }

std::string chosen_scheme(const Json& plan) {
  return is_onnx(plan) ? str(get(plan, "preset")) : str(get(plan, "global_scheme"));
}

}  // namespace quarkplan::ui::report_detail
