// Chrome trace-event JSON, as read by ui.perfetto.dev and chrome://tracing.
#include <cstdio>
#include <string>

#include "export_util.hpp"
#include "tracefold/export.hpp"

namespace tracefold {

namespace {

// Names of a symbolized site for the slice's args: where the call is, and
// the whole call path.
std::string site_args(const Trace& trace, SiteId id) {
  const CallSite& site = trace.sites.at(id);
  if (!label_frame(trace.symtab, site)) return "";
  std::string path;
  for (const std::string& p : site_path(trace.symtab, site))
    path += (path.empty() ? "" : " <- ") + p;
  return ",\"site_name\":" + json_string(site_label(trace.symtab, site)) +
         ",\"call_path\":" + json_string(path);
}

// The slice's name: the call, and the function it is made from when known.
std::string named_slice(const Trace& trace, const Event& ev) {
  const SourceFrame* src = innermost_source(trace.symtab, trace.sites.at(ev.site));
  return src ? slice_name(ev) + " @ " + src->function : slice_name(ev);
}

// Microseconds with nanosecond precision: exact, so slices that touch in
// nanoseconds touch in the JSON too.
std::string us(int64_t ns) {
  char buf[48];
  const int64_t a = ns < 0 ? -ns : ns;
  std::snprintf(buf, sizeof buf, "%s%lld.%03lld", ns < 0 ? "-" : "",
                static_cast<long long>(a / 1000), static_cast<long long>(a % 1000));
  return buf;
}

}  // namespace

std::string slice_name(const Event& ev) {
  std::string name = OpTable::name(ev.op) + " [site " + std::to_string(ev.site) + "]";
  const uint64_t bytes = event_bytes(ev);
  if (bytes > 0) name += " " + std::to_string(bytes) + " B";
  return name;
}

ExportSummary write_perfetto(std::ostream& out, const Trace& trace, const std::string& label,
                             const TraceTimeline& recorded_or_not, const ProgressFn& progress) {
  ExportSummary sum;
  const auto& timeline = recorded_or_not.ranks;
  const MatchResult match = match_messages(trace.comms, timeline);
  sum.messages = match.messages.size();
  sum.unmatched_sends = match.unmatched_sends;
  sum.unmatched_recvs = match.unmatched_recvs;

  out << "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{"
      << "\"timeline\":"
      << json_string(recorded_or_not.recorded ? "recorded" : "synthesized from folded trace means")
      << ","
      << "\"note\":"
      << json_string(
             recorded_or_not.recorded
                 ? recorded_or_not.describe() +
                       ": enter and exit times of every call, on rank 0's clock (offsets measured "
                       "at start and end)"
                 : "folded traces keep no timestamps: each rank's events are laid out back to "
                   "back with their node's mean computation time before and mean time in the "
                   "call; calls without a recorded time last " +
                       std::to_string(kNominalCallNs) + " ns; ranks are not synchronized")
      << ","
      << "\"flows\":\"from the send call to the call completing the receive (the Recv or "
         "Sendrecv, or the Wait/Test that completed an Irecv)\","
      << "\"source\":" << json_string(label) << ",\"ranks\":" << trace.world_size
      << (trace.threads > 1 ? ",\"threads\":" + std::to_string(trace.threads) : std::string())
      << ",\"lossy\":" << json_string(trace.lossy) << ",\"messages\":" << match.messages.size()
      << ",\"unmatched_sends\":" << match.unmatched_sends
      << ",\"unmatched_recvs\":" << match.unmatched_recvs
      << ",\"generator\":\"tracefold 0.1.0\"},\n"
      << "\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  std::size_t ranks_done = 0;
  // One process per rank, one track (tid) per thread that called MPI.
  for (const RankTimeline& tl : timeline) {
    report_progress(progress, ranks_done++, timeline.size());
    const int32_t r = tl.rank, tid = tl.thread;
    sep();
    if (tid == 0) {
      out << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << r
          << ",\"tid\":0,\"args\":{\"name\":\"rank " << r << "\"}},\n";
      out << "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" << r
          << ",\"tid\":0,\"args\":{\"sort_index\":" << r << "}},\n";
    }
    out << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << r << ",\"tid\":" << tid
        << ",\"args\":{\"name\":"
        << json_string(trace.threads > 1 ? "thread " + std::to_string(tid) + " MPI calls"
                                         : std::string("MPI calls"))
        << "}}";
    for (const TimedEvent& te : tl.events) {
      if (te.start_ns > te.compute_start_ns) {
        sep();
        out << "{\"name\":\"compute\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":" << r
            << ",\"tid\":" << tid << ",\"ts\":" << us(te.compute_start_ns)
            << ",\"dur\":" << us(te.start_ns - te.compute_start_ns) << "}";
      }
      sep();
      ++sum.slices;
      const Event& ev = te.ev;
      const OpClass c = classify(ev.op);
      const char* cat = c == OpClass::kCollective || c == OpClass::kICollective ? "collective"
                        : c == OpClass::kOther                                  ? "mpi"
                                                                                : "p2p";
      out << "{\"name\":" << json_string(named_slice(trace, ev)) << ",\"cat\":\"" << cat
          << "\",\"ph\":\"X\",\"pid\":" << r << ",\"tid\":" << tid << ",\"ts\":" << us(te.start_ns)
          << ",\"dur\":" << us(te.end_ns - te.start_ns)
          << ",\"args\":{\"op\":" << json_string(OpTable::name(ev.op)) << ",\"site\":" << ev.site
          << ",\"frames\":" << json_string(SiteTable::format(trace.sites.at(ev.site)))
          << site_args(trace, ev.site) << ",\"bytes\":" << event_bytes(ev) << ",\"time\":\""
          << (te.measured ? "measured"
              : te.timed  ? "recorded mean"
                          : "not recorded")
          << "\"";
      for (const FieldValue& f : ev.fields) {
        out << "," << json_string(FieldTable::name(f.field)) << ":";
        if (FieldTable::kind(f.field) == FieldKind::kList) {
          out << "[";
          for (std::size_t k = 0; k < f.list.size(); ++k)
            out << (k ? "," : "") << json_value(f.list[k]);
          out << "]";
        } else {
          out << json_value(f.scalar);
        }
      }
      out << "}}";
    }
  }
  // Flows: "s" inside the send slice, "f" (bound to the enclosing slice)
  // inside the receive's completion slice; the middle of each slice.
  uint64_t id = 0;
  report_progress(progress, timeline.size(), timeline.size());
  for (const Message& m : match.messages) {
    const RankTimeline& from = timeline[m.sender_stream];
    const RankTimeline& to = timeline[m.receiver_stream];
    const TimedEvent& s = from.events[m.send_event];
    const TimedEvent& f = to.events[m.recv_complete_event];
    ++id;
    sep();
    out << "{\"name\":\"message\",\"cat\":\"p2p\",\"ph\":\"s\",\"id\":" << id
        << ",\"pid\":" << m.sender << ",\"tid\":" << from.thread
        << ",\"ts\":" << us((s.start_ns + s.end_ns) / 2) << ",\"args\":{\"to\":" << m.receiver
        << ",\"tag\":" << m.tag << ",\"comm\":" << m.comm << ",\"bytes\":" << m.bytes << "}},\n";
    out << "{\"name\":\"message\",\"cat\":\"p2p\",\"ph\":\"f\",\"bp\":\"e\",\"id\":" << id
        << ",\"pid\":" << m.receiver << ",\"tid\":" << to.thread
        << ",\"ts\":" << us((f.start_ns + f.end_ns) / 2) << "}";
  }
  out << "\n]}\n";
  return sum;
}

}  // namespace tracefold
