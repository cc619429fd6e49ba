#include "plan/fix_shapes.h"

#include <cctype>

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
    if (entry.empty()) {
      if (semi == std::string::npos && !out.empty()) break;  // a trailing ';'
      throw std::invalid_argument("FixShapes has an empty entry (expected name:[d0,d1,...] separated by ';')");
    }
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
    if (!trim(dims).empty()) {
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

}  // namespace quarkplan
