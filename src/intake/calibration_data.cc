#include "intake/calibration_data.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "common/error.h"
#include "common/mapped_file.h"
#include "intake/npy_reader.h"

namespace fs = std::filesystem;

namespace quarkplan {

namespace {

struct Input {
  std::string name, dtype;
  std::vector<Json> dims;  // ints (fixed) or strings (symbolic); empty when the shape is unknown
  bool has_shape = false;
  bool fixed_by_plan = false;  // dims from the plan's FixShapes
};

std::string shape_text(const std::vector<Json>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + (dims[i].is_number() ? std::to_string(dims[i].get<int64_t>()) : dims[i].is_string() ? dims[i].get<std::string>() : "?");
  return s + "]";
}

std::string shape_text(const std::vector<uint64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

// The .npy files of a folder, sorted (Quark lists them with os.listdir).
std::vector<std::string> npy_files(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.size() > 4 && n.ends_with(".npy")) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

npy::Header read_npy(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) throw InputError(file.string(), "not a regular file");
  MappedFile m(file.string());
  try {
    return npy::parse_header(m.bytes().substr(0, std::min<uint64_t>(m.size(), 1u << 20)), m.size());
  } catch (const std::exception& e) {
    throw InputError(file.string(), std::string("unreadable calibration array: ") + e.what());
  }
}

// Quark's load_npy_data shape rules for one array against one input.
void check_shape(const fs::path& file, const npy::Header& h, const Input& in) {
  if (!in.has_shape) return;  // Quark then asks the session; nothing to compare here
  std::vector<uint64_t> shape = h.shape;
  bool all_fixed = std::all_of(in.dims.begin(), in.dims.end(), [](const Json& d) { return d.is_number_integer() && d.get<int64_t>() > 0; });
  uint64_t prod = 1;
  for (const auto& d : in.dims) prod *= d.is_number_integer() && d.get<int64_t>() > 0 ? static_cast<uint64_t>(d.get<int64_t>()) : 1;
  uint64_t n = 1;
  for (auto d : shape) n *= d;
  if (shape.size() == 1 && all_fixed && n == prod) return;  // reshaped to the input's shape
  if (shape.size() != in.dims.size()) {
    if (shape.size() + 1 == in.dims.size()) shape.insert(shape.begin(), 1);  // a batch of one added
    else
      throw InputError(file.string(), "array of shape " + shape_text(h.shape) + " for input '" + in.name + "' of shape " + shape_text(in.dims) +
                                          ": Quark needs the input's rank (" + std::to_string(in.dims.size()) + "), one less (a batch of one is added)" +
                                          (all_fixed ? ", or a 1-D array of its " + std::to_string(prod) + " elements" : std::string(" (a 1-D array is reshaped only for an input whose dimensions are all fixed)")));
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    const Json& d = in.dims[i];
    if (d.is_number_integer() && d.get<int64_t>() > 0 && shape[i] != static_cast<uint64_t>(d.get<int64_t>()))
      throw InputError(file.string(), "array of shape " + shape_text(h.shape) + " does not fit input '" + in.name + "' of shape " + shape_text(in.dims) +
                                          " (dimension " + std::to_string(i) + " is " + std::to_string(shape[i]) + ", " +
                                          (in.fixed_by_plan ? std::string("the plan's FixShapes sets it to ") : std::string("the model fixes it at ")) + std::to_string(d.get<int64_t>()) + ")");
  }
}

}  // namespace

Json inspect_calibration_data(const std::string& path, const Json& analysis, const std::map<std::string, std::vector<int64_t>>& fixed) {
  std::vector<Input> inputs;
  const Json& ins = analysis.is_object() && analysis.contains("model") && analysis["model"].is_object() && analysis["model"].contains("onnx_specific")
                        ? analysis["model"]["onnx_specific"].value("inputs", Json::array())
                        : Json::array();
  for (const auto& i : ins) {
    if (!i.is_object() || !i.contains("name") || !i["name"].is_string()) continue;
    Input in;
    in.name = i["name"].get<std::string>();
    in.dtype = i.contains("dtype") && i["dtype"].is_string() ? i["dtype"].get<std::string>() : "";
    if (i.contains("shape") && i["shape"].is_array()) {
      in.has_shape = true;
      for (const auto& d : i["shape"]) in.dims.push_back(d);
    }
    // FixShapes runs before Quark feeds the set to the model: its shape counts.
    // (One of another rank is the plan's rules' to refuse, not this check's.)
    if (auto it = fixed.find(in.name); it != fixed.end() && (!in.has_shape || it->second.size() == in.dims.size())) {
      in.has_shape = true;
      in.dims.clear();
      for (int64_t d : it->second) in.dims.push_back(d);
      in.fixed_by_plan = true;
    }
    inputs.push_back(std::move(in));
  }
  fs::path root(path);
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    throw InputError(path, "Quark's PathDataReader reads a folder of .npy arrays, not a file: give the folder that holds " +
                               std::string(inputs.size() > 1 ? "one subfolder per input" : "the .npy files"));
  std::string expected_layout;
  if (inputs.size() <= 1) expected_layout = path + "/*.npy (one array per sample)";
  else {
    for (const auto& in : inputs) expected_layout += (expected_layout.empty() ? "" : ", ") + path + "/" + in.name + "/*.npy";
    expected_layout += " (the same file names in every folder: one sample each)";
  }
  std::vector<std::string> shared = npy_files(root);
  Json record = {{"path", path}, {"reader", "quark.onnx PathDataReader"}};
  Json per_input = Json::array();
  uint64_t samples = 0;
  if (!shared.empty()) {
    if (inputs.size() > 1)
      throw InputError(path, "holds .npy files directly, which Quark feeds to every one of the model's " + std::to_string(inputs.size()) +
                                 " inputs: lay them out as " + expected_layout);
    record["layout"] = "shared";
    samples = shared.size();
  } else {
    record["layout"] = "per_input";
  }
  // PathDataReader takes each input's shape from the session; a scalar input
  // has none, and Quark raises "Cannot get the input shape of the model."
  for (const auto& in : inputs)
    if (in.has_shape && in.dims.empty())
      throw InputError(path, "the model's input '" + in.name + "' is a scalar, for which Quark's PathDataReader cannot read calibration data (it raises \"Cannot get the input shape of the model.\"): "
                             "calibrate with a CalibrationDataReader of your own instead of a folder");
  uint64_t total_bytes = 0, max_batch = 1;
  std::vector<std::string> first_names;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Input& in = inputs[k];
    fs::path dir = shared.empty() ? root / in.name : root;
    std::vector<std::string> files = shared.empty() ? std::vector<std::string>{} : shared;
    if (shared.empty()) {
      if (!fs::is_directory(dir, ec))
        throw InputError(path, "has no .npy files" + std::string(inputs.size() > 1 ? "" : " and no folder '" + in.name + "'") + (inputs.size() > 1 ? " for input '" + in.name + "'" : "") +
                                   ": Quark's PathDataReader expects " + expected_layout);
      files = npy_files(dir);
      if (files.empty()) throw InputError(dir.string(), "holds no .npy files: Quark's PathDataReader expects " + expected_layout);
      if (k == 0) {
        first_names = files;
        samples = files.size();
      } else if (files != first_names) {
        std::vector<std::string> missing;
        std::set_symmetric_difference(files.begin(), files.end(), first_names.begin(), first_names.end(), std::back_inserter(missing));
        throw InputError(dir.string(), "holds other file names than " + (root / inputs[0].name).string() + " (e.g. " + missing.front() +
                                           "): Quark pairs the arrays of one sample by file name, so every input folder needs the same names");
      }
    }
    std::set<std::string> dtypes;
    for (const auto& f : files) {
      npy::Header h = read_npy(dir / f);
      if (std::find(h.shape.begin(), h.shape.end(), 0) != h.shape.end())
        throw InputError((dir / f).string(), "array of shape " + shape_text(h.shape) + " holds no data (a dimension is 0): every file is one sample for input '" + in.name + "'");
      std::string dtype = npy::onnx_dtype_name(h);
      if (dtype.empty() && h.kind == 'c') dtype = h.item_bytes == 8 ? "complex64" : "complex128";  // cast by Quark, the imaginary part dropped
      if (dtype.empty())
        throw InputError((dir / f).string(), "dtype '" + h.descr + "' cannot be cast to input '" + in.name + "' (" + in.dtype + ")");
      check_shape(dir / f, h, in);
      dtypes.insert(dtype);
      total_bytes += h.data_bytes;
      // An array of exactly the input's fixed leading dimension is one sample (Silero's state [2, 1, 128]
      // leads with its 2 layers); else its leading dimension is a batch.
      const bool lead_is_the_models = !in.dims.empty() && in.dims[0].is_number_integer() && !h.shape.empty() &&
                                      static_cast<uint64_t>(in.dims[0].get<int64_t>()) == h.shape[0];
      uint64_t lead = h.shape.empty() || lead_is_the_models ? 1 : h.shape.size() == in.dims.size() ? h.shape[0] : 1;
      max_batch = std::max(max_batch, lead);
    }
    Json casts = Json::array();
    for (const auto& d : dtypes)
      if (!in.dtype.empty() && d != in.dtype) casts.push_back(d);
    per_input.push_back({{"name", in.name},
                         {"folder", dir.string()},
                         {"files", files.size()},
                         {"dtypes", std::vector<std::string>(dtypes.begin(), dtypes.end())},
                         {"input_dtype", in.dtype},
                         {"cast_from", casts}});
  }
  if (inputs.empty()) {
    // Nothing to compare against (an analysis without inputs): count what is there.
    record["layout"] = shared.empty() ? "unknown" : "shared";
  }
  record["samples"] = samples;
  record["bytes"] = total_bytes;        // what Quark's reader loads into memory, all of it
  record["largest_batch"] = max_batch;  // the leading dimension of the largest array
  record["inputs"] = per_input;
  return record;
}

}  // namespace quarkplan
