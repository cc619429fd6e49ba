// Small file-system helpers: atomic writes, whole-file reads of small text
// files, and containment checks for paths a model file names.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace quarkplan {

// Writes `content` to `path` through a temporary file in the same directory and
// a rename, so an interrupted run never leaves a half-written file.
void write_file_atomic(const std::string& path, const std::string& content);

// Checks, before anything is written, that `path` can receive a file written
// by write_file_atomic: not empty, not a folder or a device, its folder exists
// and accepts new files (probed with a temporary file that is removed at
// once). Throws InputError naming `path` and the problem.
void check_output_path(const std::string& path);

// Writes several files as one step: every temporary file is written first, then
// they are renamed in order. A failure before the renames leaves nothing.
void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files);

// Removes `path` when it exists (a stale artifact); false when it was absent.
bool remove_if_exists(const std::string& path);

// An exclusive advisory lock (flock) on `lock_path`, created when missing, held
// for the object's lifetime. Serialises read-modify-write cycles of a shared
// file across processes; the lock file stays (removing it would race).
// Whether two paths name the same file, existing or not (a/./b.json and
// a/b.json, links): outputs of one command must never overwrite each other.
bool same_file(const std::string& a, const std::string& b);

// What a file on disk is: "plan", "analysis", "session", "env", "install
// result", "report" (a page quarkplan wrote), "other" (anything else: a
// model's config.json, a README) or "" (nothing there, or an empty file). An
// output path that holds anything but what the command writes is refused
// rather than overwritten.
std::string artifact_kind(const std::string& path);

// An exclusive advisory lock (flock) held for the object's lifetime. On a
// folder, the folder itself is locked (no lock file is left behind).
class FileLock {
 public:
  explicit FileLock(const std::string& lock_path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

// Reads a small text file (configs, JSON artifacts). Refuses files above
// `max_bytes` so a hostile input cannot force an unbounded allocation.
std::string read_small_file(const std::string& path, uint64_t max_bytes = 64ull << 20);

// Resolves `relative` inside `folder`. Returns nullopt (and sets `why`) when the
// name is absolute, climbs out with "..", or is a symlink leading outside.
std::optional<std::filesystem::path> resolve_inside(const std::filesystem::path& folder,
                                                    const std::string& relative, std::string& why);

}  // namespace quarkplan
