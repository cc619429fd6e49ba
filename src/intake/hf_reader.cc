#include "common/error.h"
#include "intake/model_reader.h"

namespace quarkplan {
std::unique_ptr<ModelReader> make_hf_reader(const std::string& directory) {
  throw InputError(directory, "Hugging Face model intake is not available in this build yet");
}
}  // namespace quarkplan
