// The values a model structure is computed from: config.json values by path,
// shown briefly in errors, and the catalog's integer expressions over the
// structure's variables ("heads*hd", "cdiv(out,128)").
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "common/json.h"
#include "intake/hf_config.h"

namespace quarkplan::structure_detail {

using Vars = std::map<std::string, int64_t, std::less<>>;

// An expression of the catalog (a string, or an integer as it is) over `vars`.
int64_t eval_json(const Json& e, const Vars& vars, const std::string& file);

// A config value for an error message, cut to 40 characters.
std::string show(const Json& v);

// A value at `path` ("a.b"; a leading '/' starts at the top of config.json,
// else the language model's sub-config first, then the top).
const Json* lookup(const hf::Config& cfg, const std::string& path);

}  // namespace quarkplan::structure_detail
