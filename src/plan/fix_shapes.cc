#include "plan/fix_shapes.h"
#include "plan/plan_request.h"

#include <cctype>
#include <set>

namespace quarkplan {

namespace {

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

}  // namespace

std::vector<FixedShape> parse_fix_shapes(const std::string& text) {
  if (text.size() > 65536) throw std::invalid_argument("FixShapes is longer than 64 KiB");
  std::vector<FixedShape> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t semi = text.find(';', start);
    std::string entry = trim(text.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
    start = semi == std::string::npos ? text.size() + 1 : semi + 1;
    // Quark splits on every ';' and reads each piece as name:[...]: an empty
    // piece (a trailing ';' too) stops it with an IndexError.
    if (entry.empty())
      throw std::invalid_argument(semi == std::string::npos && !out.empty()
                                      ? "FixShapes ends with ';', which Quark reads as one more, empty entry (remove the trailing ';')"
                                      : "FixShapes has an empty entry (expected name:[d0,d1,...] separated by ';')");
    // Names may hold ':' (e.g. onnx::Flatten_0): the shape starts at the '['
    // after the last ':'.
    size_t open = entry.rfind('[');
    size_t colon = open == std::string::npos ? std::string::npos : entry.rfind(':', open);
    if (colon == std::string::npos || entry.back() != ']' || !trim(entry.substr(colon + 1, open - colon - 1)).empty() ||
        trim(entry.substr(0, colon)).empty())
      throw std::invalid_argument("FixShapes entry '" + entry + "' is not name:[d0,d1,...]");
    FixedShape fs;
    fs.name = trim(entry.substr(0, colon));
    std::string dims = entry.substr(open + 1, entry.size() - open - 2);
    size_t p = 0;
    // Quark reads '[]' as int(''), which fails: a scalar has no FixShapes form.
    if (trim(dims).empty())
      throw std::invalid_argument("FixShapes entry '" + fs.name + "' has an empty shape '[]', which Quark cannot read (it parses each dimension as an integer)");
    {
      while (p <= dims.size()) {
        size_t comma = dims.find(',', p);
        std::string d = trim(dims.substr(p, comma == std::string::npos ? std::string::npos : comma - p));
        p = comma == std::string::npos ? dims.size() + 1 : comma + 1;
        if (d.empty() || d.size() > 18 || d.find_first_not_of("0123456789") != std::string::npos)
          throw std::invalid_argument("FixShapes entry '" + fs.name + "': dimension '" + d + "' is not a positive integer");
        int64_t v = std::stoll(d);
        if (v <= 0) throw std::invalid_argument("FixShapes entry '" + fs.name + "': dimension " + d + " must be at least 1");
        fs.dims.push_back(v);
        if (fs.dims.size() > 64) throw std::invalid_argument("FixShapes entry '" + fs.name + "' has more than 64 dimensions");
      }
    }
    for (const auto& o : out)
      if (o.name == fs.name) throw std::invalid_argument("FixShapes names '" + fs.name + "' twice");
    out.push_back(std::move(fs));
  }
  return out;
}

bool ShapeSlot::dynamic() const {
  if (!shaped) return true;
  for (int64_t d : dims)
    if (d <= 0) return true;
  return false;
}

std::string ShapeSlot::text() const {
  if (!shaped) return name + ":[?]";
  std::string s;
  for (int64_t d : dims) s += (s.empty() ? "" : ",") + (d > 0 ? std::to_string(d) : std::string("?"));
  return name + ":[" + s + "]";
}

namespace {

ShapeSlot slot_of(const Json& io, bool output) {
  ShapeSlot s;
  s.name = io.value("name", "");
  s.output = output;
  const Json& shape = io.contains("shape") ? io["shape"] : Json();
  s.shaped = shape.is_array();
  if (s.shaped)
    for (const auto& d : shape) s.dims.push_back(d.is_number_integer() && d.get<int64_t>() > 0 ? d.get<int64_t>() : -1);
  return s;
}

// convert_nchw_to_nhwc converts a 4-D tensor only when C, H and W are integers.
bool nhwc_converts(const ShapeSlot& s) { return s.shaped && s.dims.size() == 4 && s.dims[1] > 0 && s.dims[2] > 0 && s.dims[3] > 0; }

}  // namespace

std::vector<ShapeSlot> fix_shapes_slots(const Json& facts, bool convert_nhwc) {
  std::vector<ShapeSlot> out;
  std::set<std::string> node_names;
  if (convert_nhwc && facts.contains("node_names") && facts["node_names"].is_array())
    for (const auto& n : facts["node_names"])
      if (n.is_string()) node_names.insert(n.get<std::string>());
  for (const char* key : {"inputs", "outputs"}) {
    if (!facts.contains(key) || !facts[key].is_array()) continue;
    bool output = std::string(key) == "outputs";
    for (const auto& io : facts[key]) {
      ShapeSlot s = slot_of(io, output);
      if (convert_nhwc && nhwc_converts(s)) {
        s.dims = {s.dims[0], s.dims[2], s.dims[3], s.dims[1]};
        if (output) {  // the Transpose's output becomes the graph output
          std::string t = s.name + "_transpose";
          for (int count = 1; node_names.count(t); ++count) t += "_" + std::to_string(count);
          s.name = t;
        }
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<std::string> nhwc_skipped_inputs(const Json& facts) {
  std::vector<std::string> out;
  if (!facts.contains("inputs") || !facts["inputs"].is_array()) return out;
  for (const auto& io : facts["inputs"]) {
    ShapeSlot s = slot_of(io, false);
    if (s.shaped && s.dims.size() == 4 && !nhwc_converts(s)) out.push_back(s.text());
  }
  return out;
}

std::string format_fix_shapes(const std::vector<FixedShape>& shapes) {
  std::string s;
  for (const auto& f : shapes) {
    if (!s.empty()) s += ";";
    s += f.name + ":[";
    for (size_t i = 0; i < f.dims.size(); ++i) s += (i ? "," : "") + std::to_string(f.dims[i]);
    s += "]";
  }
  return s;
}

std::map<std::string, std::vector<int64_t>> fix_shapes_choice(const PlanRequest& req) {
  std::map<std::string, std::vector<int64_t>> out;
  const Json* c = req.choice("onnx_specific.extra_options.FixShapes");
  if (!c) {
    if (const Json* e = req.choice("onnx_specific.extra_options"); e && e->is_object() && e->contains("FixShapes")) c = &(*e)["FixShapes"];
  }
  if (!c || !c->is_string()) return out;
  try {
    for (auto& f : parse_fix_shapes(c->get<std::string>())) out[f.name] = f.dims;
  } catch (const std::invalid_argument&) {
  }
  return out;
}

}  // namespace quarkplan
