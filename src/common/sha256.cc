#include "common/sha256.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

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

std::string json_sha256(const Json& value, const char* skip) {
  nlohmann::json plain = nlohmann::json::parse(value.dump(-1, ' ', false, Json::error_handler_t::replace));  // std::map: sorted keys
  if (skip && plain.is_object()) plain.erase(skip);
  return sha256_hex(plain.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace quarkplan
