#include "ui/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ui/markdown.h"

namespace quarkplan::ui::svg {

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

std::string fill_of(const std::string& id, const std::string& kind) {
  if (kind == "alt" || kind == "hatch" || kind == "cross") return "url(#" + id + "-" + kind + ")";
  return "";  // solid kinds take their colour from CSS
}

// One pattern per segment kind, drawn in the page's colours.
std::string defs(const std::string& id) {
  return "<defs>"
         "<pattern id=\"" + id + "-alt\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
         "<rect width=\"6\" height=\"6\" class=\"pat-bg-alt\"/><circle cx=\"3\" cy=\"3\" r=\"1.4\" class=\"pat-fg\"/></pattern>"
         "<pattern id=\"" + id + "-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
         "<rect width=\"6\" height=\"6\" class=\"pat-bg-hatch\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" class=\"pat-line\"/></pattern>"
         "<pattern id=\"" + id + "-cross\" width=\"7\" height=\"7\" patternUnits=\"userSpaceOnUse\">"
         "<rect width=\"7\" height=\"7\" class=\"pat-bg-cross\"/><path d=\"M0 0L7 7M7 0L0 7\" class=\"pat-line\"/></pattern>"
         "</defs>";
}

std::string rect(const std::string& id, const Segment& s, double x, double y, double w, double h) {
  std::string f = fill_of(id, s.kind);
  std::string out = "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(w, 0.0)) + "\" height=\"" + num(h) +
                    "\" class=\"seg seg-" + esc(s.kind) + "\"" + (f.empty() ? "" : " fill=\"" + f + "\"") + ">";
  if (!s.label.empty()) out += "<title>" + esc(s.label) + "</title>";
  return out + "</rect>";
}

std::string legend_svg(const std::string& id, const std::vector<std::pair<std::string, std::string>>& legend, double y, double width) {
  std::string out;
  double x = 0;
  for (const auto& [kind, label] : legend) {
    double w = 22 + 7.0 * static_cast<double>(label.size());
    if (x > 0 && x + w > width) {
      x = 0;
      y += 20;
    }
    Segment s;
    s.kind = kind;
    out += rect(id, s, x, y, 16, 12);
    out += "<text x=\"" + num(x + 21) + "\" y=\"" + num(y + 10) + "\" class=\"legend\">" + esc(label) + "</text>";
    x += w + 12;
  }
  return out;
}

double legend_height(const std::vector<std::pair<std::string, std::string>>& legend, double width) {
  if (legend.empty()) return 0;
  double x = 0, rows = 1;
  for (const auto& item : legend) {
    double w = 22 + 7.0 * static_cast<double>(item.second.size());
    if (x > 0 && x + w > width) {
      x = 0;
      ++rows;
    }
    x += w + 12;
  }
  return rows * 20 + 8;
}

}  // namespace

std::string esc(const std::string& s) { return html_escape(s); }

std::string bar_chart(const BarChart& c) {
  // Room after the longest bar for its value text (about 6.6 px a character).
  double value_room = 60;
  for (const auto& b : c.bars) value_room = std::max(value_room, 6.6 * static_cast<double>(b.value_text.size()) + 12);
  value_room = std::min(value_room, 320.0);
  const double width = 720, bar_w = width - value_room, row = 40, bar_h = 16, top = c.markers.empty() ? 4 : 36;
  double max = c.max;
  for (const auto& b : c.bars) {
    double total = 0;
    for (const auto& s : b.segments) total += std::max(0.0, s.value);
    max = std::max(max, total);
  }
  for (const auto& m : c.markers) max = std::max(max, m.value);
  if (!(max > 0)) max = 1;
  const double lh = legend_height(c.legend, width);
  const double height = top + row * static_cast<double>(c.bars.size()) + 6 + lh;
  std::string out = "<svg class=\"chart\" id=\"" + esc(c.id) + "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
                    "\" role=\"img\" aria-labelledby=\"" + esc(c.id) + "-t " + esc(c.id) + "-d\" preserveAspectRatio=\"xMinYMin meet\">";
  out += "<title id=\"" + esc(c.id) + "-t\">" + esc(c.title) + "</title><desc id=\"" + esc(c.id) + "-d\">" + esc(c.desc) + "</desc>";
  out += defs(c.id);
  // Capacity / threshold lines first, so the values drawn later sit on top;
  // labels staggered when they crowd.
  double last_label_x = -1e9;
  int level = 0;
  for (const auto& m : c.markers) {
    double x = m.value / max * bar_w;
    level = x - last_label_x < 120 ? 1 - level : 0;
    last_label_x = x;
    out += "<line x1=\"" + num(x) + "\" y1=\"" + num(level ? 28.0 : 14.0) + "\" x2=\"" + num(x) + "\" y2=\"" + num(top + row * static_cast<double>(c.bars.size())) + "\" class=\"marker\"/>";
    bool right = x > bar_w - 120;
    out += "<text x=\"" + num(right ? x - 3 : x + 3) + "\" y=\"" + num(level ? 26 : 12) + "\" class=\"marker-label\"" +
           (right ? " text-anchor=\"end\"" : "") + ">" + esc(m.label) + "</text>";
  }
  double y = top;
  for (const auto& b : c.bars) {
    // The label gets a backdrop too: a capacity line must not cross its text.
    out += "<rect x=\"0\" y=\"" + num(y) + "\" width=\"" + num(7.0 * static_cast<double>(b.label.size()) + 6) + "\" height=\"14\" class=\"backdrop\"/>";
    out += "<text x=\"0\" y=\"" + num(y + 11) + "\" class=\"label" + std::string(b.emphasis ? " strong" : "") + "\">" + esc(b.label) + "</text>";
    double x = 0;
    for (const auto& s : b.segments) {
      double w = std::max(0.0, s.value) / max * bar_w;
      out += rect(c.id, s, x, y + 15, w, bar_h);
      x += w;
    }
    out += "<rect x=\"0\" y=\"" + num(y + 15) + "\" width=\"" + num(std::max(x, 1.0)) + "\" height=\"" + num(bar_h) + "\" class=\"outline\"/>";
    // A backdrop so a capacity line never runs through the value.
    out += "<rect x=\"" + num(x + 3) + "\" y=\"" + num(y + 15) + "\" width=\"" + num(6.6 * static_cast<double>(b.value_text.size()) + 6) + "\" height=\"" +
           num(bar_h) + "\" class=\"backdrop\"/>";
    out += "<text x=\"" + num(x + 6) + "\" y=\"" + num(y + 27) + "\" class=\"value\">" + esc(b.value_text) + "</text>";
    y += row;
  }
  out += legend_svg(c.id, c.legend, y + 8, width);
  return out + "</svg>";
}

std::string column_chart(const ColumnChart& c) {
  const double width = 720, plot_h = 160, top = 8, label_h = 30;
  const size_t n = std::max<size_t>(c.columns.size(), 1);
  const double slot = std::min(48.0, width / static_cast<double>(n)), gap = slot > 6 ? std::min(4.0, slot * 0.2) : 0;
  double max = 0;
  for (const auto& col : c.columns) {
    double t = 0;
    for (const auto& s : col.segments) t += std::max(0.0, s.value);
    max = std::max(max, t);
  }
  if (!(max > 0)) max = 1;
  const double lh = legend_height(c.legend, width);
  const double height = top + plot_h + label_h + (c.axis_label.empty() ? 0 : 16) + lh;
  std::string out = "<svg class=\"chart\" id=\"" + esc(c.id) + "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
                    "\" role=\"img\" aria-labelledby=\"" + esc(c.id) + "-t " + esc(c.id) + "-d\" preserveAspectRatio=\"xMinYMin meet\">";
  out += "<title id=\"" + esc(c.id) + "-t\">" + esc(c.title) + "</title><desc id=\"" + esc(c.id) + "-d\">" + esc(c.desc) + "</desc>";
  out += defs(c.id);
  // Show every k-th label (about 28 px per label); a label that would touch
  // the one before it, or the last column's (always shown: it is often
  // "other"), is left out, judged by its text's width.
  size_t every = std::max<size_t>(1, static_cast<size_t>(std::ceil(28.0 / slot)));
  auto text_w = [](const std::string& s) { return 6.5 * static_cast<double>(s.size()); };
  auto centre = [&](size_t i) { return static_cast<double>(i) * slot + gap / 2 + (slot - gap) / 2; };
  const double last_left = c.columns.empty() ? width : centre(c.columns.size() - 1) - text_w(c.columns.back().label) / 2;
  double drawn_right = -1e9;
  for (size_t i = 0; i < c.columns.size(); ++i) {
    const auto& col = c.columns[i];
    double x = static_cast<double>(i) * slot + gap / 2, y = top + plot_h;
    for (const auto& s : col.segments) {
      double h = std::max(0.0, s.value) / max * plot_h;
      y -= h;
      out += rect(c.id, s, x, y, slot - gap, h);
    }
    bool last = i + 1 == c.columns.size();
    double left = centre(i) - text_w(col.label) / 2, right = centre(i) + text_w(col.label) / 2;
    bool room = last || (left >= drawn_right + 4 && right + 4 <= last_left);
    if ((i % every == 0 || last) && room && !col.label.empty()) {
      drawn_right = right;
      out += "<text x=\"" + num(x + (slot - gap) / 2) + "\" y=\"" + num(top + plot_h + 14) + "\" class=\"tick\" text-anchor=\"middle\">" +
             esc(col.label) + "</text>";
    }
  }
  out += "<line x1=\"0\" y1=\"" + num(top + plot_h) + "\" x2=\"" + num(width) + "\" y2=\"" + num(top + plot_h) + "\" class=\"axis\"/>";
  double y = top + plot_h + label_h;
  if (!c.axis_label.empty()) {
    out += "<text x=\"0\" y=\"" + num(y) + "\" class=\"legend\">" + esc(c.axis_label) + "</text>";
    y += 16;
  }
  out += legend_svg(c.id, c.legend, y - 8, width);
  return out + "</svg>";
}

}  // namespace quarkplan::ui::svg
