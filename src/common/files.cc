#include "common/files.h"

#include "common/json_scan.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "common/error.h"
#include "common/json.h"

namespace fs = std::filesystem;

namespace quarkplan {

namespace {

std::string temp_name_for(const fs::path& target) {
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::random_device rd;
  return (dir / ("." + target.filename().string() + ".tmp" + std::to_string(rd()))).string();
}

// Writes `content` to a new temporary file beside `path`; returns its name.
std::string write_temp(const std::string& path, const std::string& content) {
  std::string tmp = temp_name_for(fs::path(path));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(path, std::string("cannot write: ") + std::strerror(errno));
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw InputError(path, std::string("cannot write: ") + std::strerror(e));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  return tmp;
}

void rename_into_place(const std::string& tmp, const std::string& path) {
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw InputError(path, std::string("cannot write: ") + std::strerror(e));
  }
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
  rename_into_place(write_temp(path, content), path);
}

void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> temps;
  try {
    for (const auto& [path, content] : files) temps.push_back(write_temp(path, content));
  } catch (...) {
    for (const auto& t : temps) ::unlink(t.c_str());
    throw;
  }
  for (size_t i = 0; i < files.size(); ++i) rename_into_place(temps[i], files[i].first);
}

void check_output_path(const std::string& path) {
  if (path.empty()) throw InputError("", "the output path is empty: give a file name");
  fs::path p(path);
  std::error_code ec;
  auto st = fs::status(p, ec);
  if (fs::is_directory(st)) throw InputError(path, "is a folder: give a file name for the output");
  if (fs::exists(st) && !fs::is_regular_file(st)) throw InputError(path, "is not a regular file: refusing to replace it");
  if (!p.has_filename() || p.filename() == "." || p.filename() == "..") throw InputError(path, "names no file: give a file name for the output");
  fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  auto dst = fs::status(dir, ec);
  if (!fs::exists(dst)) throw InputError(path, "its folder " + dir.string() + " does not exist");
  if (!fs::is_directory(dst)) throw InputError(path, dir.string() + " is not a folder");
  // The only reliable test of "can a file be created here" (read-only mounts,
  // /proc, permissions, root) is to create one.
  std::string probe = temp_name_for(p);
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(path, "cannot create files in " + dir.string() + ": " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

bool remove_if_exists(const std::string& path) {
  std::error_code ec;
  return fs::remove(path, ec);
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec1, ec2;
  if (fs::exists(a, ec1) && fs::exists(b, ec2)) return fs::equivalent(a, b, ec1);
  fs::path ca = fs::weakly_canonical(fs::absolute(a), ec1), cb = fs::weakly_canonical(fs::absolute(b), ec2);
  return !ec1 && !ec2 && ca == cb;
}

namespace {
// UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, nothing past
// U+10FFFF. ASCII runs are the fast path.
bool valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const unsigned c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;  // the second byte's range
    if (c >= 0xC2 && c <= 0xDF) n = 1;
    else if (c == 0xE0) n = 2, lo = 0xA0;
    else if (c == 0xED) n = 2, hi = 0x9F;
    else if (c >= 0xE1 && c <= 0xEF) n = 2;
    else if (c == 0xF0) n = 3, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) n = 3;
    else if (c == 0xF4) n = 3, hi = 0x8F;
    else return false;
    if (static_cast<size_t>(end - p) <= n) return false;
    if (p[1] < lo || p[1] > hi) return false;
    for (size_t k = 2; k <= n; ++k)
      if (p[k] < 0x80 || p[k] > 0xBF) return false;
    p += n + 1;
  }
  return true;
}
}  // namespace

std::string artifact_kind(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return "";
  if (!fs::is_regular_file(path, ec)) return "other";
  if (fs::file_size(path, ec) == 0 && !ec) return "";  // an empty file holds nothing to lose
  std::string head;
  try {
    head = read_small_file(path, 512ull << 20);
  } catch (const InputError&) {
    return "other";
  }
  // A page `quarkplan report` wrote names its generator in its head.
  if (head.compare(0, 15, "<!DOCTYPE html>") == 0 && head.find("<meta name=\"generator\" content=\"quarkplan") < 2048) return "report";
  size_t i = head.find_first_not_of(" \t\r\n");
  if (i == std::string::npos) return "";
  if (head[i] != '{') return "other";
  // The top-level keys, each value skipped unread (an analysis of a 7,200-node
  // graph is 400 KB, and this runs before every write); the whole text must
  // still be well-formed JSON, in UTF-8, as a JSON parser would require.
  if (!valid_utf8(head)) return "other";
  std::set<std::string> keys;
  try {
    json_scan::Scanner sc(head);
    std::string scratch;
    sc.expect('{');
    if (!sc.consume('}')) {
      do {
        keys.emplace(sc.string(scratch));
        sc.expect(':');
        sc.skip(/*max_depth=*/1024);
      } while (sc.consume(','));
      sc.expect('}');
    }
    if (!sc.at_end()) return "other";
  } catch (const std::runtime_error&) {
    return "other";
  }
  auto has = [&](const char* k) { return keys.count(k) > 0; };
  if (has("requires_confirmation") && has("backend")) return "plan";
  if (has("model") && has("quantization_targets")) return "analysis";
  if (has("constraints") && has("workflow")) return "session";
  if (has("available_providers") || has("failure_reason")) return "install result";
  if (has("environment") && has("hardware")) return "env";
  return "other";
}

FileLock::FileLock(const std::string& lock_path) {
  std::error_code ec;
  fd_ = fs::is_directory(lock_path, ec) ? ::open(lock_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                        : ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError(lock_path, std::string("cannot create the lock file: ") + std::strerror(errno));
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    ::close(fd_);
    throw InputError(lock_path, std::string("cannot lock: ") + std::strerror(e));
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

std::string read_small_file(const std::string& path, uint64_t max_bytes) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw InputError(path, "no such file");
  if (!fs::is_regular_file(st)) throw InputError(path, "not a regular file");
  // Size and bytes come from one open file: a writer may rename a new version
  // into place between a stat of the path and the open (sessions are replaced
  // that way), and the two must never mix.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat fst {};
  if (::fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode)) {
    ::close(fd);
    throw InputError(path, "not a regular file");
  }
  uint64_t size = static_cast<uint64_t>(fst.st_size);
  if (size > max_bytes) {
    ::close(fd);
    throw InputError(path, "file is " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) +
                               " allowed for this kind of file");
  }
  std::string s(size, '\0');
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, s.data() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got != size) throw InputError(path, "short read");
  return s;
}

std::optional<fs::path> resolve_inside(const fs::path& folder, const std::string& relative,
                                       std::string& why) {
  if (relative.empty()) {
    why = "empty file name";
    return std::nullopt;
  }
  if (relative.find('\0') != std::string::npos) {
    why = "file name contains a NUL byte";
    return std::nullopt;
  }
  fs::path rel(relative);
  if (rel.is_absolute() || relative[0] == '/' || relative[0] == '\\') {
    why = "absolute path '" + relative + "' is not allowed";
    return std::nullopt;
  }
  for (const auto& part : rel) {
    if (part == "..") {
      why = "path '" + relative + "' climbs out of the model folder with '..'";
      return std::nullopt;
    }
  }
  std::error_code ec;
  fs::path base = fs::weakly_canonical(folder, ec);
  if (ec) base = fs::absolute(folder);
  fs::path joined = base / rel;
  if (fs::exists(fs::symlink_status(joined, ec)) || fs::exists(joined, ec)) {
    fs::path real = fs::weakly_canonical(joined, ec);
    if (!ec) {
      auto b = base.lexically_normal().string();
      auto r = real.lexically_normal().string();
      if (r.size() <= b.size() || r.compare(0, b.size(), b) != 0 || (r[b.size()] != '/')) {
        why = "'" + relative + "' is a link that leads outside the model folder";
        return std::nullopt;
      }
    }
  }
  return joined;
}

}  // namespace quarkplan
