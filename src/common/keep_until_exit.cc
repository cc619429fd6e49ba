#include "common/keep_until_exit.h"

#include <mutex>
#include <vector>

namespace quarkplan {

void keep_until_exit(std::shared_ptr<void> object) {
  static std::mutex mu;
  // Never destroyed: a static vector's destructor would free them at exit.
  static auto* kept = new std::vector<std::shared_ptr<void>>;
  std::lock_guard<std::mutex> lock(mu);
  kept->push_back(std::move(object));
}

}  // namespace quarkplan
