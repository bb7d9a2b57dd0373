// Reading a recording for the diagnosis: the timeline's events on rank 0's
// clock (the waits module's reader, clock condition repaired as `analyze`
// does).
#include <filesystem>

#include "internal.hpp"

namespace tracefold {

DiagnoseInput load_diagnose_input(const Trace& trace, const std::string& dir,
                                  std::vector<std::string>& notes) {
  DiagnoseInput in;
  try {
    in.events = load_wait_input(trace, dir);
  } catch (const WaitsError& e) {
    throw DiagnoseError(e.what());
  }
  in.clock_violations = repair_clock_condition(trace, in.events);
  if (const uint64_t v = in.clock_violations)
    notes.push_back(std::to_string(v) +
                    " receives ended before their send began (clock condition); they were "
                    "moved after it, as `tracefold analyze` does");
  return in;
}

}  // namespace tracefold
