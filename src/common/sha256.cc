#include "common/sha256.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "common/error.h"

namespace quarkplan {

namespace {

struct Ctx {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  Ctx() {
    // No openssl.cnf: a digest needs no configuration, and loading it is most
    // of the first call's cost.
    static const bool inited = OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr) == 1;
    if (!inited || !ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) throw std::runtime_error("OpenSSL SHA-256 is unavailable");
  }
  ~Ctx() { EVP_MD_CTX_free(ctx); }
  void update(const void* p, size_t n) {
    if (EVP_DigestUpdate(ctx, p, n) != 1) throw std::runtime_error("OpenSSL SHA-256 update failed");
  }
  std::string hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx, md, &len) != 1) throw std::runtime_error("OpenSSL SHA-256 final failed");
    static const char* digits = "0123456789abcdef";
    std::string out(len * 2, '0');
    for (unsigned i = 0; i < len; ++i) {
      out[2 * i] = digits[md[i] >> 4];
      out[2 * i + 1] = digits[md[i] & 15];
    }
    return out;
  }
};

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  Ctx c;
  c.update(bytes.data(), bytes.size());
  return c.hex();
}

std::string sha256_file_prefix(const std::string& path, uint64_t max_bytes, uint64_t& hashed, uint64_t& size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, std::string("cannot read: ") + std::strerror(errno));
  std::unique_ptr<int, void (*)(int*)> guard(&fd, [](int* f) { ::close(*f); });
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) throw InputError(path, "not a regular file");
  size = static_cast<uint64_t>(st.st_size);
  Ctx c;
  std::vector<char> buf(1 << 16);
  hashed = 0;
  while (hashed < max_bytes) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), max_bytes - hashed));
    ssize_t n = ::read(fd, buf.data(), want);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError(path, std::string("cannot read: ") + std::strerror(errno));
    }
    if (n == 0) break;
    c.update(buf.data(), static_cast<size_t>(n));
    hashed += static_cast<uint64_t>(n);
  }
  return c.hex();
}

namespace {

// A string or key as nlohmann's dump writes it. Most are printable ASCII with
// nothing to escape, which dump leaves as they are: those are appended
// directly; anything else (escapes, UTF-8, invalid bytes) goes through dump, so
// the text is nlohmann's byte for byte either way. (A Json and a serializer
// per string were a third of the digest of a 7,200-node ONNX analysis.)
void append_string(std::string_view s, std::string& out) {
  bool plain = true;
  for (unsigned char c : s)
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') { plain = false; break; }
  if (plain) {
    out += '"';
    out += s;
    out += '"';
  } else {
    out += Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

// The compact dump with every object's keys in byte order (what a std::map
// document dumps), written directly: the earlier dump -> parse -> dump took
// 12 % of an ONNX intake for a 300 KB analysis.
void canonical_dump(const Json& v, std::string& out, const char* skip) {
  if (v.is_object()) {
    std::vector<std::pair<std::string_view, const Json*>> items;
    items.reserve(v.size());
    for (auto it = v.begin(); it != v.end(); ++it)
      if (!skip || it.key() != skip) items.emplace_back(it.key(), &it.value());
    std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    out += '{';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += ',';
      append_string(items[i].first, out);
      out += ':';
      canonical_dump(*items[i].second, out, nullptr);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += ',';
      canonical_dump(v[i], out, nullptr);
    }
    out += ']';
  } else if (v.is_string()) {
    append_string(v.get_ref<const std::string&>(), out);
  } else if (v.is_boolean()) {
    out += v.get<bool>() ? "true" : "false";
  } else if (v.is_null()) {
    out += "null";
  } else if (v.is_number_integer()) {  // signed and unsigned: decimal digits, as dump writes them
    out += v.is_number_unsigned() ? std::to_string(v.get<uint64_t>()) : std::to_string(v.get<int64_t>());
  } else {
    out += v.dump(-1, ' ', false, Json::error_handler_t::replace);  // floats: nlohmann's shortest form
  }
}

}  // namespace

std::string json_sha256(const Json& value, const char* skip) {
  std::string out;
  canonical_dump(value, out, skip);
  return sha256_hex(out);
}

}  // namespace quarkplan
