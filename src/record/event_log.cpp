// `record --sample-only`: the events go to an event log (event_log.hpp)
// beside the timeline instead of into the folder. Event k of the log is
// timeline record k, and the index samples name (Recorder::timestamp
// counts them the same way with or without the folder).

#include "recorder_impl.hpp"

namespace tracefold::record {

void Recorder::open_event_log(const char* dir) {
  if (disabled) return;
  event_log_file = event_log_path(dir, rank);
  try {
    event_log.open(event_log_file, rank, size, timeline_max, block_bytes());
  } catch (const std::exception& ex) {
    event_log_open_error = ex.what();
    std::fprintf(stderr, "tracefold: rank %d: no event log: %s\n", rank, ex.what());
  }
}

// Caller holds `mu`. A new site may bring new modules (its frames were
// just resolved); both are declared before the event that uses them.
// Communicators are declared where they are defined (define_comm).
void Recorder::log_event(const Event& ev) {
  if (!event_log.is_open()) return;
  if (sites.size() > logged_sites) {
    if (modules.size() > logged_modules.size())
      for (const auto& [name, m] : modules)
        if (logged_modules.insert(name).second) event_log.add_module(m);
    for (; logged_sites < sites.size(); ++logged_sites)
      event_log.add_site(sites.at(static_cast<SiteId>(logged_sites)));
  }
  event_log.add_event(ev);
  if (event_log.over_budget() && !event_log_warned) {
    // Calls past the bound keep their times but lose their parameters:
    // diagnose analyses the run only up to the first of them.
    event_log_warned = true;
    std::fprintf(stderr,
                 "tracefold: rank %d: event log size bound reached (%llu bytes) after %llu "
                 "events; later events are counted but not kept, and `tracefold diagnose` "
                 "analyses the run up to there: raise the bound with `tracefold record "
                 "--timeline-max BYTES` (TRACEFOLD_TIMELINE_MAX)\n",
                 rank, static_cast<unsigned long long>(timeline_max),
                 static_cast<unsigned long long>(event_log.recorded()));
  }
  if (!event_log.error().empty()) {
    std::fprintf(stderr, "tracefold: rank %d: event log: %s\n", rank, event_log.error().c_str());
    event_log.close();
  }
}

void Recorder::close_event_log() {
  if (!event_log.is_open()) return;
  event_log.close();
  if (!event_log.error().empty())
    std::fprintf(stderr, "tracefold: rank %d: event log: %s\n", rank, event_log.error().c_str());
}

}  // namespace tracefold::record
