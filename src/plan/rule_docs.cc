#include "plan/rule_docs.h"

#include <set>

#include "common/resources.h"
#include "plan/rules.h"

namespace quarkplan {

namespace {

constexpr std::string_view kDocDir = "docs/rules/";
const char* const kSections[] = {"Decides", "Fires when", "Follows", "Example"};

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<std::pair<std::string, std::string>> embedded_docs() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, data] : embedded::all())
    if (name.substr(0, kDocDir.size()) == kDocDir) out.emplace_back(std::string(name), std::string(data));
  return out;
}

}  // namespace

RuleDoc parse_rule_doc(const std::string& md, const std::string& path, std::vector<std::string>& problems) {
  RuleDoc d;
  d.markdown = md;
  std::vector<std::string> lines;
  for (size_t start = 0; start <= md.size();) {
    size_t nl = md.find('\n', start);
    if (nl == std::string::npos) nl = md.size();
    std::string l = md.substr(start, nl - start);
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(l);
    start = nl + 1;
  }
  size_t i = 0;
  if (lines.empty() || lines[0].rfind("# ", 0) != 0) {
    problems.push_back(path + ": the first line must be '# <rule-id>'");
    return d;
  }
  d.id = trim(lines[0].substr(2));
  // The purpose: the first non-empty line before the first section.
  for (i = 1; i < lines.size() && lines[i].rfind("## ", 0) != 0; ++i)
    if (d.purpose.empty() && !trim(lines[i]).empty()) d.purpose = trim(lines[i]);
  if (d.purpose.empty()) problems.push_back(path + ": the one-line purpose under the title is missing");
  std::string* bodies[] = {&d.decides, &d.fires_when, &d.follows, &d.example};
  size_t want = 0;
  std::string* body = nullptr;
  for (; i < lines.size(); ++i) {
    if (lines[i].rfind("## ", 0) == 0) {
      std::string name = trim(lines[i].substr(3));
      if (want >= 4 || name != kSections[want]) {
        problems.push_back(path + ": section '" + name + "' is out of place (expected " +
                           (want < 4 ? "'" + std::string(kSections[want]) + "'" : std::string("no more sections")) + ")");
        body = nullptr;
        continue;
      }
      body = bodies[want++];
      continue;
    }
    if (body) *body += lines[i] + "\n";
  }
  for (size_t k = 0; k < 4; ++k) {
    *bodies[k] = trim(*bodies[k]);
    if (k >= want) problems.push_back(path + ": section '## " + std::string(kSections[k]) + "' is missing");
    else if (bodies[k]->empty()) problems.push_back(path + ": section '## " + std::string(kSections[k]) + "' is empty");
  }
  const char* purpose = documented_purpose(d.id);
  if (const Rule* r = find_rule(d.id)) d.flow = r->flow, d.kind = "rule";
  if (const IntakeCheck* c = find_intake_check(d.id)) d.flow = c->flow, d.kind = "intake";
  if (purpose && d.purpose != purpose)
    problems.push_back(path + ": the purpose line differs from the registry's (\"" + std::string(purpose) + "\")");
  return d;
}

std::vector<std::string> documented_ids() {
  std::vector<std::string> ids;
  // Per flow, the intake checks first (they run before the plan's rules).
  for (const char* flow : {"onnx", "torch"}) {
    for (const auto& c : intake_check_registry())
      if (std::string(c.flow) == flow) ids.push_back(c.id);
    for (const auto& r : rule_registry())
      if (std::string(r.flow) == flow) ids.push_back(r.id);
  }
  return ids;
}

std::optional<RuleDoc> rule_doc(const std::string& id) {
  if (!documented_purpose(id)) return std::nullopt;
  std::string path = std::string(kDocDir) + id + ".md";
  std::string_view md = embedded_resource(path);
  if (md.empty()) return std::nullopt;
  std::vector<std::string> problems;
  RuleDoc d = parse_rule_doc(std::string(md), path, problems);
  if (d.id != id) return std::nullopt;
  return d;
}

std::vector<RuleDoc> rule_docs() {
  std::vector<RuleDoc> out;
  for (const auto& id : documented_ids())
    if (auto d = rule_doc(id)) out.push_back(std::move(*d));
  return out;
}

std::vector<std::string> rule_doc_problems() { return rule_doc_problems(embedded_docs()); }

std::vector<std::string> rule_doc_problems(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> problems;
  std::set<std::string> documented;
  for (const auto& [path, md] : files) {
    RuleDoc d = parse_rule_doc(md, path, problems);
    std::string stem = path.substr(path.rfind('/') + 1);
    if (stem.size() > 3 && stem.compare(stem.size() - 3, 3, ".md") == 0) stem.resize(stem.size() - 3);
    if (d.id.empty()) continue;
    if (!documented_purpose(d.id)) problems.push_back(path + ": names '" + d.id + "', which is not a registered rule or intake check");
    if (stem != d.id) problems.push_back(path + ": the file name must be the rule ID (" + d.id + ".md)");
    documented.insert(d.id);
  }
  for (const auto& id : documented_ids())
    if (!documented.count(id))
      problems.push_back(std::string(find_rule(id) ? "rule " : "intake check ") + id + " has no documentation (docs/rules/" + id + ".md)");
  return problems;
}

}  // namespace quarkplan
