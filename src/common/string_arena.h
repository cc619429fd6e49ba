// Bump storage for many small strings handed out as string_views, and the name
// hash both sides of the Hugging Face name matching use. DeepSeek-V3's
// structure has 92,000 tensor names of ~50 characters: one std::string each
// was 92,000 heap allocations (and frees) on the intake's critical path; here
// they fill a few 256 KiB blocks.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace quarkplan {

class StringArena {
 public:
  StringArena() = default;
  StringArena(StringArena&&) noexcept = default;
  StringArena& operator=(StringArena&&) noexcept = default;
  // Views into the blocks would dangle in a copy.
  StringArena(const StringArena&) = delete;
  StringArena& operator=(const StringArena&) = delete;

  // A stable copy of `s`, valid as long as the arena (moves included).
  std::string_view add(std::string_view s) {
    if (s.size() > left_) {
      const size_t size = s.size() > kBlock / 4 ? s.size() : kBlock;  // big strings get a block of their own
      blocks_.push_back(std::make_unique<char[]>(size));
      if (size == kBlock) {
        next_ = blocks_.back().get();
        left_ = kBlock;
      } else {
        std::memcpy(blocks_.back().get(), s.data(), s.size());
        return {blocks_.back().get(), s.size()};
      }
    }
    char* at = next_;
    if (!s.empty()) std::memcpy(at, s.data(), s.size());
    next_ += s.size();
    left_ -= s.size();
    return {at, s.size()};
  }

 private:
  static constexpr size_t kBlock = 256 * 1024;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;
  size_t left_ = 0;
};

// A fast 64-bit hash of a name, eight bytes at a time (tensor names are ASCII
// paths of 30-80 bytes; std::hash's byte loop was a visible share of matching).
inline uint64_t name_hash(std::string_view k) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ k.size();
  size_t i = 0;
  for (; i + 8 <= k.size(); i += 8) {
    uint64_t x;
    std::memcpy(&x, k.data() + i, 8);
    h = (h ^ x) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  uint64_t tail = 0;
  if (k.size() > i) std::memcpy(&tail, k.data() + i, k.size() - i);
  h = (h ^ tail) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 29);
}

}  // namespace quarkplan
