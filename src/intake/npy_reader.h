// npy_reader: the header of a NumPy .npy file (format 1.0, 2.0 and 3.0: magic,
// version, header length, then a Python dict literal {'descr', 'fortran_order',
// 'shape'}) read from the file's first bytes; the array data is never read,
// only its size checked against the bytes left. Hand-written because no Debian
// C++ library reads .npy headers (cnpy is not packaged) and calibration checks
// need only the header. Every length is checked against the bytes given.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace quarkplan::npy {

struct Header {
  std::string descr;     // '<f4', '|u1', ...
  char kind = 0;         // 'f' float, 'i' signed, 'u' unsigned, 'b' bool, 'c' complex, other: unsupported
  uint32_t item_bytes = 0;
  bool big_endian = false;
  bool fortran_order = false;
  std::vector<uint64_t> shape;  // () is a scalar
  uint64_t header_bytes = 0;    // magic + lengths + dict: where the data starts
  uint64_t data_bytes = 0;      // numel * item_bytes
};

// Parses the header from `prefix` (the file's first bytes, at least the whole
// header) of a file of `file_size` bytes. Throws std::runtime_error with a
// one-line reason: not an .npy file, an unknown version, a malformed dict, an
// object or structured dtype (np.load refuses those without pickle), data
// shorter than the shape says.
Header parse_header(std::string_view prefix, uint64_t file_size);

// The ONNX element type name ("float32", "int64", ...) of a header's dtype, as
// ONNX Runtime would feed it; "" when there is none (complex, ...).
std::string onnx_dtype_name(const Header& h);

}  // namespace quarkplan::npy
