// Working sets a one-shot command no longer needs but would pay to destroy:
// DeepSeek-V3's intake holds 163 mapped shard headers and ~200,000 records;
// unmapping and freeing them one by one cost ~10 ms of a ~90 ms command. Kept
// here, they are released by the kernel in one go when the process exits, the
// way clang's -disable-free skips freeing its AST. Reachable from a global, so
// leak checkers do not report them. Only the command-line front end opts in
// (IntakeContext::keep_until_exit); library callers free as usual.
#pragma once
#include <memory>

namespace quarkplan {

void keep_until_exit(std::shared_ptr<void> object);

}  // namespace quarkplan
