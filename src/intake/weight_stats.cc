#include "intake/weight_stats.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
// The F16C paths need _Float16 and __builtin_cpu_supports("f16c"), which
// GCC has and clang 14 (Debian 12's, used for the fuzz build) does not; the
// portable path gives the same bits, so other compilers take it.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define QUARKPLAN_F16C 1
#include <immintrin.h>
#else
#define QUARKPLAN_F16C 0
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "common/error.h"
#include "common/mapped_file.h"
#include "intake/model_names_gen.h"
#include "intake/safetensors_reader.h"

namespace quarkplan {

namespace {

// Hands the pages of [from, to) back to the kernel (whole pages only, so a
// page shared with a neighbouring chunk is never dropped under another worker).
void release_range(const char* from, const char* to) {
  const uintptr_t page = 4096;
  uintptr_t lo = (reinterpret_cast<uintptr_t>(from) + page - 1) & ~(page - 1);
  uintptr_t hi = reinterpret_cast<uintptr_t>(to) & ~(page - 1);
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

constexpr uint64_t kBlock = 16384;                // elements per block
constexpr uint64_t kReleaseEvery = 16ull << 20;   // bytes between page releases
constexpr uint64_t kChunkBlocks = 1024;           // blocks per work item (16 Mi elements)

struct Sums {
  double sum = 0, sumsq = 0;
  float max_abs = 0;
  uint64_t n = 0, tail = 0;
};

inline float bf16_at(const char* q) {
  uint16_t h;
  std::memcpy(&h, q, 2);
  uint32_t b = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// IEEE half -> float, exact for every half (subnormals, inf and NaN too) and
// branch-free: the 15 magnitude bits moved into a float's exponent/mantissa
// field and scaled by 2^112 (exact: a power of two; half subnormals land on
// float normals), inf/NaN mapped to the float ones. The old per-element branch
// on the exponent left the loop at about 0.65 GB/s.
inline float f16_bits_to_float(uint16_t h) {
  uint32_t em = h & 0x7fffu, b = em << 13;
  float mag;
  std::memcpy(&mag, &b, 4);
  mag *= 0x1p112f;
  uint32_t r;
  std::memcpy(&r, &mag, 4);
  r = em >= 0x7c00u ? (0x7f800000u | b) : r;
  r |= static_cast<uint32_t>(h & 0x8000u) << 16;
  float f;
  std::memcpy(&f, &r, 4);
  return f;
}

inline float f16_at(const char* q) {
  uint16_t h;
  std::memcpy(&h, q, 2);
  return f16_bits_to_float(h);
}

inline float f32_at(const char* q) {
  float f;
  std::memcpy(&f, q, 4);
  return f;
}

// Pass 1 over elements [start, end) of p: per block of kBlock elements a float
// sum, sum of squares and max|w| taken in element order, folded into doubles;
// block maxima kept. The order is part of the result: this file is compiled
// without reassociation, so every dtype path, CPU and thread count gives the
// same bits. Kept out of the worker lambda (the entry points are noinline):
// inlined there it spilled a register per element.
template <typename Load>
__attribute__((always_inline)) inline void pass1_body(const char* p, uint64_t start, uint64_t end, size_t width, Sums& out, std::vector<float>& block_max, Load load,
                                                      bool release) {
  const char* released = p + start * width;
  for (uint64_t b = start; b < end; b += kBlock) {
    uint64_t e = std::min(end, b + kBlock);
    float s = 0, q = 0, m = 0;
    for (uint64_t i = b; i < e; ++i) {
      float v = load(p + i * width);
      float av = std::fabs(v);
      m = av > m ? av : m;
      s += v;
      q += v * v;
    }
    out.sum += s;
    out.sumsq += q;
    out.max_abs = m > out.max_abs ? m : out.max_abs;
    block_max.push_back(m);
    const char* done = p + e * width;
    if (release && static_cast<uint64_t>(done - released) >= kReleaseEvery) {
      release_range(released, done);
      released = done;
    }
  }
  out.n += end - start;
  if (release) release_range(released, p + end * width);
}

template <typename Load>
__attribute__((noinline)) void pass1(const char* p, uint64_t start, uint64_t end, size_t width, Sums& out, std::vector<float>& block_max, Load load, bool release) {
  pass1_body(p, start, end, width, out, block_max, load, release);
}

#if QUARKPLAN_F16C
// FP16 on x86 CPUs with F16C (AMD since Piledriver, Intel since Ivy Bridge): one
// vcvtph2ps per weight instead of about ten integer and float operations.
// The same loop as pass1 compiled for F16C: the conversion is exact, so the
// statistics are bit-identical to the portable path.
__attribute__((noinline, target("f16c"))) void pass1_f16c(const char* p, uint64_t start, uint64_t end, Sums& out, std::vector<float>& block_max, bool release) {
  pass1_body(p, start, end, 2, out, block_max, [](const char* q) {
    _Float16 h;
    std::memcpy(&h, q, 2);
    return static_cast<float>(h);
  }, release);
}
bool has_f16c() {
  static const bool yes = __builtin_cpu_supports("f16c");
  return yes;
}
#else
void pass1_f16c(const char*, uint64_t, uint64_t, Sums&, std::vector<float>&, bool) {}
bool has_f16c() { return false; }
#endif

// Pass 2: once sigma is known, only the blocks whose maximum reaches 6 sigma
// are counted again. Heavy-tailed models (ISNet) have a weight beyond 6 sigma in
// most blocks, so the recount is a real share of the scan: a count is exact in
// any order, so this loop may vectorise (the width is a constant).
template <size_t Width, typename Load>
__attribute__((always_inline)) inline uint64_t count_beyond_body(const char* p, uint64_t n, float thr, Load load) {
  uint64_t c = 0;
  for (uint64_t i = 0; i < n; ++i) c += std::fabs(load(p + i * Width)) >= thr ? 1 : 0;
  return c;
}

template <size_t Width, typename Load>
__attribute__((noinline)) uint64_t count_beyond(const char* p, uint64_t n, float thr, Load load) {
  return count_beyond_body<Width>(p, n, thr, load);
}

#if QUARKPLAN_F16C
// Eight weights per step: convert, clear the sign, compare, count the mask bits.
__attribute__((noinline, target("avx,f16c,popcnt"))) uint64_t count_beyond_f16c(const char* p, uint64_t n, float thr) {
  uint64_t c = 0, i = 0;
  const __m256 t = _mm256_set1_ps(thr), magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_and_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i * 2))), magnitude);
    c += static_cast<uint64_t>(__builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(v, t, _CMP_GE_OQ)))));
  }
  return c + count_beyond_body<2>(p + i * 2, n - i, thr, [](const char* q) {
    _Float16 h;
    std::memcpy(&h, q, 2);
    return static_cast<float>(h);
  });
}
#else
uint64_t count_beyond_f16c(const char*, uint64_t, float) { return 0; }
#endif

size_t width_of(std::string_view dtype) { return dtype == "F32" ? 4 : dtype == "BF16" || dtype == "F16" ? 2 : 0; }

// Lambdas (not function pointers) so each loader inlines into its loop.
template <typename Fn>
void with_loader(std::string_view dtype, Fn fn) {
  if (dtype == "BF16") fn([](const char* q) { return bf16_at(q); });
  else if (dtype == "F16") fn([](const char* q) { return f16_at(q); });
  else fn([](const char* q) { return f32_at(q); });
}

// The weights among the `n` at p whose |w| reaches thr, on the fastest path this CPU has.
uint64_t run_count(std::string_view dtype, const char* p, uint64_t n, float thr) {
  if (dtype == "F16" && has_f16c()) return count_beyond_f16c(p, n, thr);
  if (dtype == "F16") return count_beyond<2>(p, n, thr, [](const char* q) { return f16_at(q); });
  if (dtype == "BF16") return count_beyond<2>(p, n, thr, [](const char* q) { return bf16_at(q); });
  return count_beyond<4>(p, n, thr, [](const char* q) { return f32_at(q); });
}

// Pass 1 over elements [start, end) of a tensor of `dtype`, on the fastest path this CPU has.
void run_pass1(std::string_view dtype, const char* p, uint64_t start, uint64_t end, Sums& out, std::vector<float>& block_max, bool release) {
  if (dtype == "F16" && has_f16c()) return pass1_f16c(p, start, end, out, block_max, release);
  with_loader(dtype, [&](auto load) { pass1(p, start, end, width_of(dtype), out, block_max, load, release); });
}

void fill(TensorStats& out, const Sums& a) {
  out.numel = a.n;
  if (a.n == 0) return;
  out.max_abs = a.max_abs;
  out.mean = a.sum / static_cast<double>(a.n);
  double var = a.sumsq / static_cast<double>(a.n) - out.mean * out.mean;
  out.stddev = var > 0 ? std::sqrt(var) : 0;
  out.outlier_ratio = static_cast<double>(a.tail) / static_cast<double>(a.n);
}

float threshold(const Sums& a) {
  if (a.n == 0) return 0;
  double mean = a.sum / static_cast<double>(a.n);
  double var = a.sumsq / static_cast<double>(a.n) - mean * mean;
  return static_cast<float>(6.0 * std::sqrt(var > 0 ? var : 0));
}

// Runs fn(i) for i in [0, n) on `threads` workers; the calling thread reports
// progress meanwhile.
void parallel(size_t n, unsigned threads, const std::function<void(size_t)>& fn, const std::function<void()>& tick) {
  std::atomic<size_t> next{0};
  std::atomic<unsigned> running{threads};
  std::mutex mu;
  std::condition_variable cv;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
    std::lock_guard<std::mutex> lock(mu);
    if (--running == 0) cv.notify_all();
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  {
    std::unique_lock<std::mutex> lock(mu);
    while (!cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return running.load() == 0; }))
      if (tick) {
        lock.unlock();
        tick();
        lock.lock();
      }
  }
  for (auto& t : pool) t.join();
}

}  // namespace

float half_to_float(uint16_t h) { return f16_bits_to_float(h); }

bool tensor_stats(std::string_view data, std::string_view dtype, TensorStats& out, bool release) {
  size_t width = width_of(dtype);
  if (!width) return false;
  Sums a;
  std::vector<float> block_max;
  uint64_t n = data.size() / width;
  run_pass1(dtype, data.data(), 0, n, a, block_max, release);
  float thr = threshold(a);
  if (thr > 0)
    for (size_t k = 0; k < block_max.size(); ++k)
      if (block_max[k] >= thr) a.tail += run_count(dtype, data.data() + k * kBlock * width, std::min(kBlock, n - k * kBlock), thr);
  fill(out, a);
  return true;
}

namespace {

// pread size: small enough to stay in the L2 cache between the copy and the
// scan (4 MiB pieces ran 3x slower), and a whole number of blocks for every dtype.
constexpr uint64_t kPieceBytes = 64ull << 10;

// Open files shared by the workers (pread is thread-safe on one descriptor).
class Files {
 public:
  ~Files() {
    for (auto& [path, fd] : fds_) ::close(fd);
  }
  void open(const std::string& path) {
    if (path.empty() || fds_.count(path)) return;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(path, "cannot open it to scan its weights");
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    fds_[path] = fd;
  }
  // Reads exactly `n` bytes at `off` into `buf`; throws on a short read.
  void read(const std::string& path, uint64_t off, char* buf, uint64_t n) const {
    int fd = fds_.at(path);
    while (n > 0) {
      ssize_t r = ::pread(fd, buf, n, static_cast<off_t>(off));
      if (r <= 0) throw InputError(path, "ends before the weight data it should hold (at byte " + std::to_string(off) + ")");
      buf += r;
      off += static_cast<uint64_t>(r);
      n -= static_cast<uint64_t>(r);
    }
  }

 private:
  std::map<std::string, int> fds_;
};

// The bytes of elements [start, start + count) of `t`: a view of `data`, or
// read into `buf`.
std::string_view bytes_of(const WeightTensor& t, const Files& files, uint64_t start, uint64_t count, size_t width, std::vector<char>& buf) {
  if (t.file.empty()) return t.data.substr(start * width, count * width);
  buf.resize(std::max<size_t>(buf.size(), count * width));
  files.read(t.file, t.offset + start * width, buf.data(), count * width);
  return std::string_view(buf.data(), count * width);
}

}  // namespace

Json scan_weight_tensors(const std::vector<WeightTensor>& tensors, const ScanOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  unsigned threads = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  Files files;
  for (const auto& t : tensors) files.open(t.file);
  // Work items: chunks of whole blocks, so one huge tensor still spreads over every core.
  struct Chunk {
    size_t tensor;
    uint64_t start, end;
    Sums sums;
    std::vector<float> block_max;
  };
  std::vector<Chunk> chunks;
  uint64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    size_t width = width_of(tensors[i].dtype);
    if (!width) continue;
    uint64_t n = tensors[i].size() / width;
    total += n * width;
    for (uint64_t s = 0; s < n; s += kBlock * kChunkBlocks) chunks.push_back({i, s, std::min(n, s + kBlock * kChunkBlocks), {}, {}});
  }
  std::atomic<uint64_t> done{0};
  std::mutex error_mu;
  std::exception_ptr error;
  auto guarded = [&](auto fn) {
    try {
      fn();
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mu);
      if (!error) error = std::current_exception();
    }
  };
  auto tick = [&] {
    if (opt.progress) opt.progress(done.load(), total);
  };
  parallel(chunks.size(), threads, [&](size_t k) {
    guarded([&] {
      thread_local std::vector<char> buf;
      Chunk& c = chunks[k];
      const WeightTensor& t = tensors[c.tensor];
      size_t width = width_of(t.dtype);
      uint64_t piece = kPieceBytes / width;
      for (uint64_t s = c.start; s < c.end; s += piece) {
        uint64_t n = std::min(piece, c.end - s);
        std::string_view b = bytes_of(t, files, s, n, width, buf);
        run_pass1(t.dtype, b.data(), 0, n, c.sums, c.block_max, false);
        done += n * width;
      }
    });
  }, tick);
  if (error) std::rethrow_exception(error);
  // Fold the chunks of each tensor, then recount the tails.
  std::vector<Sums> sums(tensors.size());
  for (const auto& c : chunks) {
    Sums& s = sums[c.tensor];
    s.sum += c.sums.sum;
    s.sumsq += c.sums.sumsq;
    s.max_abs = std::max(s.max_abs, c.sums.max_abs);
    s.n += c.sums.n;
  }
  std::vector<uint64_t> tails(chunks.size(), 0);
  parallel(chunks.size(), threads, [&](size_t k) {
    guarded([&] {
      thread_local std::vector<char> buf;
      const Chunk& c = chunks[k];
      const WeightTensor& t = tensors[c.tensor];
      float thr = threshold(sums[c.tensor]);
      if (thr <= 0) return;
      size_t width = width_of(t.dtype);
      for (size_t b = 0; b < c.block_max.size(); ++b) {
        if (c.block_max[b] < thr) continue;
        uint64_t start = c.start + b * kBlock, n = std::min(kBlock, c.end - start);
        std::string_view bytes = bytes_of(t, files, start, n, width, buf);
        tails[k] += run_count(t.dtype, bytes.data(), n, thr);
      }
    });
  }, {});
  if (error) std::rethrow_exception(error);
  for (size_t k = 0; k < chunks.size(); ++k) sums[chunks[k].tensor].tail += tails[k];
  if (opt.progress) opt.progress(total, total);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<TensorStats> all(tensors.size());
  std::vector<size_t> scanned;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!width_of(tensors[i].dtype)) continue;
    all[i].name = tensors[i].module;
    fill(all[i], sums[i]);
    scanned.push_back(i);
  }
  // inf/NaN weights rank first (and print as null): a tensor holding them is the worst case.
  auto ratio = [&](size_t i) {
    if (!std::isfinite(all[i].max_abs) || !std::isfinite(all[i].stddev)) return HUGE_VAL;
    return all[i].stddev > 0 ? all[i].max_abs / all[i].stddev : 0.0;
  };
  std::stable_sort(scanned.begin(), scanned.end(), [&](size_t a, size_t b) { return ratio(a) > ratio(b); });
  Json mods = Json::array(), outliers = Json::array();
  for (size_t k = 0; k < scanned.size() && k < opt.top; ++k) {
    size_t i = scanned[k];
    Json m = {{"module", all[i].name}, {"max_abs", all[i].max_abs}, {"std", all[i].stddev}, {"max_over_std", std::round(ratio(i) * 10) / 10},
              {"outlier_ratio_6sigma", all[i].outlier_ratio}};
    if (!tensors[i].op_type.empty()) {
      m["tensor"] = tensors[i].tensor;
      m["op_type"] = tensors[i].op_type;
    }
    mods.push_back(m);
  }
  // Modules whose largest weight sits far beyond the bulk: candidates to keep
  // in higher precision (or to smooth) — a heavy tail hurts per-tensor scales.
  for (size_t i : scanned)
    if (ratio(i) > opt.outlier_max_over_std || (all[i].outlier_ratio >= opt.outlier_tail_share && ratio(i) >= opt.outlier_tail_max_over_std))
      outliers.push_back(all[i].name);
  return {{"scanned_bytes", total},
          {"tensors", scanned.size()},
          {"threads", threads},
          {"seconds", std::round(secs * 1000) / 1000},
          {"gb_per_second", secs > 0 ? std::round(static_cast<double>(total) / 1e9 / secs * 100) / 100 : 0.0},
          {"outlier_max_over_std", opt.outlier_max_over_std},
          {"outlier_tail_share", opt.outlier_tail_share},
          {"outlier_tail_max_over_std", opt.outlier_tail_max_over_std},
          {"top_modules", mods},
          {"outlier_modules", outliers},
          {"method", "one streaming pass per weight (BF16/F16/F32) on " + std::to_string(threads) +
                         " thread(s): max|w|/std; the share beyond 6 sigma recounted exactly in the few blocks that reach it; an outlier module has max|w|/std above " +
                         std::to_string(static_cast<int>(opt.outlier_max_over_std)) + " or at least " + std::to_string(opt.outlier_tail_share * 100).substr(0, 4) + "% of its weights beyond 6 sigma with max|w|/std above " +
                         std::to_string(static_cast<int>(opt.outlier_tail_max_over_std))}};
}

Json scan_weight_stats(const std::vector<std::string>& files, const ScanOptions& opt) {
  std::vector<WeightTensor> tensors;
  for (const auto& f : files) {
    safetensors::Header h = safetensors::read_file(f);
    uint64_t base = 8 + h.header_bytes;
    for (const auto& t : h.tensors) {
      if (t.shape.size() != 2 || t.name.size() < 7 || t.name.compare(t.name.size() - 7, 7, ".weight") != 0) continue;
      std::string module = t.name.substr(0, t.name.size() - 7);
      if (is_non_linear_module(module)) continue;  // embeddings and norms are never quantized
      if (!width_of(t.dtype)) continue;
      WeightTensor w{module, t.name, "", {}, t.dtype, f, base + t.begin, t.end - t.begin};
      tensors.push_back(std::move(w));
    }
  }
  return scan_weight_tensors(tensors, opt);
}

}  // namespace quarkplan
