#include "intake/safetensors_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "common/error.h"
#include "common/mapped_file.h"
#include "common/json_scan.h"

namespace quarkplan::safetensors {

uint32_t dtype_bits(std::string_view d) {
  if (d == "F64" || d == "I64" || d == "U64" || d == "C64") return 64;
  if (d == "F32" || d == "I32" || d == "U32") return 32;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 16;
  if (d == "F8_E4M3" || d == "F8_E5M2" || d == "F8_E4M3FNUZ" || d == "F8_E5M2FNUZ" || d == "F8_E8M0" ||
      d == "I8" || d == "U8" || d == "BOOL")
    return 8;
  if (d == "F6_E2M3" || d == "F6_E3M2") return 6;
  if (d == "F4" || d == "F4_E2M1" || d == "I4" || d == "U4") return 4;
  return 0;
}

std::string dtype_display(std::string_view d) {
  static const std::map<std::string_view, std::string> names = {
      {"F64", "float64"}, {"F32", "float32"}, {"F16", "float16"}, {"BF16", "bfloat16"},
      {"I64", "int64"}, {"I32", "int32"}, {"I16", "int16"}, {"I8", "int8"}, {"U64", "uint64"},
      {"U32", "uint32"}, {"U16", "uint16"}, {"U8", "uint8"}, {"BOOL", "bool"}, {"C64", "complex64"},
      {"F8_E4M3", "float8_e4m3fn"}, {"F8_E5M2", "float8_e5m2"}, {"F8_E4M3FNUZ", "float8_e4m3fnuz"},
      {"F8_E5M2FNUZ", "float8_e5m2fnuz"}, {"F8_E8M0", "float8_e8m0fnu"}, {"F6_E2M3", "float6_e2m3"},
      {"F6_E3M2", "float6_e3m2"}, {"F4", "float4_e2m1"}, {"F4_E2M1", "float4_e2m1"}, {"I4", "int4"}, {"U4", "uint4"}};
  auto it = names.find(d);
  return it == names.end() ? std::string(d) : it->second;
}

namespace {

// A string that outlives the scanner's scratch buffer.
std::string_view keep(std::string_view v, const std::string& scratch, HeaderView& h) {
  if (v.data() != scratch.data()) return v;  // a view into the file
  h.escaped.emplace_back(v);
  return h.escaped.back();
}

// The entry every writer produces, {"dtype":"BF16","shape":[4096,4096],
// "data_offsets":[0,33554432]}, read in one pass without the general
// scanner. Anything else (other field order, whitespace, escapes, 19+ digit
// numbers) returns false with nothing consumed, and the general path runs.
bool fast_entry(std::string_view s, size_t& pos, TensorView& t, std::vector<uint64_t>& dims) {
  size_t p = pos;
  const size_t n = s.size();
  // Each call passes a literal: after inlining, a fixed-size compare the
  // compiler expands in place (string_view::compare was a libc call per key).
  auto lit = [&](std::string_view l) {
    if (n - p < l.size() || std::memcmp(s.data() + p, l.data(), l.size()) != 0) return false;
    p += l.size();
    return true;
  };
  auto num = [&](uint64_t& v) {
    size_t start = p;
    v = 0;
    if (n - p >= 8) {  // eight digits at a step (offsets have 8-11)
      uint64_t chunk;
      std::memcpy(&chunk, s.data() + p, 8);
      if (json_scan::Scanner::eight_digits(chunk)) {
        v = json_scan::Scanner::eight_digit_value(chunk);
        p += 8;
      }
    }
    for (unsigned d; p < n && p - start < 18 && (d = static_cast<unsigned>(static_cast<unsigned char>(s[p])) - '0') <= 9; ++p) v = v * 10 + d;
    return p > start && p - start < 18 && p < n && s[p] != '.' && s[p] != 'e' && s[p] != 'E';
  };
  if (!lit("{\"dtype\":\"")) return false;
  size_t q = p;
  while (q < n && s[q] != '"' && s[q] != '\\' && static_cast<unsigned char>(s[q]) >= 0x20) ++q;
  if (q >= n || s[q] != '"') return false;
  std::string_view dtype = s.substr(p, q - p);
  p = q + 1;
  if (!lit(",\"shape\":[")) return false;
  const size_t mark = dims.size();
  uint32_t ndim = 0;
  auto undo = [&] {
    dims.resize(mark);
    return false;
  };
  if (p < n && s[p] == ']') {
    ++p;
  } else {
    while (true) {
      uint64_t v;
      if (ndim == 64 || !num(v)) return undo();
      dims.push_back(v);
      ++ndim;
      if (p < n && s[p] == ',') {
        ++p;
        continue;
      }
      if (!lit("]")) return undo();
      break;
    }
  }
  uint64_t b, e;
  if (!lit(",\"data_offsets\":[") || !num(b) || !lit(",") || !num(e) || !lit("]}")) return undo();
  t.dtype = dtype;
  t.ndim = ndim;
  t.begin = b;
  t.end = e;
  pos = p;
  return true;
}

}  // namespace

void parse_view(std::string_view bytes, HeaderView& h) { parse_view(bytes, bytes.size(), h); }

void parse_view(std::string_view bytes, uint64_t file_size, HeaderView& h) {
  if (file_size < 8 || bytes.size() < 8) throw std::runtime_error("file is " + std::to_string(file_size) + " bytes: too short for a safetensors header");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  if (n > kMaxHeaderBytes)
    throw std::runtime_error("header length " + std::to_string(n) + " is larger than the 100 MB limit");
  if (n > file_size - 8)
    throw std::runtime_error("header length " + std::to_string(n) + " runs past the end of the file (" +
                             std::to_string(file_size - 8) + " bytes left)");
  if (n > bytes.size() - 8) throw std::runtime_error("the header was not read whole");
  h.header_bytes = n;
  h.data_bytes = file_size - 8 - n;
  std::string_view text = bytes.substr(8, n);
  json_scan::Scanner sc(text);
  std::string key_buf, val_buf;
  h.tensors.reserve(n / 96);  // ~100 header bytes per tensor in real checkpoints
  h.dims.reserve(n / 48);
  sc.expect('{');
  std::string_view last_dtype;
  uint32_t last_bits = 0;
  if (!sc.consume('}')) {
    do {
      std::string_view name = keep(sc.string(key_buf), key_buf, h);
      sc.expect(':');
      if (name == "__metadata__") {
        sc.expect('{');
        if (!sc.consume('}')) {
          do {
            std::string_view k = keep(sc.string(key_buf), key_buf, h);
            sc.expect(':');
            if (sc.peek() == '"') h.metadata.emplace_back(k, keep(sc.string(val_buf), val_buf, h));
            else sc.skip();
          } while (sc.consume(','));
          sc.expect('}');
        }
        continue;
      }
      TensorView t;
      t.name = name;
      t.dims_at = static_cast<uint32_t>(h.dims.size());
      bool have_dtype = false, have_shape = false, have_offsets = false;
      if (size_t at = sc.position(); fast_entry(sc.text(), at, t, h.dims)) {
        sc.seek(at);
        have_dtype = have_shape = have_offsets = true;
      } else if (sc.expect('{'), !sc.consume('}')) {
        do {
          std::string_view field = sc.string(key_buf);
          sc.expect(':');
          if (field == "dtype") {
            t.dtype = keep(sc.string(val_buf), val_buf, h);
            have_dtype = true;
          } else if (field == "shape") {
            if (have_shape) sc.fail("tensor '" + std::string(t.name) + "' has two shapes");
            sc.expect('[');
            if (!sc.consume(']')) {
              do {
                if (t.ndim >= 64) sc.fail("tensor '" + std::string(t.name) + "' has more than 64 dimensions");
                h.dims.push_back(sc.u64("a dimension"));
                ++t.ndim;
              } while (sc.consume(','));
              sc.expect(']');
            }
            have_shape = true;
          } else if (field == "data_offsets") {
            sc.expect('[');
            t.begin = sc.u64("data_offsets");
            sc.expect(',');
            t.end = sc.u64("data_offsets");
            sc.expect(']');
            have_offsets = true;
          } else {
            sc.skip();
          }
        } while (sc.consume(','));
        sc.expect('}');
      }
      if (!have_dtype || !have_shape || !have_offsets)
        throw std::runtime_error("tensor '" + std::string(t.name) + "' lacks dtype, shape or data_offsets");
      // Neighbouring tensors share a dtype: the last one's width is reused.
      if (t.dtype != last_dtype) {
        last_dtype = t.dtype;
        last_bits = dtype_bits(t.dtype);
      }
      const uint32_t bits = last_bits;
      if (bits == 0) throw std::runtime_error("tensor '" + std::string(t.name) + "' has unknown dtype '" + std::string(t.dtype) + "'");
      t.numel = 1;
      for (uint32_t d = 0; d < t.ndim; ++d) {
        uint64_t dim = h.dims[t.dims_at + d];
        if (dim != 0 && t.numel > UINT64_MAX / dim / 8) throw std::runtime_error("tensor '" + std::string(t.name) + "' dimensions overflow");
        t.numel *= dim;
      }
      if (t.begin > t.end) throw std::runtime_error("tensor '" + std::string(t.name) + "' has data_offsets that run backwards");
      if (t.end > h.data_bytes)
        throw std::runtime_error("tensor '" + std::string(t.name) + "' data ends at " + std::to_string(t.end) + ", past the " +
                                 std::to_string(h.data_bytes) + "-byte data region");
      uint64_t expected = (t.numel * bits + 7) / 8;
      if (t.end - t.begin != expected)
        throw std::runtime_error("tensor '" + std::string(t.name) + "' holds " + std::to_string(t.end - t.begin) + " bytes but its " +
                                 std::string(t.dtype) + " shape needs " + std::to_string(expected));
      h.tensors.push_back(t);
    } while (sc.consume(','));
    sc.expect('}');
  }
  if (!sc.at_end()) sc.fail("trailing bytes after the header object");
  // No two tensors may share bytes. Writers lay tensors out in order, so the
  // sort is usually skipped.
  auto by_begin = [](const TensorView* a, const TensorView* b) { return a->begin < b->begin; };
  std::vector<const TensorView*> order;
  order.reserve(h.tensors.size());
  for (const auto& t : h.tensors) order.push_back(&t);
  if (!std::is_sorted(order.begin(), order.end(), by_begin)) std::sort(order.begin(), order.end(), by_begin);
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i]->begin < order[i - 1]->end && order[i]->end > order[i]->begin)
      throw std::runtime_error("tensors '" + std::string(order[i - 1]->name) + "' and '" + std::string(order[i]->name) + "' overlap");
}

void parse_index(std::string_view text, IndexView& out) {
  auto keep_in = [&](std::string_view v, const std::string& scratch) -> std::string_view {
    if (v.data() != scratch.data()) return v;
    out.escaped.emplace_back(v);
    return out.escaped.back();
  };
  std::unordered_map<std::string_view, uint32_t> shard_ids;
  json_scan::Scanner sc(text);
  std::string kb, vb;
  sc.expect('{');
  if (!sc.consume('}')) {
    do {
      std::string key(sc.string(kb));
      sc.expect(':');
      if (key == "weight_map") {
        out.has_weight_map = true;
        out.entries.reserve(out.entries.size() + text.size() / 80);
        std::string_view last;
        uint32_t last_id = 0;
        sc.expect('{');
        if (!sc.consume('}')) {
          do {
            std::string_view tensor = keep_in(sc.string(kb), kb);
            sc.expect(':');
            if (sc.peek() != '"') sc.fail("weight_map entry '" + std::string(tensor) + "' is not a file name");
            std::string_view shard = keep_in(sc.string(vb), vb);
            if (out.shards.empty() || shard != last) {  // entries of one shard come in runs
              auto [it, added] = shard_ids.emplace(shard, static_cast<uint32_t>(out.shards.size()));
              if (added) out.shards.push_back(shard);
              last = shard;
              last_id = it->second;
            }
            out.entries.emplace_back(tensor, last_id);
          } while (sc.consume(','));
          sc.expect('}');
        }
      } else if (key == "metadata" && sc.peek() == '{') {
        sc.expect('{');
        if (!sc.consume('}')) {
          do {
            std::string mk(sc.string(kb));
            sc.expect(':');
            if (mk == "total_size" && sc.peek() != '"' && sc.peek() != 'n') out.total_size = sc.u64("total_size");
            else sc.skip();
          } while (sc.consume(','));
          sc.expect('}');
        }
      } else {
        sc.skip();
      }
    } while (sc.consume(','));
    sc.expect('}');
  }
  if (!sc.at_end()) sc.fail("trailing bytes");
}

Header parse(std::string_view bytes) {
  HeaderView v;
  parse_view(bytes, v);
  Header h;
  h.header_bytes = v.header_bytes;
  h.data_bytes = v.data_bytes;
  for (const auto& [k, val] : v.metadata) h.metadata[std::string(k)] = std::string(val);
  h.tensors.reserve(v.tensors.size());
  for (const auto& t : v.tensors)
    h.tensors.push_back({std::string(t.name), std::string(t.dtype), std::vector<uint64_t>(v.dims.begin() + t.dims_at, v.dims.begin() + t.dims_at + t.ndim),
                         t.numel, t.begin, t.end});
  return h;
}

HeaderMap::HeaderMap(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(path, "not a regular file");
  }
  file_size_ = static_cast<uint64_t>(st.st_size);
  // The length word says how much to map; parse_view checks it again.
  unsigned char word[8] = {};
  uint64_t n = 0;
  if (file_size_ >= 8 && ::pread(fd, word, 8, 0) == 8)
    for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(word[i]) << (8 * i);
  length_ = std::min<uint64_t>(file_size_, 8 + std::min<uint64_t>(n, kMaxHeaderBytes));
  if (length_ > 0) {
    // Read ahead exactly the header's pages (WILLNEED), and nothing past them
    // (RANDOM): MAP_POPULATE's read-ahead went on into the weights (or a
    // sparse file's holes), on each of 163 shards.
    void* p = ::mmap(nullptr, length_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      throw InputError(path, std::string("cannot map: ") + std::strerror(e));
    }
    ::madvise(p, length_, MADV_RANDOM);
    ::madvise(p, length_, MADV_WILLNEED);
    data_ = static_cast<const char*>(p);
  }
  ::close(fd);
}

HeaderMap::~HeaderMap() {
  if (data_) ::munmap(const_cast<char*>(data_), length_);
}

Header read_file(const std::string& path) {
  MappedFile map(path);
  try {
    return parse(map.bytes());
  } catch (const std::runtime_error& e) {
    throw InputError(path, std::string("not a valid safetensors file: ") + e.what());
  }
}

}  // namespace quarkplan::safetensors
