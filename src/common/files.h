// Small file-system helpers: atomic writes, whole-file reads of small text
// files, and containment checks for paths a model file names.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace quarkplan {

// Writes `content` to `path` through a temporary file in the same directory and
// a rename, so an interrupted run never leaves a half-written file.
void write_file_atomic(const std::string& path, const std::string& content);

// Reads a small text file (configs, JSON artifacts). Refuses files above
// `max_bytes` so a hostile input cannot force an unbounded allocation.
std::string read_small_file(const std::string& path, uint64_t max_bytes = 64ull << 20);

// Resolves `relative` inside `folder`. Returns nullopt (and sets `why`) when the
// name is absolute, climbs out with "..", or is a symlink leading outside.
std::optional<std::filesystem::path> resolve_inside(const std::filesystem::path& folder,
                                                    const std::string& relative, std::string& why);

}  // namespace quarkplan
