#include "ui/verify_view.h"

#include <algorithm>
#include <cstdio>

#include "common/units.h"
#include "ui/decision_table.h"

namespace quarkplan::ui {

std::string render_verify(const verify::Result& r, const Style& st, int width) {
  size_t w = static_cast<size_t>(std::max(40, width));
  std::string out;
  std::string head = std::string(r.ok() ? "Verified: " : "NOT verified: ") + r.output_path + " against " + r.plan_path + " (" + r.flow + ")";
  out += st.bold(paragraph(head, width));
  for (const auto& c : r.checks) {
    std::string mark = c.failed() ? st.red("BROKEN") : !c.skipped.empty() ? st.dim("n/a   ") : st.green("kept  ");
    std::string line = c.id + ": " + c.purpose;
    if (c.failed()) line += " (" + std::to_string(std::max<uint64_t>(c.broken_subjects, 1)) + " broken of " + std::to_string(std::max(c.checked, c.broken_subjects)) + " checked)";
    else if (!c.skipped.empty()) line += " (not checked: " + c.skipped + ")";
    else line += " (" + std::to_string(c.checked) + " checked)";
    auto lines = wrap_indented(line, w > 9 ? w - 9 : w, 2);
    for (size_t i = 0; i < lines.size(); ++i) out += (i == 0 ? "  " + mark + " " + lines[i].substr(2) : "         " + lines[i]) + "\n";
  }
  for (const auto& c : r.checks) {
    if (!c.failed()) continue;
    out += "\n" + st.bold(c.id) + "\n";
    const size_t shown = std::min<size_t>(c.failures.size(), 20);
    for (size_t i = 0; i < shown; ++i) {
      const auto& f = c.failures[i];
      for (const auto& l : wrap_indented("- " + f.subject, w, 2)) out += l + "\n";
      for (const auto& l : wrap_indented("plan says:   " + f.expected, w, 6)) out += l + "\n";
      for (const auto& l : wrap_indented("export has:  " + f.found, w, 6)) out += l + "\n";
    }
    if (c.failures.size() > shown) out += "  ... and " + std::to_string(c.failures.size() - shown) + " more (--json lists every one)\n";
  }
  if (r.estimated_bytes) out += "\n" + paragraph("Size: " + format_bytes(r.exported_bytes) + " exported, " + format_bytes(r.estimated_bytes) + " estimated.", width);
  for (const auto& n : r.notes) out += paragraph("Note: " + n, width);
  return out;
}

}  // namespace quarkplan::ui
