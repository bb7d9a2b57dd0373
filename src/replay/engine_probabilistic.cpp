// Probabilistic replay (seed 000, 5.2.6): receives planned from the
// senders' draws.
#include "engine.hpp"

namespace tracefold::replay_detail {

void Engine::enable_probabilistic() {
  prob_ = true;
  lossy_ = std::make_unique<LossyResolver>(trace_, rank_, opts_.seed);
  plan_incoming();
}

void Engine::add_incoming(int32_t sender, const Event& ev, double est, uint64_t order) {
  const int64_t peer = ev.get(f_.peer);
  if (is_sentinel(peer)) return;
  const int64_t comm = ev.get(f_.comm) == kAbsent ? CommTable::kWorld : ev.get(f_.comm);
  const CommGroup* g = trace_.comms.group_of(comm, sender);
  if (!g || peer < 0 || peer >= static_cast<int64_t>(g->members.size())) return;
  if (g->members[static_cast<std::size_t>(peer)] != rank_) return;
  Incoming in;
  in.est_ns = est;
  in.sender = sender;
  in.comm = comm;
  in.source = trace_.comms.rank_in(comm, sender);
  in.tag = tag_arg(ev.get(f_.tag));
  in.count = count_of(ev, f_.count);
  in.dtype = ev.get(f_.dtype);
  in.dsize = ev.get(f_.dsize);
  in.order = order;
  incoming_.push_back(in);
}

void Engine::plan_incoming() {
  for (int32_t s = 0; s < trace_.world_size; ++s) {
    LossyResolver draws(trace_, s, opts_.seed);
    RankIterator it(trace_, s);
    Event ev;
    double t = 0;
    uint64_t numbers = 0, order = 0;
    std::unordered_map<uint64_t, std::vector<Event>> persistent;  // number -> send inits
    while (it.next(ev)) {
      const OpInfo& info = table_[ev.op];
      t += static_cast<double>(std::max<int64_t>(ev.compute_ns, 0));
      const bool send = info.kind == Kind::kSend || info.kind == Kind::kSendrecv;
      if (send || info.kind == Kind::kSendInit) draws.resolve(ev, it.current_node(), false);
      if (send) add_incoming(s, ev, t, order++);
      if (info.kind != Kind::kStart && OpTable::makes_request(ev.op)) {
        ++numbers;
        if (info.kind == Kind::kSendInit) persistent[numbers].push_back(ev);
      }
      if (info.kind == Kind::kStart) {
        std::vector<Event> started;
        std::unordered_map<uint64_t, std::size_t> seen;
        if (const FieldValue* links = ev.find(f_.links)) {
          for (int64_t d : links->list) {
            if (d <= 0 || static_cast<uint64_t>(d) > numbers) continue;
            const uint64_t n = numbers - static_cast<uint64_t>(d) + 1;
            auto p = persistent.find(n);
            const std::size_t k = seen[n]++;
            if (p == persistent.end() || k >= p->second.size()) continue;
            started.push_back(p->second[k]);
          }
        }
        ++numbers;
        for (const Event& init : started) add_incoming(s, init, t, order++);
        // A started persistent request is named by the start from now on.
        if (!started.empty()) persistent[numbers] = started;
      }
      t += static_cast<double>(std::max<int64_t>(ev.comm_ns, 0));
    }
  }
  std::stable_sort(incoming_.begin(), incoming_.end(),
                   [](const Incoming& a, const Incoming& b) { return a.est_ns < b.est_ns; });
  // MPI matches messages of one sender, tag and communicator in order:
  // post them in the sender's order whatever their estimated times.
  std::map<std::tuple<int32_t, int64_t, int>, std::vector<std::size_t>> streams;
  for (std::size_t i = 0; i < incoming_.size(); ++i)
    streams[{incoming_[i].sender, incoming_[i].comm, incoming_[i].tag}].push_back(i);
  std::vector<Incoming> ordered = incoming_;
  for (auto& [key, idx] : streams) {
    std::vector<Incoming> msgs;
    for (std::size_t i : idx) msgs.push_back(incoming_[i]);
    std::sort(msgs.begin(), msgs.end(),
              [](const Incoming& a, const Incoming& b) { return a.order < b.order; });
    for (std::size_t k = 0; k < idx.size(); ++k) {
      const double slot_time = incoming_[idx[k]].est_ns;
      ordered[idx[k]] = msgs[k];
      ordered[idx[k]].est_ns = slot_time;
    }
  }
  incoming_ = std::move(ordered);
}

bool Engine::post_next() {
  if (next_incoming_ >= incoming_.size()) return false;
  const Incoming& in = incoming_[next_incoming_];
  auto c = comms_.find(in.comm);
  MPI_Comm comm = MPI_COMM_NULL;
  if (c != comms_.end())
    comm = c->second;
  else if (in.comm == CommTable::kWorld)
    comm = MPI_COMM_WORLD;
  if (comm == MPI_COMM_NULL) return false;  // made later by this rank
  Event shape;
  if (in.dtype != kAbsent) shape.set(f_.dtype, in.dtype);
  if (in.dsize != kAbsent) shape.set(f_.dsize, in.dsize);
  MPI_Datatype t = datatype_of(shape, f_.dtype, f_.dsize);
  posted_.emplace_back();
  Posted& p = posted_.back();
  p.buf.resize(std::max<std::size_t>(static_cast<std::size_t>(in.count) * extent_of(t), 1));
  PMPI_Irecv(p.buf.data(), in.count, t, in.source, in.tag, comm, &p.handle);
  ++next_incoming_;
  return true;
}

void Engine::post_due() {
  while (next_incoming_ < incoming_.size() && incoming_[next_incoming_].est_ns <= est_ns_)
    if (!post_next()) break;
  // Completed receives give their buffers back.
  while (!posted_.empty()) {
    int done = 0;
    PMPI_Test(&posted_.front().handle, &done, MPI_STATUS_IGNORE);
    if (!done) break;
    posted_.pop_front();
  }
}

void Engine::post_all_postable() {
  while (post_next()) {
  }
}

void Engine::progress_until_ready(const std::vector<MPI_Request>& handles, bool any) {
  uint64_t idle = 0;
  for (;;) {
    bool all = true, some = false, active = false;
    for (MPI_Request r : handles) {
      if (r == MPI_REQUEST_NULL) continue;
      active = true;
      int flag = 0;
      PMPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
      if (flag)
        some = true;
      else
        all = false;
    }
    if (!active || (any ? some : all)) return;
    if (++idle % 64 == 0) post_next();
  }
}

void Engine::finish_probabilistic() {
  post_all_postable();
  if (next_incoming_ < incoming_.size()) {
    const Incoming& in = incoming_[next_incoming_];
    throw ReplayError("rank " + std::to_string(rank_) + ": a message from rank " +
                      std::to_string(in.sender) + " is planned on communicator " +
                      std::to_string(in.comm) + ", which this rank never created");
  }
  for (Posted& p : posted_) PMPI_Wait(&p.handle, MPI_STATUS_IGNORE);
  posted_.clear();
}

void Engine::send_now(const Event& ev, int dest, int tag, MPI_Comm c) {
  MPI_Datatype t = datatype_of(ev, f_.dtype, f_.dsize);
  const int count = count_of(ev, f_.count);
  int size = 0;
  PMPI_Type_size(t, &size);
  if (dest != MPI_PROC_NULL)
    bytes_sent_ += static_cast<uint64_t>(count) * static_cast<uint64_t>(size);
  MPI_Request r;
  PMPI_Isend(scratch(send_buf_, static_cast<std::size_t>(count) * extent_of(t)), count, t, dest,
             tag, c, &r);
  progress_until_ready({r});
  PMPI_Wait(&r, MPI_STATUS_IGNORE);
}

void Engine::issue_probabilistic(const Event& ev, const OpInfo& info) {
  switch (info.kind) {
    case Kind::kRecv:
    case Kind::kRecvInit:
      // Posted from the plan instead; a request-making receive still
      // takes its number so later links resolve.
      if (info.nonblocking) ++request_events_;
      return;
    case Kind::kProbe:
    case Kind::kMprobe:
    case Kind::kMrecv:
      if (info.kind == Kind::kMrecv && info.nonblocking) ++request_events_;
      return;
    case Kind::kSend:
      if (!info.nonblocking) {
        send_now(ev, rank_arg(ev.get(f_.peer)), tag_arg(ev.get(f_.tag)), comm_of(ev, f_.comm));
        return;
      }
      return point_send(ev, info);
    case Kind::kSendrecv:
      send_now(ev, rank_arg(ev.get(f_.peer)), tag_arg(ev.get(f_.tag)), comm_of(ev, f_.comm));
      return;
    case Kind::kComplete: {
      const Variant v = info.variant;
      if (v == Variant::kWait || v == Variant::kWaitall || v == Variant::kWaitany ||
          v == Variant::kWaitsome) {
        auto slots = linked(ev);
        std::vector<MPI_Request> handles;
        for (std::ptrdiff_t i : slots)
          if (i >= 0) handles.push_back(slots_[static_cast<std::size_t>(i)].handle);
        progress_until_ready(handles, v == Variant::kWaitany || v == Variant::kWaitsome);
      }
      return complete(ev);
    }
    default:
      if (op_traits(ev.op).collective() && !info.nonblocking) post_all_postable();
      return issue(ev, info);
  }
}

}  // namespace tracefold::replay_detail
