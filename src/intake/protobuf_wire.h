// A zero-copy walk over protobuf wire format.
//
// Why hand-written: libprotobuf's generated ModelProto parser copies every
// TensorProto.raw_data into memory, so reading a 2 GB model costs 2 GB of RAM.
// Intake needs only the structure (graph, nodes, shapes, tensor headers); this
// reader yields each field as a view into the mapped file and lets the caller
// skip weight bytes by their length. Every length is checked against the bytes
// left, so lying lengths and truncation become errors, never reads past the end.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace quarkplan::wire {

enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

struct WireError : std::runtime_error {
  WireError(uint64_t offset_in, const std::string& what)
      : std::runtime_error(what), offset(offset_in) {}
  uint64_t offset;
};

struct Field {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t varint = 0;       // kVarint, kFixed32, kFixed64
  std::string_view bytes;    // kBytes: the payload, a view into the input
  uint64_t offset = 0;       // absolute offset of the payload in the file
};

class Reader {
 public:
  // `base` is the absolute offset of `buf` in the file, for error messages.
  Reader(std::string_view buf, uint64_t base) : buf_(buf), base_(base) {}

  // Reads the next field; false at the end of the message.
  bool next(Field& f) {
    if (pos_ >= buf_.size()) return false;
    uint64_t tag = read_varint();
    uint32_t wt = static_cast<uint32_t>(tag & 7);
    uint64_t number = tag >> 3;
    if (number == 0 || number > 536870911u) fail("invalid field number " + std::to_string(number));
    f.number = static_cast<uint32_t>(number);
    switch (wt) {
      case 0:
        f.type = WireType::kVarint;
        f.varint = read_varint();
        break;
      case 1:
        f.type = WireType::kFixed64;
        f.varint = read_fixed(8);
        break;
      case 5:
        f.type = WireType::kFixed32;
        f.varint = read_fixed(4);
        break;
      case 2: {
        f.type = WireType::kBytes;
        uint64_t len = read_varint();
        if (len > buf_.size() - pos_)
          fail("length " + std::to_string(len) + " of field " + std::to_string(number) +
               " runs past the end of its message (" + std::to_string(buf_.size() - pos_) +
               " bytes left)");
        f.offset = base_ + pos_;
        f.bytes = buf_.substr(pos_, static_cast<size_t>(len));
        pos_ += static_cast<size_t>(len);
        break;
      }
      default:
        fail("unsupported wire type " + std::to_string(wt) + " for field " + std::to_string(number));
    }
    return true;
  }

  uint64_t position() const { return base_ + pos_; }

  [[noreturn]] void fail(const std::string& what) const { throw WireError(base_ + pos_, what); }

 private:
  uint64_t read_varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= buf_.size()) fail("truncated varint");
      uint8_t b = static_cast<uint8_t>(buf_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail("varint longer than 10 bytes");
  }
  uint64_t read_fixed(size_t n) {
    if (buf_.size() - pos_ < n) fail("truncated fixed-width field");
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(buf_[pos_ + i])) << (8 * i);
    pos_ += n;
    return v;
  }

  std::string_view buf_;
  uint64_t base_;
  size_t pos_ = 0;
};

// Calls fn(uint64_t) for every varint in a packed repeated field.
template <typename Fn>
void for_each_packed_varint(const Field& f, Fn&& fn) {
  std::string_view b = f.bytes;
  size_t pos = 0;
  while (pos < b.size()) {
    uint64_t v = 0;
    int shift = 0;
    for (;; shift += 7) {
      if (shift >= 64) throw WireError(f.offset + pos, "varint longer than 10 bytes");
      if (pos >= b.size()) throw WireError(f.offset + pos, "truncated packed varint");
      uint8_t byte = static_cast<uint8_t>(b[pos++]);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) break;
    }
    fn(v);
  }
}

}  // namespace quarkplan::wire
