#include "common/units.h"

#include <cstdio>

namespace quarkplan {

namespace {

// Three significant digits: 1.23, 12.3, 123.
std::string three_digits(double v, const char* unit) {
  char buf[48];
  if (v >= 100) std::snprintf(buf, sizeof buf, "%.0f %s", v, unit);
  else if (v >= 10) std::snprintf(buf, sizeof buf, "%.1f %s", v, unit);
  else std::snprintf(buf, sizeof buf, "%.2f %s", v, unit);
  return buf;
}

}  // namespace

std::string format_bytes(uint64_t bytes) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes) / 1024.0;
  int u = 0;
  // Move up a unit before rounding would print "1024".
  while (v >= 999.5 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  return three_digits(v, units[u]);
}

std::string with_commas(uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_params(uint64_t params) {
  if (params < 100000) return with_commas(params);
  double v = static_cast<double>(params);
  if (v >= 999.5e9) return three_digits(v / 1e12, "T");
  if (v >= 999.5e6) return three_digits(v / 1e9, "B");
  return three_digits(v / 1e6, "M");
}

}  // namespace quarkplan
