// The report's decision table (each reason's rule IDs linked, the user's own
// choices marked) and its risks and open questions, by severity.
#include "ui/report/sections.h"

#include <exception>
#include <string>

#include "common/units.h"
#include "plan/planner.h"
#include "ui/decision_table.h"
#include "ui/report/report_parts.h"

namespace quarkplan::ui::report_detail {

namespace {

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

}  // namespace

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

}  // namespace quarkplan::ui::report_detail
