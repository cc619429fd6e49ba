#include "common/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "common/error.h"

namespace fs = std::filesystem;

namespace quarkplan {

void write_file_atomic(const std::string& path, const std::string& content) {
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::random_device rd;
  std::string tmp = (dir / ("." + target.filename().string() + ".tmp" + std::to_string(rd()))).string();
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
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw InputError(path, std::string("cannot write: ") + std::strerror(e));
  }
}

std::string read_small_file(const std::string& path, uint64_t max_bytes) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw InputError(path, "no such file");
  if (!fs::is_regular_file(st)) throw InputError(path, "not a regular file");
  auto size = fs::file_size(path, ec);
  if (ec) throw InputError(path, "cannot read size");
  if (size > max_bytes)
    throw InputError(path, "file is " + std::to_string(size) + " bytes, more than the " +
                               std::to_string(max_bytes) + " allowed for this kind of file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open");
  std::string s(size, '\0');
  in.read(s.data(), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size) throw InputError(path, "short read");
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
