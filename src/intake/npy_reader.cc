#include "intake/npy_reader.h"

#include <cctype>
#include <stdexcept>

namespace quarkplan::npy {

namespace {

[[noreturn]] void fail(const std::string& why) { throw std::runtime_error(why); }

struct Cursor {
  std::string_view s;
  size_t i = 0;
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  std::string quoted() {
    ws();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) fail("the header dict has a key or value that is not a quoted string");
    char q = s[i++];
    size_t start = i;
    while (i < s.size() && s[i] != q) {
      if (s[i] == '\\') fail("the header dict has an escaped string, which NumPy never writes");
      ++i;
    }
    if (i >= s.size()) fail("the header dict has an unterminated string");
    return std::string(s.substr(start, i++ - start));
  }
  std::string word() {
    ws();
    size_t start = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    return std::string(s.substr(start, i - start));
  }
  uint64_t number() {
    ws();
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) fail("the shape holds something other than whole numbers");
    uint64_t v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      unsigned d = static_cast<unsigned>(s[i++] - '0');
      if (v > (UINT64_MAX - d) / 10) fail("a shape dimension overflows 64 bits");
      v = v * 10 + d;
    }
    // Python 2 headers may write 3L.
    if (i < s.size() && (s[i] == 'L' || s[i] == 'l')) ++i;
    return v;
  }
};

}  // namespace

Header parse_header(std::string_view p, uint64_t file_size) {
  static const char magic[] = "\x93NUMPY";
  if (p.size() < 10 || p.substr(0, 6) != std::string_view(magic, 6)) fail("not a NumPy .npy file (no \\x93NUMPY magic)");
  unsigned major = static_cast<unsigned char>(p[6]);
  uint64_t len = 0, start = 0;
  if (major == 1) {
    len = static_cast<unsigned char>(p[8]) | (static_cast<uint64_t>(static_cast<unsigned char>(p[9])) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (p.size() < 12) fail("the .npy header is cut short");
    for (int k = 0; k < 4; ++k) len |= static_cast<uint64_t>(static_cast<unsigned char>(p[8 + k])) << (8 * k);
    start = 12;
  } else {
    fail("unknown .npy format version " + std::to_string(major));
  }
  if (len > p.size() - start) fail("the .npy header says " + std::to_string(len) + " bytes but the file has " + std::to_string(p.size() - start) + " after its length");
  Header h;
  h.header_bytes = start + len;
  Cursor c{p.substr(start, len)};
  if (!c.eat('{')) fail("the .npy header is not a dict");
  bool have_descr = false, have_order = false, have_shape = false;
  while (!c.eat('}')) {
    std::string key = c.quoted();
    if (!c.eat(':')) fail("the header dict lacks a ':' after '" + key + "'");
    if (key == "descr") {
      c.ws();
      if (c.i < c.s.size() && c.s[c.i] == '[') fail("a structured dtype (a list of fields) is not an array an input can take");
      h.descr = c.quoted();
      have_descr = true;
    } else if (key == "fortran_order") {
      std::string w = c.word();
      if (w != "True" && w != "False") fail("fortran_order is neither True nor False");
      h.fortran_order = w == "True";
      have_order = true;
    } else if (key == "shape") {
      if (!c.eat('(')) fail("the shape is not a tuple");
      while (!c.eat(')')) {
        h.shape.push_back(c.number());
        if (h.shape.size() > 64) fail("the shape has more than 64 dimensions");
        if (!c.eat(',')) {
          if (!c.eat(')')) fail("the shape tuple is malformed");
          break;
        }
      }
      have_shape = true;
    } else {
      fail("the header dict has an unknown key '" + key + "'");
    }
    if (!c.eat(',')) {
      if (!c.eat('}')) fail("the header dict is malformed after '" + key + "'");
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape) fail("the header dict lacks descr, fortran_order or shape");
  // descr: byte order (<, >, |, =), kind, item size.
  std::string_view d = h.descr;
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
    h.big_endian = d[0] == '>';
    d.remove_prefix(1);
  }
  if (d.size() < 2 || !std::isdigit(static_cast<unsigned char>(d[1]))) fail("dtype '" + h.descr + "' is not a plain numeric type");
  h.kind = d[0];
  if (h.kind == 'O') fail("dtype '" + h.descr + "' holds Python objects (np.load refuses them without allow_pickle)");
  if (h.kind != 'f' && h.kind != 'i' && h.kind != 'u' && h.kind != 'b' && h.kind != 'c') fail("dtype '" + h.descr + "' is not a numeric type");
  uint64_t size = 0;
  for (char ch : d.substr(1)) {
    if (!std::isdigit(static_cast<unsigned char>(ch)) || size > 1024) fail("dtype '" + h.descr + "' has a malformed item size");
    size = size * 10 + static_cast<uint64_t>(ch - '0');
  }
  if (size == 0 || size > 16) fail("dtype '" + h.descr + "' has an item size of " + std::to_string(size) + " bytes");
  h.item_bytes = static_cast<uint32_t>(size);
  uint64_t n = 1;
  for (uint64_t dim : h.shape) {
    if (dim != 0 && n > UINT64_MAX / dim) fail("the shape's element count overflows 64 bits");
    n *= dim;
  }
  if (n > UINT64_MAX / h.item_bytes) fail("the array's size overflows 64 bits");
  h.data_bytes = n * h.item_bytes;
  if (h.header_bytes > file_size || h.data_bytes > file_size - h.header_bytes)
    fail("the file holds " + std::to_string(file_size > h.header_bytes ? file_size - h.header_bytes : 0) + " data bytes; shape and dtype need " +
         std::to_string(h.data_bytes));
  return h;
}

std::string onnx_dtype_name(const Header& h) {
  switch (h.kind) {
    case 'f': return h.item_bytes == 2 ? "float16" : h.item_bytes == 4 ? "float32" : h.item_bytes == 8 ? "float64" : "";
    case 'i': return h.item_bytes == 1 ? "int8" : h.item_bytes == 2 ? "int16" : h.item_bytes == 4 ? "int32" : h.item_bytes == 8 ? "int64" : "";
    case 'u': return h.item_bytes == 1 ? "uint8" : h.item_bytes == 2 ? "uint16" : h.item_bytes == 4 ? "uint32" : h.item_bytes == 8 ? "uint64" : "";
    case 'b': return "bool";
    default: return "";
  }
}

}  // namespace quarkplan::npy
