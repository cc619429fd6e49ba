// SHA-256 digests (OpenSSL) for the integrity records that tie a plan to its
// analysis and its model (plan/integrity.h).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json.h"

namespace quarkplan {

// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

// SHA-256 of a JSON value with its object keys sorted, so the digest does not
// depend on the order a tool or an editor wrote them in; `skip` (a top-level
// key) is left out, for a record that carries its own digest.
std::string json_sha256(const Json& value, const char* skip = nullptr);

// SHA-256 of the first `max_bytes` of the file at `path` (the whole file when
// it is smaller); `hashed` receives how many bytes were hashed and `size` the
// file size. Throws InputError naming the file when it cannot be read.
std::string sha256_file_prefix(const std::string& path, uint64_t max_bytes, uint64_t& hashed, uint64_t& size);

}  // namespace quarkplan
