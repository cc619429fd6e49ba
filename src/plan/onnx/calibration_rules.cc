// ONNX calibration and evaluation: the method, sample and batch sizes, calibration data, the outlier
// layers kept in float, and the check after quantization — onnx.calibration.* (method, sizes, data,
// outlier_percentile, layerwise_percentile), onnx.weight_stats.exclude_outliers, onnx.evaluation_intent.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "common/strings.h"
#include "plan/onnx/rule_helpers.h"
#include "plan/onnx_weights.h"
#include "plan/rules.h"

namespace quarkplan::onnx_rules {

using detail::onnx_facts;
using detail::target;
using detail::generation;
using detail::plan_arch;
using detail::preset;
using detail::family;
using detail::spec;

void calibration_method(PlanState& s) {
  Json& cal = s.plan["calibration"];
  if (const Json* c = s.choice("calibration.method")) {
    std::string m = c->is_string() ? s.cat.canonical_calibration(*c) : "";
    if (m.empty()) {
      std::vector<std::string> names;
      for (const auto& x : s.cat.onnx()["calibration_methods"]) names.push_back(x["name"]);
      s.error("unknown calibration method '" + (c->is_string() ? c->get<std::string>() : c->dump()) + "'" +
              did_you_mean(c->is_string() ? c->get<std::string>() : "", names));
      return;
    }
    // A method Quark's calibrators do not run (catalog not_a_calibrator: Int16Method.MinMax is the
    // scale rule Quark switches to after calibration for Int16Scale, and calibrators.py raises
    // "Unsupported calibration method" when it is passed as calibrate_method; seen in tests/quark_real).
    for (const auto& x : s.cat.onnx()["calibration_methods"])
      if (x["name"] == m && x.contains("not_a_calibrator")) {
        s.error("calibration method " + m + ": " + x["not_a_calibrator"].get<std::string>());
        return;
      }
    cal["method"] = m;
    s.reason("calibration.method", "onnx.calibration.method", "Your choice");
    return;
  }
  std::string t = target(s);
  const Json* p = preset(s);
  // Power-of-two calibration for a preset that runs with power-of-two scales
  // on the NPU; any other preset keeps its own calibration (a preset the NPU
  // does not run is the gate's conflict, never a silent change of method).
  const Json* g = generation(s);
  const Json* grp = g && p ? s.cat.npu_group(*g, t, (*p)["name"].get<std::string>()) : nullptr;
  const bool pof2_preset = p && ((*p)["power_of_two"].get<bool>() || (grp ? grp->value("scales", "") == "power_of_two" : false));
  if (t == "npu_cnn" && (!p || pof2_preset)) {
    cal["method"] = "PowerOfTwo_MinMSE";
    s.reason("calibration.method", "onnx.calibration.method", "NPU CNN needs power-of-two scales; MinMSE is usually better than NonOverflow");
  } else if (p) {
    cal["method"] = (*p)["calibration"];
    s.reason("calibration.method", "onnx.calibration.method", "The preset's own calibration (" + (*p)["name"].get<std::string>() + ")");
  } else {
    cal["method"] = nullptr;
    s.reason("calibration.method", "onnx.calibration.method", "Follows the preset");
  }
}

void calibration_sizes(PlanState& s) {
  Json& cal = s.plan["calibration"];
  const Json& d = s.cat.onnx()["calibration_defaults"];
  cal["data_size"] = d["data_size"];
  cal["batch_size"] = d["batch_size"];
  if (const Json* c = s.choice("calibration.data_size")) {
    if (!c->is_number_integer() || c->get<int64_t>() < 1) s.error("calibration.data_size must be a positive integer");
    else {
      cal["data_size"] = *c;
      // A preset that reads no calibration data (catalog calibration_free) has no scales to make noisy.
      const Json* p = preset(s);
      const bool reads_data = !(p && s.cat.onnx()["calibration_free"]["presets"].contains((*p)["name"].get<std::string>()));
      s.reason("calibration.data_size", "onnx.calibration.sizes", reads_data ? "Your choice" : "Your choice, unused: " + (p ? (*p)["name"].get<std::string>() : std::string()) + " reads no calibration data");
      if (reads_data && c->get<int64_t>() < d["min_samples_for_final_plan"].get<int64_t>())
        s.risk("onnx.calibration.sizes", "medium", "Only " + c->dump() + " calibration samples: scales will be noisy.",
               d["sample_guidance"].get<std::string>() + ".");
    }
  } else {
    s.reason("calibration.data_size", "onnx.calibration.sizes", "Default 200 (" + d["sample_guidance"].get<std::string>() + ")");
  }
  if (const Json* c = s.choice("calibration.batch_size")) {
    if (!c->is_number_integer() || c->get<int64_t>() < 1 || c->get<int64_t>() > 4)
      s.error("calibration.batch_size must be an integer from 1 to 4");
    else {
      cal["batch_size"] = *c;
      s.reason("calibration.batch_size", "onnx.calibration.sizes", "Your choice");
    }
  } else {
    s.reason("calibration.batch_size", "onnx.calibration.sizes", "1: the smallest memory footprint (1-4 allowed)");
  }
}

void calibration_data(PlanState& s) {
  // Dynamic quantization and weight-only RTN read no calibration data (catalog
  // calibration_free), unless a fine-tuning algorithm is asked for.
  const Json* p = preset(s);
  const Json& free = s.cat.onnx()["calibration_free"]["presets"];
  const Json* algos = s.choice("algorithms");
  bool tuned = algos && !algos->is_null() && !(algos->is_string() && (algos->get<std::string>().empty() || lower(algos->get<std::string>()) == "none")) &&
               !(algos->is_array() && algos->empty());
  if (p && free.contains((*p)["name"].get<std::string>()) && !tuned) {
    s.reason("calibration.data_path", "onnx.calibration.data",
             "Not needed: " + free[(*p)["name"].get<std::string>()].get<std::string>() +
                 (s.req.calib_data.empty() || s.req.calib_data == "none" ? "" : " (the set you gave is not used)"));
    return;
  }
  // Quark's planning guide: PTQ needs representative inputs, asked for before
  // the plan is final, whether the user said "none" or nothing.
  if (s.req.calib_data == "none" || s.req.calib_data.empty()) {
    s.reason("calibration.data_path", "onnx.calibration.data", "Not given yet: asked as an open question");
    s.question("PTQ needs representative inputs for accurate scales: provide a small calibration set (at least a few dozen samples) with --calib-data PATH.");
    s.risk("onnx.calibration.data", "high", "No calibration data: the plan cannot be finalized.",
           "Collect 64-512 representative inputs keyed by the model's input names.");
  } else if (!s.req.calib_data.empty()) {
    s.plan["calibration"]["data_path"] = s.req.calib_data;
    const Json& chk = s.req.calib_data_check;
    if (!chk.is_object() || !chk.contains("samples") || !chk["samples"].is_number_unsigned()) {
      s.reason("calibration.data_path", "onnx.calibration.data", "Your calibration set");
      return;
    }
    // What intake/calibration_data.cc found, read as Quark's PathDataReader reads it.
    const uint64_t samples = chk["samples"].get<uint64_t>();
    const std::string layout = chk.value("layout", "");
    s.plan["calibration"]["data_layout"] = layout;
    s.plan["calibration"]["samples"] = samples;
    s.reason("calibration.data_path", "onnx.calibration.data",
             "Your calibration set: " + std::to_string(samples) + (samples == 1 ? " sample" : " samples") +
                 (layout == "per_input" ? ", one folder per input" : ", .npy files for the model's input") + ", as Quark's PathDataReader reads it");
    const Json& ds = s.plan["calibration"].contains("data_size") ? s.plan["calibration"]["data_size"] : Json();
    if (ds.is_number_unsigned() && samples < ds.get<uint64_t>())
      s.risk("onnx.calibration.data", samples < 16 ? "high" : "medium",
             "The calibration set holds " + std::to_string(samples) + (samples == 1 ? " sample" : " samples") + " where data_size asks for " +
                 std::to_string(ds.get<uint64_t>()) + ": Quark calibrates on the " + std::to_string(samples) + " there are.",
             "Add representative samples up to " + std::to_string(ds.get<uint64_t>()) + " (the planning guide asks for 64-512), or set calibration.data_size=" +
                 std::to_string(samples) + " to say it is intended.");
    if (ds.is_number_unsigned() && samples > ds.get<uint64_t>())
      s.risk("onnx.calibration.data", "low",
             "The calibration set holds " + std::to_string(samples) + " samples and data_size is " + std::to_string(ds.get<uint64_t>()) +
                 ": Quark's reader loads them all, then calibrates on the first " + std::to_string(ds.get<uint64_t>()) + " in directory-listing order (not a chosen subset).",
             "Keep the " + std::to_string(ds.get<uint64_t>()) + " most representative samples in the folder, or raise calibration.data_size.");
    if (chk.contains("bytes") && chk["bytes"].is_number_unsigned() && chk["bytes"].get<uint64_t>() > (4ull << 30)) {
      double gib = static_cast<double>(chk["bytes"].get<uint64_t>()) / static_cast<double>(1ull << 30);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f", gib);
      s.risk("onnx.calibration.data", gib > 16 ? "high" : "medium",
             std::string("Quark's PathDataReader loads every array of the set into memory before calibrating, and caches them: ") + buf + " GiB here.",
             "Keep fewer or smaller samples (calibration needs a few hundred at most), or feed them with a CalibrationDataReader of your own that loads one at a time.");
    }
    if (const Json& lb = chk.value("largest_batch", Json()); lb.is_number_unsigned() && lb.get<uint64_t>() > 1)
      s.risk("onnx.calibration.data", "low",
             "Calibration arrays hold batches of up to " + std::to_string(lb.get<uint64_t>()) + " samples in one file: Quark's reader feeds each file as one batch, whatever batch_size says.",
             "Save one sample per file for the batch_size the plan gives, or set calibration.batch_size to match.");
    for (const auto& in : chk.value("inputs", Json::array())) {
      std::vector<std::string> from = string_list(in.value("cast_from", Json::array()));
      if (from.empty()) continue;
      std::string to = in.value("input_dtype", "");
      bool int_to_float = to.rfind("float", 0) == 0 && std::any_of(from.begin(), from.end(), [](const std::string& d) { return d.rfind("float", 0) != 0; });
      std::string list;
      for (const auto& f : from) list += (list.empty() ? "" : ", ") + f;
      s.risk("onnx.calibration.data", int_to_float ? "medium" : "low",
             "Calibration arrays of " + list + " for input '" + in.value("name", "") + "' are cast to " + to + " by Quark's reader (astype)" +
                 (int_to_float ? ": integer data reaches the model unnormalized, so the activation ranges calibrated are not the deployed ones." : "."),
             int_to_float ? "Save the arrays after the model's preprocessing (normalized " + to + "), as the deployed pipeline feeds them."
                          : "Save them as " + to + " to skip the cast.");
    }
  }
}

namespace {

// Presets that calibrate integer activations: the ones whose method step 4 tunes.
bool calibrated_integer(const std::string& family) {
  return family == "int8" || family == "int16" || family == "int8_cnn" || family == "int16_cnn" || family == "npu_transformer";
}

const Json* weight_stats_of(const PlanState& s) {
  return s.analysis.contains("weight_stats") && s.analysis["weight_stats"].is_object() ? &s.analysis["weight_stats"] : nullptr;
}

}  // namespace

// Planning guide step 4: Percentile for outlier-heavy transformers.
void outlier_percentile(PlanState& s) {
  if (s.choice("calibration.method") || target(s) == "npu_cnn" || plan_arch(s) != "transformer" || !calibrated_integer(family(s))) return;
  const Json* ws = weight_stats_of(s);
  if (!ws || (*ws)["outlier_modules"].empty() || (*ws)["top_modules"].empty() || !(*ws).value("outlier_max_over_std", Json()).is_number()) return;
  const Json& top = (*ws)["top_modules"][0];
  s.plan["calibration"]["method"] = "Percentile";
  s.reason("calibration.method", "onnx.calibration.outlier_percentile",
           "Quark's planning guide, step 4: Percentile for outlier-heavy transformers (--weight-stats: " +
               std::to_string((*ws)["outlier_modules"].size()) + ((*ws)["outlier_modules"].size() == 1 ? " layer" : " layers") + " beyond " +
               std::to_string(std::llround(std::min((*ws)["outlier_max_over_std"].get<double>(), 1e9))) + " sigma or with a heavy tail, e.g. " +
               top["module"].get<std::string>() + " at " + top["max_over_std"].dump() + " sigma)");
}

// Planning guide step 4: LayerWisePercentile when accuracy is critical.
void layerwise_percentile(PlanState& s) {
  if (s.choice("calibration.method") || s.req.goal != "accuracy" || target(s) == "npu_cnn" || plan_arch(s) != "transformer" ||
      !calibrated_integer(family(s)))
    return;
  s.plan["calibration"]["method"] = "LayerWisePercentile";
  const Json* ws = weight_stats_of(s);
  s.reason("calibration.method", "onnx.calibration.layerwise_percentile",
           "Quark's planning guide, step 4: LayerWisePercentile when accuracy is critical (--goal accuracy): a percentile per tensor" +
               std::string(ws && !(*ws)["outlier_modules"].empty() ? ", for a transformer whose weights carry outliers" : "") +
               "; calibration takes longer and more memory");
}

// Layers whose weights make INT8 risky stay in float: every one beyond the
// threshold is proposed (the user confirms the list with the plan), and a plan
// that quantizes them anyway keeps the risk.
void exclude_outlier_layers(PlanState& s) {
  const Json* ws = weight_stats_of(s);
  const Json* p = preset(s);
  if (!ws || !p) return;
  const Json& pol = s.cat.onnx()["weight_stats_policy"];
  const Json& int8 = pol["int8_weight_types"];
  if (!std::count(int8.begin(), int8.end(), (*p)["weight_type"])) return;
  std::vector<std::string> names = string_list(onnx_facts(s).value("node_names", Json::array()));
  std::set<std::string> known(names.begin(), names.end());
  PresetWeights w = preset_weights(s.analysis, s.cat, *p);
  double limit = pol["exclude_max_over_std"].get<double>();
  std::vector<std::string> picked, shown;
  for (const auto& m : (*ws)["top_modules"]) {
    // null: the weights hold inf or NaN (JSON has no number for them) — always risky.
    bool non_finite = !m["max_over_std"].is_number();
    if ((!non_finite && m["max_over_std"].get<double>() <= limit) || !m.contains("op_type") || !known.count(m["module"])) continue;
    picked.push_back(m["module"]);
    shown.push_back(m["module"].get<std::string>() + " (" + (non_finite ? std::string("inf/NaN") : m["max_over_std"].dump() + " sigma") + ")");
  }
  if (picked.empty()) return;
  std::string lim = std::to_string(static_cast<int>(limit));
  std::string why = "--weight-stats: max |w| beyond " + lim + " standard deviations in " + join(shown) +
                    "; one INT8 scale per tensor would leave most weights on a few levels";
  if (const Json* c = s.choice("onnx_specific.nodes_to_exclude")) {
    // The user's list: the outlier layers it leaves quantized keep their risk.
    Json list = c->is_string() ? Json::array({*c}) : c->is_array() ? *c : Json::array();
    std::vector<std::string> left;
    for (size_t i = 0; i < picked.size(); ++i)
      if (!std::count(list.begin(), list.end(), Json(picked[i]))) left.push_back(shown[i]);
    if (!left.empty())
      s.risk("onnx.weight_stats.exclude_outliers", "medium",
             "Quantized although their weights reach beyond " + lim + " standard deviations: " + join(left) +
                 "; one INT8 scale per tensor leaves most of their weights on a few levels.",
             "Keep them in float (add them to nodes_to_exclude), or validate accuracy after quantization.");
    return;
  }
  if (target(s) == "npu_cnn") {
    // Excluded nodes split the NPU graph into CPU islands: name them instead.
    s.risk("onnx.weight_stats.exclude_outliers", "medium", "Weights that make INT8 risky: " + join(shown) + ".",
           "If accuracy drops, exclude them (--exclude NODE) at the cost of CPU fallbacks, or try XINT8_ADAROUND.");
    return;
  }
  // Per-channel weights (chosen) give each output channel its own scale: the
  // layers stay quantized, and the plan says which to watch.
  if (spec(s).value("per_channel", false)) {
    s.risk("onnx.weight_stats.exclude_outliers", "low",
           "Quantized per channel although their weights reach far out: " + join(shown) + "; per-channel scales help when the outliers sit in a few channels.",
           "Validate accuracy after quantization; keep the worst in float (--exclude NODE) if it drops.");
    return;
  }
  spec(s)["nodes_to_exclude"] = picked;
  s.reason("onnx_specific.nodes_to_exclude", "onnx.weight_stats.exclude_outliers",
           why + ": " + std::to_string(picked.size()) + (picked.size() == 1 ? " layer" : " layers") +
               " kept in float (edit the list, or set it to [] to quantize them; or quantize them per channel with onnx_specific.per_channel=true)");
  // Many layers in float (more than the policy's share, and more than one):
  // the model keeps much of its float cost.
  uint64_t nodes = w.main_nodes + w.sub_nodes;
  size_t cap = std::max<size_t>(1, static_cast<size_t>(static_cast<double>(nodes) * pol["max_excluded_share"].get<double>()));
  if (picked.size() > cap)
    s.risk("onnx.weight_stats.exclude_outliers", "medium",
           std::to_string(picked.size()) + " of the " + std::to_string(nodes) + " layers " + (*p)["name"].get<std::string>() +
               " quantizes stay in float for their outliers: the quantized model keeps much of the float model's size and speed.",
           [&] {
             // Only what the plan does not do already.
             std::vector<std::string> tries;
             if ((*p)["name"] != "A16W8") tries.push_back("a preset with 16-bit activations or per-channel weights (A16W8)");
             std::string m = s.plan["calibration"].value("method", "");
             if (m != "Percentile" && m != "LayerWisePercentile") tries.push_back("Percentile calibration");
             return tries.empty() ? std::string("Quantize some of them (remove them from nodes_to_exclude) and check accuracy after quantization.")
                                  : "Try " + join(tries, ", or ") + ", and quantize them.";
           }());
  else
    s.risk("onnx.weight_stats.exclude_outliers", "low",
           "Kept in float for their outliers: " + join(shown) + "; they run at float speed and size.",
           "Quantize them (set nodes_to_exclude=[]) only if accuracy holds.");
}

void evaluation_intent(PlanState& s) {
  const Json& intents = s.cat.onnx()["evaluation_intents"];
  s.plan["evaluation_intent"] = s.cat.onnx()["default_evaluation_intent"];
  if (const Json* c = s.choice("evaluation_intent")) {
    if (!c->is_string() || !std::count(intents.begin(), intents.end(), *c)) {
      s.error("evaluation_intent must be one of smoke, mlperf, mAP" + (c->is_string() ? did_you_mean(*c, string_list(intents)) : std::string()));
      return;
    }
    s.plan["evaluation_intent"] = *c;
    s.reason("evaluation_intent", "onnx.evaluation_intent", "Your choice");
    return;
  }
  s.reason("evaluation_intent", "onnx.evaluation_intent", "smoke: a quick check against the float model");
}

// CalibMovingAverage averages per-batch min/max: Quark documents it for MinMax
// and says "In PowerOfTwoMethod calibration method, this should be set to
// False" (docs/source/onnx/appendix_full_quant_config_features.rst@1d27b558);
// its calibrators pass it only to MinMax and PowerOfTwo NonOverflow
// (calibration/calibrators.py _CALIB_METHOD_DEFAULTS, amd-quark 0.13).
void moving_average(PlanState& s) {
  const Json* p = preset(s);
  const Json& m = s.plan["calibration"]["method"];
  if (!p || !m.is_string()) return;
  Json extra = (*p)["extra_options"];
  for (auto& [k, v] : spec(s)["extra_options"].items()) extra[k] = v;
  if (!extra.value("CalibMovingAverage", false)) return;
  const std::string method = m.get<std::string>();
  const Json* cm = s.cat.onnx_calibration(method);
  const bool users = s.choice("onnx_specific.extra_options.CalibMovingAverage") != nullptr;
  const std::string whose = users ? "Your CalibMovingAverage" : "CalibMovingAverage (from " + (*p)["name"].get<std::string>() + ")";
  // Of the power-of-two methods only NonOverflow reads it (MinMSE's calibrator has no moving average).
  if (cm && (*cm)["power_of_two"].get<bool>() && method == "PowerOfTwo_NonOverflow") {
    const std::string msg = whose + " with " + method + ": Quark's documentation says \"In PowerOfTwoMethod calibration method, this should be set to False\" (a moving average of min/max under power-of-two rounding).";
    if (users) s.conflict("onnx.calibration.moving_average", "onnx_specific.extra_options.CalibMovingAverage", msg, "onnx_specific.extra_options.CalibMovingAverage=false");
    else s.risk("onnx.calibration.moving_average", "high", msg, "Set onnx_specific.extra_options.CalibMovingAverage=false, or calibrate with MinMax.");
    return;
  }
  if (method != "MinMax")
    s.risk("onnx.calibration.moving_average", "low",
           whose + " has no effect with " + method + ": Quark passes it only to MinMax and PowerOfTwo_NonOverflow calibration.",
           "Remove it, or calibrate with MinMax if the moving average is what you want.");
}

}  // namespace quarkplan::onnx_rules
