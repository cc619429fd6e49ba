#include "intake/safetensors_reader.h"

#include <algorithm>
#include <stdexcept>

#include "common/error.h"
#include "common/mapped_file.h"
#include "intake/json_scan.h"

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

Header parse(std::string_view bytes) {
  if (bytes.size() < 8) throw std::runtime_error("file is " + std::to_string(bytes.size()) + " bytes: too short for a safetensors header");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  if (n > kMaxHeaderBytes)
    throw std::runtime_error("header length " + std::to_string(n) + " is larger than the 100 MB limit");
  if (n > bytes.size() - 8)
    throw std::runtime_error("header length " + std::to_string(n) + " runs past the end of the file (" +
                             std::to_string(bytes.size() - 8) + " bytes left)");
  Header h;
  h.header_bytes = n;
  h.data_bytes = bytes.size() - 8 - n;
  std::string_view text = bytes.substr(8, n);
  json_scan::Scanner sc(text);
  std::string key_buf, val_buf;
  sc.expect('{');
  if (!sc.consume('}')) {
    do {
      std::string name(sc.string(key_buf));
      sc.expect(':');
      if (name == "__metadata__") {
        sc.expect('{');
        if (!sc.consume('}')) {
          do {
            std::string k(sc.string(key_buf));
            sc.expect(':');
            if (sc.peek() == '"') h.metadata[k] = std::string(sc.string(val_buf));
            else sc.skip();
          } while (sc.consume(','));
          sc.expect('}');
        }
        continue;
      }
      Tensor t;
      t.name = std::move(name);
      bool have_dtype = false, have_shape = false, have_offsets = false;
      sc.expect('{');
      if (!sc.consume('}')) {
        do {
          std::string_view field = sc.string(key_buf);
          std::string f(field);
          sc.expect(':');
          if (f == "dtype") {
            t.dtype = std::string(sc.string(val_buf));
            have_dtype = true;
          } else if (f == "shape") {
            sc.expect('[');
            if (!sc.consume(']')) {
              do {
                if (t.shape.size() >= 64) sc.fail("tensor '" + t.name + "' has more than 64 dimensions");
                t.shape.push_back(sc.u64("a dimension"));
              } while (sc.consume(','));
              sc.expect(']');
            }
            have_shape = true;
          } else if (f == "data_offsets") {
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
        throw std::runtime_error("tensor '" + t.name + "' lacks dtype, shape or data_offsets");
      uint32_t bits = dtype_bits(t.dtype);
      if (bits == 0) throw std::runtime_error("tensor '" + t.name + "' has unknown dtype '" + t.dtype + "'");
      t.numel = 1;
      for (uint64_t dim : t.shape) {
        if (dim != 0 && t.numel > UINT64_MAX / dim / 8) throw std::runtime_error("tensor '" + t.name + "' dimensions overflow");
        t.numel *= dim;
      }
      if (t.begin > t.end) throw std::runtime_error("tensor '" + t.name + "' has data_offsets that run backwards");
      if (t.end > h.data_bytes)
        throw std::runtime_error("tensor '" + t.name + "' data ends at " + std::to_string(t.end) + ", past the " +
                                 std::to_string(h.data_bytes) + "-byte data region");
      uint64_t expected = (t.numel * bits + 7) / 8;
      if (t.end - t.begin != expected)
        throw std::runtime_error("tensor '" + t.name + "' holds " + std::to_string(t.end - t.begin) + " bytes but its " +
                                 t.dtype + " shape needs " + std::to_string(expected));
      h.tensors.push_back(std::move(t));
    } while (sc.consume(','));
    sc.expect('}');
  }
  if (!sc.at_end()) sc.fail("trailing bytes after the header object");
  // No two tensors may share bytes.
  std::vector<const Tensor*> by_offset;
  by_offset.reserve(h.tensors.size());
  for (const auto& t : h.tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const Tensor* a, const Tensor* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->begin < by_offset[i - 1]->end && by_offset[i]->end > by_offset[i]->begin)
      throw std::runtime_error("tensors '" + by_offset[i - 1]->name + "' and '" + by_offset[i]->name + "' overlap");
  return h;
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
