// Files replaced by rename while other processes read them (sessions are
// updated that way by concurrent `plan --session` runs).
#include "common/files.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "support/test_support.h"

namespace quarkplan {
namespace {
using qp_test::TempDir;

TEST(Files, AReadDuringAReplaceSeesOneWholeVersion) {
  TempDir d;
  const std::string path = (d / "s.json").string();
  const std::string small(16, 'a');
  const std::string large(64 * 1024, 'b');
  write_file_atomic(path, small);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; !stop; ++i) write_file_atomic(path, i % 2 ? small : large);
  });
  int mixed = 0;
  for (int i = 0; i < 3000; ++i) {
    try {
      std::string got = read_small_file(path, 1 << 20);
      if (got != small && got != large) ++mixed;
    } catch (const std::exception&) {  // "short read": the size of one version, the bytes of another
      ++mixed;
    }
  }
  stop = true;
  writer.join();
  EXPECT_EQ(mixed, 0) << "a read mixed the size of one version with the bytes of another";
}

}  // namespace
}  // namespace quarkplan
