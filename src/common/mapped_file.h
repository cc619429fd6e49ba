// A read-only memory map of a whole file, exposed as a std::string_view.
// Readers parse through views into the map and never copy weight bytes, so the
// pages holding tensor data are never touched (peak memory does not grow with
// model size).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace quarkplan {

class MappedFile {
 public:
  // Throws InputError naming `path` when it cannot be opened or mapped.
  // `whole_read`: the file will be read from start to end (an index, a
  // config), so its pages are mapped up front instead of one fault at a time.
  explicit MappedFile(const std::string& path, bool whole_read = false);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {data_, size_}; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const char* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace quarkplan
