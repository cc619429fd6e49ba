// Runs a command body, mapping exceptions onto the exit codes of SPEC §1 with
// a one-line message.
#pragma once
#include <cstdio>
#include <exception>

#include "common/error.h"

namespace quarkplan {

template <typename Fn>
int guarded(Fn&& body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::fprintf(stderr, "quarkplan: error: %s\n", e.what());
    return kExitBadInput;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "quarkplan: error: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quarkplan: internal error: %s\n", e.what());
    return kExitInternal;
  }
}

}  // namespace quarkplan
