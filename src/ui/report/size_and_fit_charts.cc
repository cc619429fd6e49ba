// The report's charts of size: the weight size per scheme, and the memory the
// plan needs against its accelerators' memory.
#include "ui/report/sections.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/strings.h"
#include "common/units.h"
#include "ui/report/report_parts.h"
#include "ui/svg.h"

namespace quarkplan::ui::report_detail {

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
  const bool has_state = kv && kv->is_object() && count(get(kv, "state_bytes_per_sequence")).value_or(0) > 0;
  std::string kv_label = kv && kv->is_object() ? std::string(has_state ? "KV cache and linear-attention/Mamba state" : "KV cache") + " at " + with_commas(count(get(kv, "context_length")).value_or(0)) + " tokens x batch " +
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
    // A strategy that streams the model (file-to-file, per block) never holds it whole: serving decides.
    const std::string streamed = str(get(f, "calibration_streamed"));
    if (!n) n = streamed.empty() ? std::max<uint64_t>(calib_n.value_or(0), deploy_n.value_or(0)) : deploy_n.value_or(0);
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
    // The runtime's reserve for activations and graphs, on each of the accelerators it serves on.
    const uint64_t reserve = count(get(f, "deployment_reserve_bytes")).value_or(0) * deploy_n.value_or(1);
    if (reserve) dep.segments.push_back({static_cast<double>(reserve), "hatch", "runtime reserve (activations, graphs): " + format_bytes(reserve)});
    dep.value_text = format_bytes(deploy + reserve);
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
    if (reserve) c.legend.push_back({"hatch", "runtime reserve"});
    if (calib) c.legend.push_back({"cross", "calibration load"});
    std::string counts;
    if (!streamed.empty() && deploy_n)
      counts = ": serving needs " + std::to_string(*deploy_n) + " of them (calibration is streamed with " + streamed + ", never whole on them).";
    else if (calib_n && deploy_n && *calib_n != *deploy_n)
      counts = ": calibration needs " + std::to_string(*calib_n) + " of them, deployment " + std::to_string(*deploy_n) + ".";
    std::string verdict = fits_one ? "It fits one " + acc + " (" + format_bytes(mem) + ")."
                                   : "It does not fit one " + acc + " (" + format_bytes(mem) + ")" +
                                         (counts.empty() ? ": it needs at least " + std::to_string(n) + " of them." : counts);
    c.desc = "Deployment needs " + format_bytes(deploy + reserve) + " (weights " + format_bytes(wpart) + ", " + kv_label + " " + format_bytes(deploy - wpart) +
             (reserve ? ", the runtime's reserve " + format_bytes(reserve) : std::string()) + ")" +
             (calib ? "; calibration loads " + format_bytes(*calib) : std::string()) + ". " + verdict;
    out += "<p class=\"verdict " + std::string(fits_one ? "fits" : "nofit") + "\"><strong>" + (fits_one ? "Fits" : "Does not fit") + "</strong>: " + e(verdict + calib_note) +
           "</p>\n";
    out += figure(svg::bar_chart(c), "What the plan needs against the memory of " + acc + "; dashed lines mark the usable memory of 1, 2, ... accelerators (" +
                                         usable_text + format_bytes(mem) + " each: " + format_bytes(usable) + "). Sizes in binary units.");
    std::vector<std::vector<Cell>> rows = {
        {{"Quantized weights (" + e(chosen) + ")", ""}, {e(format_bytes(wpart)), std::to_string(wpart)}, {with_commas(wpart), std::to_string(wpart)}},
        {{e(kv_label), ""}, {e(format_bytes(deploy - wpart)), std::to_string(deploy - wpart)}, {with_commas(deploy - wpart), std::to_string(deploy - wpart)}},
        {{"Runtime reserve (activations, graphs) on " + std::to_string(deploy_n.value_or(1)) + " " + e(acc), ""}, {e(format_bytes(reserve)), std::to_string(reserve)}, {with_commas(reserve), std::to_string(reserve)}},
        {{"Deployment total", ""}, {e(format_bytes(deploy + reserve)), std::to_string(deploy + reserve)}, {with_commas(deploy + reserve), std::to_string(deploy + reserve)}}};
    if (!reserve) rows.erase(rows.begin() + 2);
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

}  // namespace quarkplan::ui::report_detail
