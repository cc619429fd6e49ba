// What verify's tests read from a result: one check by ID, its failures as
// "subject | expected | found" lines.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "common/json.h"

namespace qp_test {

inline const quarkplan::Json& check(const quarkplan::Json& v, const std::string& id) {
  for (const auto& c : v["checks"])
    if (c["id"] == id) return c;
  static quarkplan::Json none;
  ADD_FAILURE() << "no check " << id;
  return none;
}

inline std::string failures_of(const quarkplan::Json& v, const std::string& id) {
  std::string s;
  for (const auto& f : check(v, id)["failures"])
    s += f["subject"].get<std::string>() + " | " + f["expected"].get<std::string>() + " | " + f["found"].get<std::string>() + "\n";
  return s;
}

// The verification inside verify --json's output: the result itself when
// every promise was kept (exit 0), else the error object's copy.
inline quarkplan::Json verification_of(const std::string& out, int exit_code) {
  quarkplan::Json j = quarkplan::parse_json(out, "verify --json");
  return exit_code == 0 ? j : j["error"]["verification"];
}

}  // namespace qp_test
