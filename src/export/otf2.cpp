// OTF2 archive export through libotf2 (Debian: libotf2-trace-dev).
#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "export_util.hpp"
#include "tracefold/export.hpp"

#ifdef TRACEFOLD_HAVE_OTF2
#include <otf2/otf2.h>
#endif

namespace tracefold {

#ifndef TRACEFOLD_HAVE_OTF2

bool have_otf2() {
  return false;
}

ExportSummary write_otf2(const std::filesystem::path&, const Trace&, const std::string&,
                         const TraceTimeline&, const ProgressFn&) {
  throw std::runtime_error(
      "this tracefold was built without libotf2 (install libotf2-trace-dev and rebuild)");
}

#else

bool have_otf2() {
  return true;
}

namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) {
  return 0;
}

void check(OTF2_ErrorCode rc, const char* what) {
  if (rc != OTF2_SUCCESS)
    throw std::runtime_error(std::string("OTF2: ") + what + ": " + OTF2_Error_GetName(rc) + ": " +
                             OTF2_Error_GetDescription(rc));
}

OTF2_CollectiveOp collective_op(const std::string& n) {
  static const std::map<std::string, OTF2_CollectiveOp> ops = {
      {"MPI_Barrier", OTF2_COLLECTIVE_OP_BARRIER},
      {"MPI_Bcast", OTF2_COLLECTIVE_OP_BCAST},
      {"MPI_Gather", OTF2_COLLECTIVE_OP_GATHER},
      {"MPI_Gatherv", OTF2_COLLECTIVE_OP_GATHERV},
      {"MPI_Scatter", OTF2_COLLECTIVE_OP_SCATTER},
      {"MPI_Scatterv", OTF2_COLLECTIVE_OP_SCATTERV},
      {"MPI_Allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
      {"MPI_Allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
      {"MPI_Alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
      {"MPI_Alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
      {"MPI_Alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW},
      {"MPI_Allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE},
      {"MPI_Reduce", OTF2_COLLECTIVE_OP_REDUCE},
      {"MPI_Reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER},
      {"MPI_Reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK},
      {"MPI_Scan", OTF2_COLLECTIVE_OP_SCAN},
      {"MPI_Exscan", OTF2_COLLECTIVE_OP_EXSCAN}};
  auto it = ops.find(n);
  if (it == ops.end()) return OTF2_COLLECTIVE_OP_BARRIER;
  return it->second;
}

int64_t get(const Event& ev, const char* name) {
  auto id = FieldTable::find(name);
  return id ? ev.get(*id) : kAbsent;
}

uint32_t u32(int64_t v) {
  return is_sentinel(v) || v < 0 ? OTF2_UNDEFINED_UINT32 : static_cast<uint32_t>(v);
}

uint64_t list_sum(const Event& ev, const char* name, bool& found) {
  found = false;
  auto id = FieldTable::find(name);
  if (!id) return 0;
  const FieldValue* f = ev.find(*id);
  if (!f) return 0;
  found = true;
  uint64_t s = 0;
  for (int64_t v : f->list)
    if (!is_sentinel(v) && v > 0) s += uint64_t(v);
  return s;
}

// Bytes a collective sends and receives on this rank.
std::pair<uint64_t, uint64_t> collective_sizes(const Event& ev) {
  auto pos = [](int64_t v) -> uint64_t { return is_sentinel(v) || v < 0 ? 0 : uint64_t(v); };
  bool have = false;
  uint64_t count = pos(get(ev, "count"));
  if (uint64_t s = list_sum(ev, "counts", have); have) count = s;
  uint64_t rcount = pos(get(ev, "rcount"));
  bool rhave = rcount != 0 || get(ev, "rdsize") != kAbsent;
  if (uint64_t s = list_sum(ev, "rcounts", have); have) rcount = s, rhave = true;
  const uint64_t sent = count * pos(get(ev, "dsize"));
  const uint64_t received = rhave ? rcount * pos(get(ev, "rdsize")) : sent;
  return {sent, received};
}

}  // namespace

ExportSummary write_otf2(const std::filesystem::path& dir, const Trace& trace,
                         const std::string& label, const TraceTimeline& recorded_or_not,
                         const ProgressFn& progress) {
  namespace fs = std::filesystem;
  ExportSummary sum;
  const auto& timeline = recorded_or_not.ranks;
  const std::string how =
      recorded_or_not.recorded ? "recorded" : "synthesized from folded trace means";
  const MatchResult match = match_messages(trace.comms, timeline);
  sum.messages = match.messages.size();
  sum.unmatched_sends = match.unmatched_sends;
  sum.unmatched_recvs = match.unmatched_recvs;
  // Received sizes: what the matched send sent (else the receive buffer).
  std::map<std::pair<std::size_t, std::size_t>, uint64_t> recv_bytes;  // (stream, event)
  for (const Message& m : match.messages) recv_bytes[{m.receiver_stream, m.recv_event}] = m.bytes;
  // One location per stream: thread t of rank r is location t * P + r, so
  // a trace without threads keeps location = rank.
  auto location = [&](const RankTimeline& tl) {
    return static_cast<OTF2_LocationRef>(int64_t(tl.thread) * trace.world_size + tl.rank);
  };

  std::error_code ec;
  fs::create_directories(dir, ec);
  for (const char* old : {"traces.otf2", "traces.def", "traces"}) fs::remove_all(dir / old, ec);

  OTF2_Archive* archive =
      OTF2_Archive_Open(dir.string().c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
                        4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) throw std::runtime_error("OTF2: cannot create an archive in " + dir.string());
  struct Closer {
    OTF2_Archive* a;
    ~Closer() {
      if (a) OTF2_Archive_Close(a);
    }
  } closer{archive};
  OTF2_FlushCallbacks flush{pre_flush, post_flush};
  check(OTF2_Archive_SetFlushCallbacks(archive, &flush, nullptr), "flush callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "collective callbacks");
  check(OTF2_Archive_SetCreator(archive, ("tracefold 0.1.0 (timeline " + how + ")").c_str()),
        "creator");
  check(OTF2_Archive_SetDescription(archive, ("tracefold export of " + label).c_str()),
        "description");
  check(OTF2_Archive_SetProperty(archive, "TRACEFOLD::TIMELINE", how.c_str(), true), "property");

  // Definitions that events refer to: regions per (operation, call site),
  // communicators per group of the comm table.
  std::map<EventKey, OTF2_RegionRef> regions;
  std::map<const CommGroup*, OTF2_CommRef> comm_refs;
  for (const auto& [id, groups] : trace.comms.all())
    for (const CommGroup& g : groups)
      comm_refs.emplace(&g, static_cast<OTF2_CommRef>(comm_refs.size()));
  auto comm_ref = [&](const Event& ev, int32_t rank) -> OTF2_CommRef {
    int64_t c = get(ev, "comm");
    if (c == kAbsent) c = CommTable::kWorld;
    const CommGroup* g = trace.comms.group_of(c, rank);
    auto it = comm_refs.find(g);
    return it == comm_refs.end() ? OTF2_UNDEFINED_COMM : it->second;
  };

  check(OTF2_Archive_OpenEvtFiles(archive), "open event files");
  std::vector<uint64_t> event_counts(timeline.size(), 0);
  int64_t trace_end = 0;
  for (std::size_t stream = 0; stream < timeline.size(); ++stream) {
    const RankTimeline& tl = timeline[stream];
    report_progress(progress, stream, timeline.size());
    const int32_t r = tl.rank;
    trace_end = std::max(trace_end, tl.end_ns);
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, location(tl));
    if (!w) throw std::runtime_error("OTF2: no event writer for rank " + std::to_string(r));
    std::vector<Event> evs;
    evs.reserve(tl.events.size());
    for (const auto& te : tl.events) evs.push_back(te.ev);
    const RequestCompletions done = find_completions(evs);
    // Requests completed by event i: (creating event, is a receive).
    std::map<std::size_t, std::vector<std::size_t> > completes;
    for (std::size_t i = 0; i < evs.size(); ++i)
      if (done.done[i] != RequestCompletions::npos) completes[done.done[i]].push_back(i);
    uint64_t& n = event_counts[stream];
    for (std::size_t i = 0; i < tl.events.size(); ++i) {
      const TimedEvent& te = tl.events[i];
      const Event& ev = te.ev;
      const OTF2_TimeStamp t0 = static_cast<OTF2_TimeStamp>(te.start_ns),
                           t1 = static_cast<OTF2_TimeStamp>(te.end_ns);
      auto [rit, fresh] = regions.emplace(ev.key(), static_cast<OTF2_RegionRef>(regions.size()));
      (void)fresh;
      const OTF2_RegionRef region = rit->second;
      check(OTF2_EvtWriter_Enter(w, nullptr, t0, region), "enter");
      ++n;
      ++sum.slices;
      const OpClass c = classify(ev.op);
      const OTF2_CommRef comm = comm_ref(ev, r);
      const uint64_t req_id = i + 1;
      auto recv_size = [&] {
        auto it = recv_bytes.find({stream, i});
        return it != recv_bytes.end() ? it->second : send_bytes(ev);
      };
      // A receive's source and tag, the matched ones for wildcards.
      auto recv_source = [&](const Event& call, const Event& status, const char* src_field,
                             const char* tag_field) {
        int64_t s = get(call, src_field), tag = get(call, tag_field);
        if (s == kAny) s = get(status, "src");
        if (tag == kAny) tag = get(status, "mtag");
        return std::pair<int64_t, int64_t>{s, tag};
      };
      if (c == OpClass::kSend || c == OpClass::kSendrecv) {
        const int64_t peer = get(ev, "peer");
        if (!is_sentinel(peer)) {
          check(OTF2_EvtWriter_MpiSend(w, nullptr, t0, u32(peer), comm, u32(get(ev, "tag")),
                                       send_bytes(ev)),
                "send");
          ++n;
        }
      } else if (c == OpClass::kIsend) {
        if (!is_sentinel(get(ev, "peer"))) {
          check(OTF2_EvtWriter_MpiIsend(w, nullptr, t0, u32(get(ev, "peer")), comm,
                                        u32(get(ev, "tag")), send_bytes(ev), req_id),
                "isend");
          ++n;
        }
      } else if (c == OpClass::kIrecv) {
        if (!is_sentinel(get(ev, "peer")) || get(ev, "peer") == kAny) {
          check(OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, t0, req_id), "irecv request");
          ++n;
        }
      } else if (c == OpClass::kCollective) {
        check(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t0), "collective begin");
        ++n;
      }
      if (c == OpClass::kRecv || c == OpClass::kSendrecv) {
        const bool sr = c == OpClass::kSendrecv;
        auto [s, tag] = recv_source(ev, ev, sr ? "rpeer" : "peer", sr ? "rtag" : "tag");
        if (s != kNull) {
          check(OTF2_EvtWriter_MpiRecv(w, nullptr, t1, u32(s), comm, u32(tag), recv_size()),
                "recv");
          ++n;
        }
      }
      if (auto it = completes.find(i); it != completes.end()) {
        for (std::size_t k : it->second) {
          const Event& created = evs[k];
          const OpClass cc = classify(created.op);
          if (cc == OpClass::kIsend && !is_sentinel(get(created, "peer"))) {
            check(OTF2_EvtWriter_MpiIsendComplete(w, nullptr, t1, k + 1), "isend complete");
            ++n;
          } else if (cc == OpClass::kIrecv && get(created, "peer") != kNull) {
            Event status;
            status.fields = {};
            if (done.src[k] != kAbsent) status.set(FieldTable::src(), done.src[k]);
            if (auto mt = FieldTable::find("mtag"); mt && done.mtag[k] != kAbsent)
              status.set(*mt, done.mtag[k]);
            auto [s, tag] = recv_source(created, status, "peer", "tag");
            auto rb = recv_bytes.find({stream, k});
            check(OTF2_EvtWriter_MpiIrecv(w, nullptr, t1, u32(s), comm_ref(created, r), u32(tag),
                                          rb != recv_bytes.end() ? rb->second : send_bytes(created),
                                          k + 1),
                  "irecv");
            ++n;
          }
        }
      }
      if (c == OpClass::kCollective) {
        auto [sent, received] = collective_sizes(ev);
        check(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t1, collective_op(OpTable::name(ev.op)),
                                              comm, u32(get(ev, "root")), sent, received),
              "collective end");
        ++n;
      }
      check(OTF2_EvtWriter_Leave(w, nullptr, t1, region), "leave");
      ++n;
    }
    check(OTF2_Archive_CloseEvtWriter(archive, w), "close event writer");
  }
  report_progress(progress, timeline.size(), timeline.size());
  check(OTF2_Archive_CloseEvtFiles(archive), "close event files");

  check(OTF2_Archive_OpenDefFiles(archive), "open definition files");
  for (const RankTimeline& tl : timeline) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive, location(tl));
    if (!dw) throw std::runtime_error("OTF2: no definition writer");
    check(OTF2_Archive_CloseDefWriter(archive, dw), "close definition writer");
  }
  check(OTF2_Archive_CloseDefFiles(archive), "close definition files");

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (!g) throw std::runtime_error("OTF2: no global definition writer");
  check(OTF2_GlobalDefWriter_WriteClockProperties(
            g, 1000000000, 0, static_cast<uint64_t>(trace_end) + 1, OTF2_UNDEFINED_TIMESTAMP),
        "clock");
  std::map<std::string, OTF2_StringRef> strings;
  auto str = [&](const std::string& s) {
    auto [it, fresh] = strings.emplace(s, static_cast<OTF2_StringRef>(strings.size()));
    if (fresh) check(OTF2_GlobalDefWriter_WriteString(g, it->second, s.c_str()), "string");
    return it->second;
  };
  str("");
  // Definitions must come in ascending id order.
  std::vector<std::pair<OTF2_RegionRef, EventKey> > by_ref;
  for (const auto& [key, ref] : regions) by_ref.emplace_back(ref, key);
  std::sort(by_ref.begin(), by_ref.end());
  for (const auto& [ref, key] : by_ref) {
    const std::string op = OpTable::name(key.op);
    const CallSite& site = trace.sites.at(key.site);
    const std::string frames = SiteTable::format(site);
    const std::string label = site_label(trace.symtab, site);
    // A named site: the region says where the call is, with the source
    // location of its innermost application frame and the whole path in
    // the description; the canonical name stays the MPI function.
    const SourceFrame* src = innermost_source(trace.symtab, site);
    std::string path;
    for (const std::string& p : site_path(trace.symtab, site))
      path += (path.empty() ? "" : " <- ") + p;
    const bool named = label != frames;
    check(OTF2_GlobalDefWriter_WriteRegion(
              g, ref, str(named ? op + " @ " + label : op), str(op),
              str("call site " + std::to_string(key.site) + ": " + (named ? path : frames)),
              OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE,
              str(src && !src->file.empty() ? src->file : frames), src ? src->line : 0,
              src ? src->line : 0),
          "region");
  }
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, str("tracefold synthesized run"),
                                                 str("machine"), OTF2_UNDEFINED_SYSTEM_TREE_NODE),
        "system tree");
  // A location group per rank; a location per stream, in the group of its
  // rank. The timeline lists every rank's first thread first.
  for (std::size_t stream = 0; stream < timeline.size(); ++stream) {
    const RankTimeline& tl = timeline[stream];
    const auto group = static_cast<uint32_t>(tl.rank);
    if (tl.thread == 0)
      check(OTF2_GlobalDefWriter_WriteLocationGroup(
                g, group, str("rank " + std::to_string(tl.rank)), OTF2_LOCATION_GROUP_TYPE_PROCESS,
                0, OTF2_UNDEFINED_LOCATION_GROUP),
            "location group");
    // Named as every other view names the location (Trace::location_name):
    // `rank R thread T` with threads, thread 0 included, else `rank R`.
    const std::string name = trace.location_name(tl.thread * trace.world_size + tl.rank);
    check(
        OTF2_GlobalDefWriter_WriteLocation(
            g, location(tl), str(name), OTF2_LOCATION_TYPE_CPU_THREAD, event_counts[stream], group),
        "location");
  }
  // Group 0: the location of each world rank's MPI (its first thread, whose
  // location is the rank); then one group and one communicator per group of
  // the comm table.
  std::vector<uint64_t> all;
  for (int32_t r = 0; r < trace.world_size; ++r) all.push_back(uint64_t(r));
  check(OTF2_GlobalDefWriter_WriteGroup(g, 0, str("MPI locations"), OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                        static_cast<uint32_t>(all.size()), all.data()),
        "locations group");
  for (const auto& [id, groups] : trace.comms.all()) {
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const CommGroup& grp = groups[gi];
      const OTF2_CommRef ref = comm_refs.at(&grp);
      std::vector<uint64_t> members(grp.members.begin(), grp.members.end());
      std::string name = id == CommTable::kWorld ? "MPI_COMM_WORLD" : "comm " + std::to_string(id);
      if (groups.size() > 1) name += " group " + std::to_string(gi);
      check(OTF2_GlobalDefWriter_WriteGroup(g, ref + 1, str(name), OTF2_GROUP_TYPE_COMM_GROUP,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                            static_cast<uint32_t>(members.size()), members.data()),
            "comm group");
      check(OTF2_GlobalDefWriter_WriteComm(g, ref, str(name), ref + 1, OTF2_UNDEFINED_COMM,
                                           OTF2_COMM_FLAG_NONE),
            "comm");
    }
  }
  closer.a = nullptr;
  check(OTF2_Archive_Close(archive), "close archive");
  return sum;
}

#endif

}  // namespace tracefold
