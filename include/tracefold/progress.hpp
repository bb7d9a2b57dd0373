// How long library work reports how far it has got. Libraries stay silent:
// they call the function between steps, and the command line decides
// whether and how to show it (src/cli/progress.hpp).
#pragma once

#include <cstddef>
#include <functional>

namespace tracefold {

/// `done` of `total` steps finished (`total` 0: not known in advance). An
/// empty function means nobody is watching.
using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;

/// Calls `fn` if set.
inline void report_progress(const ProgressFn& fn, std::size_t done, std::size_t total) {
  if (fn) fn(done, total);
}

}  // namespace tracefold
