#include "source_dir.hpp"

namespace tracefold::testing {
const char* source_dir() {
  return TRACEFOLD_UNIT_SOURCE_DIR;
}
}  // namespace tracefold::testing
