// The expansion of the catalog's items into the structure: the build context
// shared by both passes (count, then materialise), and one item (with the
// fragments it uses) expanded into tensors and Linear modules.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "common/json.h"
#include "intake/hf_config.h"
#include "intake/model_structure.h"
#include "intake/structure/config_values.h"

namespace quarkplan::structure_detail {

// The part a catalog "part" names ("mtp", "vision", ...; language otherwise).
Part part_of(const std::string& s);

struct Item;
struct Ctx {
  const hf::Config& cfg;
  const Json& family;
  const Json& catalog;
  const std::string& file;
  Vars vars;
  bool count_only = true;
  uint64_t count = 0;
  uint64_t modules = 0;  // counted in the first pass, to reserve
  uint64_t max_tensors = 0;
  ModelStructure* out = nullptr;
  std::map<std::string, Part> part_of_shape;  // for classify
  std::string scratch;                        // joined()'s buffer
};

// Expands one catalog item (and fragments it uses) at `prefix` for one layer.
void expand(Ctx& c, const Json& item, const std::string& prefix, const std::set<std::string>& tags, Part part,
            const std::string& inherited_role);

}  // namespace quarkplan::structure_detail
