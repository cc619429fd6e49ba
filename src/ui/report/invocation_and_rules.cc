// The report's Quark invocation (with its copy buttons) and the
// documentation of every rule and intake check the page cites.
#include "ui/report/sections.h"

#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/strings.h"
#include "plan/invocation.h"
#include "plan/rule_docs.h"
#include "plan/rules.h"
#include "ui/markdown.h"
#include "ui/report/report_parts.h"

namespace quarkplan::ui::report_detail {

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

}  // namespace quarkplan::ui::report_detail
