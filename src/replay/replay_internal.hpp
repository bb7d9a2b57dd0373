// Operation classes of the replay engine (internal).
#pragma once

#include <string>
#include <vector>

#include "tracefold/event.hpp"
#include "tracefold/op_class.hpp"

namespace tracefold::replay_detail {

// Replay acts on core's classification (tracefold/op_class.hpp).
using Kind = OpFamily;
using Variant = OpVariant;

struct OpInfo {
  bool supported = false;  ///< replay can perform it
  Kind kind = Kind::kMarker;
  bool nonblocking = false;  ///< makes a request (I-variants, persistent inits)
  std::string name;
  Variant variant = Variant::kPlain;
};

/// Indexed by OpId.
std::vector<OpInfo> op_table();

}  // namespace tracefold::replay_detail
