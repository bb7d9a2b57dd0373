// Point-to-point operations: sends of every mode, receives, probes,
// matched probes, persistent starts.
#include "engine.hpp"

namespace tracefold::replay_detail {

void Engine::point_send(const Event& ev, const OpInfo& info) {
  MPI_Comm c = comm_of(ev, f_.comm);
  MPI_Datatype t = datatype_of(ev, f_.dtype, f_.dsize);
  const int count = count_of(ev, f_.count);
  const int dest = rank_arg(ev.get(f_.peer));
  const int tag = tag_arg(ev.get(f_.tag));
  const std::size_t bytes = static_cast<std::size_t>(count) * extent_of(t);
  int size = 0;
  PMPI_Type_size(t, &size);
  if (dest != MPI_PROC_NULL && info.kind == Kind::kSend)
    bytes_sent_ += static_cast<uint64_t>(count) * static_cast<uint64_t>(size);
  if (!info.nonblocking) {
    char* buf = scratch(send_buf_, bytes);
    switch (info.variant) {
      case Variant::kBuffered:
        MPI_Bsend(buf, count, t, dest, tag, c);
        break;
      case Variant::kSynchronous:
        MPI_Ssend(buf, count, t, dest, tag, c);
        break;
      case Variant::kReady:
        MPI_Rsend(buf, count, t, dest, tag, c);
        break;
      default:
        MPI_Send(buf, count, t, dest, tag, c);
    }
    return;
  }
  RequestSlot& s = new_slot();
  char* buf = scratch(s.send, bytes);
  if (info.kind == Kind::kSend) {
    switch (info.variant) {
      case Variant::kBuffered:
        MPI_Ibsend(buf, count, t, dest, tag, c, &s.handle);
        break;
      case Variant::kSynchronous:
        MPI_Issend(buf, count, t, dest, tag, c, &s.handle);
        break;
      case Variant::kReady:
        MPI_Irsend(buf, count, t, dest, tag, c, &s.handle);
        break;
      default:
        MPI_Isend(buf, count, t, dest, tag, c, &s.handle);
    }
  } else {
    s.persistent = true;
    // Counted at each MPI_Start, when the message goes out.
    s.send_bytes =
        dest == MPI_PROC_NULL ? 0 : static_cast<uint64_t>(count) * static_cast<uint64_t>(size);
    switch (info.variant) {
      case Variant::kBuffered:
        MPI_Bsend_init(buf, count, t, dest, tag, c, &s.handle);
        break;
      case Variant::kSynchronous:
        MPI_Ssend_init(buf, count, t, dest, tag, c, &s.handle);
        break;
      case Variant::kReady:
        MPI_Rsend_init(buf, count, t, dest, tag, c, &s.handle);
        break;
      default:
        MPI_Send_init(buf, count, t, dest, tag, c, &s.handle);
    }
  }
  made_request();
}

std::pair<int, int> Engine::source_and_tag(const Event& ev, FieldId peer_field, FieldId tag_field) {
  int src = rank_arg(ev.get(peer_field));
  int tag = tag_arg(ev.get(tag_field));
  if (opts_.deterministic) {
    if (src == MPI_ANY_SOURCE && ev.get(f_.src) != kAbsent) src = rank_arg(ev.get(f_.src));
    if (tag == MPI_ANY_TAG && ev.get(f_.mtag) != kAbsent) tag = tag_arg(ev.get(f_.mtag));
  }
  return {src, tag};
}

void Engine::point_recv(const Event& ev, const OpInfo& info) {
  MPI_Comm c = comm_of(ev, f_.comm);
  MPI_Datatype t = datatype_of(ev, f_.dtype, f_.dsize);
  const int count = count_of(ev, f_.count);
  auto [src, tag] = source_and_tag(ev, f_.peer, f_.tag);
  const std::size_t bytes = static_cast<std::size_t>(count) * extent_of(t);
  if (!info.nonblocking) {
    MPI_Recv(scratch(recv_buf_, bytes), count, t, src, tag, c, status_like(ev));
    return;
  }
  RequestSlot& s = new_slot();
  char* buf = scratch(s.recv, bytes);
  if (opts_.deterministic && (src == MPI_ANY_SOURCE || tag == MPI_ANY_TAG)) {
    // The match is on the completion, later: look it up by the number
    // this request is about to get.
    auto it = matched_.find(request_events_ + 1);
    if (it != matched_.end()) {
      if (src == MPI_ANY_SOURCE && it->second.first != kAbsent) src = rank_arg(it->second.first);
      if (tag == MPI_ANY_TAG && it->second.second != kAbsent) tag = tag_arg(it->second.second);
    }
  }
  if (info.kind == Kind::kRecvInit) {
    s.persistent = true;
    if (opts_.deterministic && (src == MPI_ANY_SOURCE || tag == MPI_ANY_TAG)) {
      s.wild_persistent = true;
      s.wild_count = count;
      s.wild_src = src;
      s.wild_tag = tag;
      s.wild_type = t;
      s.wild_comm = c;
    }
    MPI_Recv_init(buf, count, t, src, tag, c, &s.handle);
  } else {
    MPI_Irecv(buf, count, t, src, tag, c, &s.handle);
  }
  made_request();
}

void Engine::sendrecv(const Event& ev, const OpInfo& info) {
  MPI_Comm c = comm_of(ev, f_.comm);
  MPI_Datatype st = datatype_of(ev, f_.dtype, f_.dsize);
  const int scount = count_of(ev, f_.count);
  const int dest = rank_arg(ev.get(f_.peer));
  const int stag = tag_arg(ev.get(f_.tag));
  auto [src, rtag] = source_and_tag(ev, f_.rpeer, f_.rtag);
  int size = 0;
  PMPI_Type_size(st, &size);
  if (dest != MPI_PROC_NULL)
    bytes_sent_ += static_cast<uint64_t>(scount) * static_cast<uint64_t>(size);
  if (info.name == "MPI_Sendrecv_replace") {
    MPI_Sendrecv_replace(scratch(recv_buf_, static_cast<std::size_t>(scount) * extent_of(st)),
                         scount, st, dest, stag, src, rtag, c, status_like(ev));
    return;
  }
  MPI_Datatype rt = datatype_of(ev, f_.rdtype, f_.rdsize);
  const int rcount = count_of(ev, f_.rcount);
  char* sbuf = scratch(send_buf_, static_cast<std::size_t>(scount) * extent_of(st));
  char* rbuf = scratch(recv_buf_, static_cast<std::size_t>(rcount) * extent_of(rt));
  MPI_Sendrecv(sbuf, scount, st, dest, stag, rbuf, rcount, rt, src, rtag, c, status_like(ev));
}

void Engine::probe(const Event& ev, const OpInfo& info) {
  MPI_Comm c = comm_of(ev, f_.comm);
  auto [src, tag] = source_and_tag(ev, f_.peer, f_.tag);
  if (!info.nonblocking) {
    MPI_Probe(src, tag, c, status_like(ev));
    return;
  }
  int flag = 0;
  const std::string problem =
      force_iprobe(src, tag, c, ev.get(f_.flag) == 1, status_like(ev), nullptr, &flag);
  if (!problem.empty()) warn(ev, problem);
}

void Engine::mprobe(const Event& ev, const OpInfo& info) {
  MPI_Comm c = comm_of(ev, f_.comm);
  auto [src, tag] = source_and_tag(ev, f_.peer, f_.tag);
  MPI_Message m = MPI_MESSAGE_NULL;
  if (!info.nonblocking) {
    MPI_Mprobe(src, tag, c, &m, status_like(ev));
  } else {
    int flag = 0;
    const std::string problem =
        force_iprobe(src, tag, c, ev.get(f_.flag) == 1, status_like(ev), &m, &flag);
    if (!problem.empty()) warn(ev, problem);
    if (!flag) return;
  }
  messages_.push_back(m);
}

void Engine::mrecv(const Event& ev, const OpInfo& info) {
  if (messages_.empty()) fail(ev, "receives a probed message, but no MPI_Mprobe found one");
  MPI_Message m = messages_.front();
  messages_.pop_front();
  MPI_Datatype t = datatype_of(ev, f_.dtype, f_.dsize);
  const int count = count_of(ev, f_.count);
  const std::size_t bytes = static_cast<std::size_t>(count) * extent_of(t);
  if (!info.nonblocking) {
    MPI_Mrecv(scratch(recv_buf_, bytes), count, t, &m, status_like(ev));
    return;
  }
  RequestSlot& s = new_slot();
  MPI_Imrecv(scratch(s.recv, bytes), count, t, &m, &s.handle);
  made_request();
}

void Engine::start(const Event& ev, const OpInfo& info) {
  auto slots = linked(ev);
  // Probabilistic replay posts receives from its plan, not from the
  // trace: their persistent requests do not exist here.
  if (prob_) slots.erase(std::remove(slots.begin(), slots.end(), -1), slots.end());
  std::vector<MPI_Request> handles(slots.size(), MPI_REQUEST_NULL);
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (slots[i] < 0) fail(ev, "starts a request the trace never created");
    handles[i] = slots_[static_cast<std::size_t>(slots[i])].handle;
    bytes_sent_ += slots_[static_cast<std::size_t>(slots[i])].send_bytes;
  }
  if (info.name == "MPI_Start") {
    if (handles.size() > 1 || (handles.empty() && !prob_))
      fail(ev, "MPI_Start without exactly one request link");
    RequestSlot* wild = handles.empty() ? nullptr : &slots_[static_cast<std::size_t>(slots[0])];
    auto match =
        wild && wild->wild_persistent ? matched_.find(request_events_ + 1) : matched_.end();
    if (match != matched_.end()) {
      // A persistent request cannot change its source from one start to
      // the next: this start posts a plain receive of the same arguments
      // naming what the original matched (its completion said so), and
      // the persistent request waits until that receive completes.
      int src = wild->wild_src, tag = wild->wild_tag;
      if (src == MPI_ANY_SOURCE && match->second.first != kAbsent)
        src = rank_arg(match->second.first);
      if (tag == MPI_ANY_TAG && match->second.second != kAbsent)
        tag = tag_arg(match->second.second);
      wild->parked = wild->handle;
      MPI_Irecv(wild->recv.data(), wild->wild_count, wild->wild_type, src, tag, wild->wild_comm,
                &wild->handle);
    } else if (!handles.empty()) {
      MPI_Start(handles.data());
    }
  } else {
    MPI_Startall(static_cast<int>(handles.size()), handles.data());
  }
  const uint64_t number = ++request_events_;
  for (std::ptrdiff_t i : slots) {
    forget_number(static_cast<std::size_t>(i));
    slots_[static_cast<std::size_t>(i)].number = number;
    by_number_[number].push_back(static_cast<std::size_t>(i));
  }
}

}  // namespace tracefold::replay_detail
