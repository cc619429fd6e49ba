// Charts for the HTML report, drawn as inline SVG by the project (no charting
// library, no network). Every chart is accessible: role="img" with a <title>
// and <desc>, values written as text on the chart, and each kind of segment
// told apart by a pattern (solid, hatched, dotted, cross-hatched) as well as a
// colour, so nothing depends on colour alone. Colours come from CSS variables,
// so the page's light/dark/print styles apply to the charts too.
#pragma once
#include <string>
#include <vector>

namespace quarkplan::ui::svg {

// Segment kinds: each has a CSS class (seg-<kind>) and a fill pattern.
//   "main"  solid            (e.g. quantized weights, this plan's scheme)
//   "alt"   dotted           (e.g. overridden layers, KV cache)
//   "hatch" diagonal hatch   (e.g. the original model, excluded layers)
//   "cross" cross-hatch      (e.g. calibration load)
//   "muted" light solid      (other candidates)
struct Segment {
  double value = 0;
  std::string kind = "main";
  std::string label;  // what the segment is (tooltip and text alternative)
};

struct Bar {
  std::string label;               // drawn above the bar
  std::vector<Segment> segments;   // stacked left to right
  std::string value_text;          // drawn after the bar
  bool emphasis = false;           // bold label (e.g. the plan's own choice)
};

struct Marker {
  double value = 0;
  std::string label;  // e.g. "1 x mi300x: 192 GiB"
};

struct BarChart {
  std::string id;     // unique in the page (pattern ids derive from it)
  std::string title;  // <title>
  std::string desc;   // <desc>: the data in words
  std::vector<Bar> bars;
  std::vector<Marker> markers;  // vertical dashed lines (capacities, thresholds)
  std::vector<std::pair<std::string, std::string>> legend;  // (kind, label)
  double max = 0;     // axis maximum; 0 = from the data and markers
};

// Horizontal bars, one row per bar (label above, value after).
std::string bar_chart(const BarChart& chart);

struct Column {
  std::string label;              // under the column (shown when there is room)
  std::vector<Segment> segments;  // stacked bottom to top
};

struct ColumnChart {
  std::string id, title, desc;
  std::vector<Column> columns;
  std::vector<std::pair<std::string, std::string>> legend;
  std::string axis_label;  // under the axis
};

// Vertical stacked columns (e.g. parameters per layer, by status).
std::string column_chart(const ColumnChart& chart);

// XML text escaping (SVG text and attributes).
std::string esc(const std::string& s);

}  // namespace quarkplan::ui::svg
