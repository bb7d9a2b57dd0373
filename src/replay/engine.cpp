// The engine's walk, its computation gaps, argument conversion and dispatch.
#include "engine.hpp"
#include "tracefold/trace_query.hpp"

namespace tracefold::replay_detail {

void Engine::release_mpi_objects() {
  types_.release();
  for (auto& [id, op] : user_ops_) PMPI_Op_free(&op);
  user_ops_.clear();
}

void Engine::prescan_wildcards() {
  RankIterator it(trace_, location_);
  Event ev;
  uint64_t numbers = 0;
  // Request numbers of wildcard MPI_Irecvs: the positions the list forms'
  // entries belong to. Persistent receives are numbered by their starts,
  // which say nothing of wildcards; a completion mixing them in does not
  // line up and is left unresolved.
  std::vector<bool> wild_numbers(1, false);
  std::vector<bool> wild;
  while (it.next(ev)) {
    const OpInfo& info = table_[ev.op];
    if (OpTable::makes_request(ev.op)) {
      ++numbers;
      wild_numbers.push_back(is_wildcard_receive(ev) && info.kind != Kind::kRecvInit);
    }
    if (info.kind != Kind::kComplete) continue;
    const FieldValue* links = ev.find(f_.links);
    if (!links) continue;
    auto number_of = [&](int64_t d) -> uint64_t {
      if (is_sentinel(d) || d <= 0 || static_cast<uint64_t>(d) > numbers) return 0;
      return numbers - static_cast<uint64_t>(d) + 1;
    };
    wild.assign(links->list.size(), false);
    for (std::size_t k = 0; k < links->list.size(); ++k)
      wild[k] = wild_numbers[number_of(links->list[k])];
    // Wait/Test of a single request: its src/mtag apply whatever the
    // request was (a persistent wildcard receive is numbered by its start).
    if (links->list.size() == 1 && number_of(links->list[0]) != 0) wild[0] = true;
    const std::vector<WildcardMatch> matches = wildcard_matches(ev, wild);
    for (std::size_t k = 0; k < matches.size(); ++k) {
      if (matches[k].outcome != WildcardOutcome::kMatched) continue;
      matched_[number_of(links->list[k])] = {matches[k].src, matches[k].tag};
    }
  }
}

void Engine::ordered_issue(const Event& ev, const OpInfo& info) {
  const OrderKeys keys = order_keys(ev);
  // A call's place among the rank's calls on its key: the thread's own
  // calls on it so far plus the other threads' calls the recorder saw
  // between them. A blocking call lets the next one go when it returns, as
  // the recorder counted it then.
  const auto place = [&](const std::optional<OrderKey>& key, FieldId others) -> uint64_t {
    if (!key) return 0;
    uint64_t& next = order_next_[*key];
    if (const int64_t n = ev.get(others); n > 0) next += static_cast<uint64_t>(n);
    return next++;
  };
  const uint64_t send_turn = place(keys.send, others_field());
  const uint64_t recv_turn = place(keys.recv, keys.recv_field());
  if (keys.send) shared_->await_turn(*keys.send, send_turn);
  if (keys.recv) shared_->await_turn(*keys.recv, recv_turn);
  issue(ev, info);
  if (keys.send) shared_->took_turn(*keys.send);
  if (keys.recv) shared_->took_turn(*keys.recv);
}

void Engine::run() {
  RankIterator it(trace_, location_);
  Event ev;
  EventKey prev = kStartKey;
  last_exit_ns_ = now_ns();  // stands for the end of MPI_Init
  uint64_t events = 0;
  while (it.next(ev)) {
    // Another thread freeing a communicator waits until this one is past
    // its last call on it.
    if (shared_) shared_->progress(thread_, events++);
    const OpInfo& info = table_[ev.op];
    if (info.kind == Kind::kInit) {
      prev = ev.key();
      continue;  // MPI is already initialized by the caller
    }
    if (info.kind == Kind::kMarker) {
      compute(ev, it.current_node(), prev);
      prev = ev.key();
      continue;
    }
    compute(ev, it.current_node(), prev);
    prev = ev.key();
    if (info.kind == Kind::kFinalize) break;
    const uint64_t sent_before = bytes_sent_;
    node_ = it.current_node() ? it.current_node() - trace_.nodes.data() : -1;
    if (prob_) {
      lossy_->resolve(ev, it.current_node(), op_traits(ev.op).collective());
      if (op_traits(ev.op).collective()) lossy_->raise_receives(ev, it.current_node());
      est_ns_ += static_cast<double>(std::max<int64_t>(ev.compute_ns, 0));
      post_due();
      issue_probabilistic(ev, info);
      est_ns_ += static_cast<double>(std::max<int64_t>(ev.comm_ns, 0));
    } else if (shared_ && shared_->ordered()) [[unlikely]] {
      ordered_issue(ev, info);
    } else {
      issue(ev, info);
    }
    last_exit_ns_ = now_ns();
    ++calls_;
    ++position_;
    auto& c = per_op_[ev.op];
    ++c.first;
    c.second += bytes_sent_ - sent_before;
  }
  if (prob_) finish_probabilistic();
  if (shared_) shared_->finished(thread_);
}

void Engine::warn(const Event& ev, const std::string& what) const {
  std::fprintf(stderr, "tracefold replay: warning: %s, node #%td, event %" PRIu64 " (%s): %s\n",
               who().c_str(), node_, position_, OpTable::name(ev.op).c_str(), what.c_str());
}

bool Engine::scaled(const Event& ev) const {
  return opts_.scale_sites.empty() || opts_.scale_sites.count(ev.site) != 0;
}

void Engine::compute(const Event& ev, const Node* node, EventKey prev) {
  if (opts_.compute == ComputeMode::kNone) return;
  if (opts_.clock == ComputeClock::kCpu && compute_cpu(ev, node, prev)) return;
  int64_t ns = ev.compute_ns;
  if (opts_.timing == TimingMode::kSample && node) {
    const Timing* t = node->timing_after(prev);
    if (t && !t->compute.empty()) ns = sample(t->compute);
  }
  if (ns <= 0) return;
  if (scaled(ev)) ns = std::llround(static_cast<double>(ns) * opts_.compute_scale);
  if (ns <= 0) return;
  // The gap runs from the end of the previous call, as it was recorded:
  // the replayer's own walk to this event is part of it, not added to it.
  const int64_t left = gap_left(ns);
  if (left <= 0) return;
  if (opts_.compute == ComputeMode::kSleep) {
    timespec ts{static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return;
  }
  spin_until(now_ns() + left);
}

int64_t Engine::gap_left(int64_t ns) {
  return gaps_.left(last_exit_ns_, ns, now_ns());  // run() sets last_exit_ns_ first
}

bool Engine::compute_cpu(const Event& ev, const Node* node, EventKey prev) {
  const Timing* t = node ? node->timing_after(prev) : nullptr;
  if (!t) return false;
  const auto st = std::find_if(t->stats.begin(), t->stats.end(),
                               [](const auto& s) { return s.first == kComputeCpuStatistic; });
  // Calls without the statistic (MPI_Init) keep their wall time.
  if (st == t->stats.end() || st->second.empty()) return false;
  int64_t ns =
      opts_.timing == TimingMode::kSample ? sample(st->second) : std::llround(st->second.mean());
  if (scaled(ev)) ns = std::llround(static_cast<double>(ns) * opts_.compute_scale);
  // From the end of the previous call, as recorded: the replayer's own
  // walk to this event is part of it. The walk is timed on the wall clock:
  // it is a few microseconds, and reading the processor clock is a system
  // call (about a microsecond in a virtual machine), too dear to read after
  // every call of a program that makes a hundred calls in a row with
  // nothing between them. Short gaps spin on the wall clock alone.
  const int64_t wall_left = gap_left(ns);
  if (wall_left <= 0) return true;
  if (ns < kCpuClockMinNs) {
    spin_until(now_ns() + wall_left);
    return true;
  }
  // Spin on the cheap wall clock for what is left, which takes at most that
  // much processor time (less if the rank lost its core meanwhile), and
  // read the processor clock again only then.
  const int64_t until = thread_cpu_ns() + wall_left;
  for (int64_t rest = wall_left; rest > kCpuSpinSlackNs; rest = until - thread_cpu_ns())
    spin_until(now_ns() + rest);
  return true;
}

int64_t Engine::sample(const Histogram& h) {
  std::uniform_int_distribution<uint64_t> pick(0, h.count() - 1);
  uint64_t k = pick(rng_);
  for (const Histogram::Bin& b : h.bins()) {
    if (k >= b.count) {
      k -= b.count;
      continue;
    }
    return Histogram::draw_within(b, std::uniform_real_distribution<double>(0.0, 1.0)(rng_));
  }
  return std::llround(h.mean());
}

MPI_Comm Engine::comm_of(const Event& ev, FieldId f) {
  const int64_t id = ev.get(f);
  if (id == kAbsent) return MPI_COMM_WORLD;
  if (id == kNull) return MPI_COMM_NULL;
  auto it = comms_.find(id);
  if (it != comms_.end()) return it->second;
  if (shared_ && shared_->creator(id)) return shared_comm(ev, id);
  // Communicators the program did not create through a recorded call:
  // only those that exist in every MPI program can be named.
  switch (predefined_comm(trace_, id, rank_)) {
    case PredefinedComm::kSelf:
      return comms_[id] = MPI_COMM_SELF;
    case PredefinedComm::kWorld:
      return comms_[id] = MPI_COMM_WORLD;
    case PredefinedComm::kNone:
      break;
  }
  fail(ev,
       "communicator " + std::to_string(id) +
           " was not created by a recorded call and is neither MPI_COMM_WORLD nor MPI_COMM_SELF");
}

MPI_Datatype Engine::datatype_of(const Event& ev, FieldId id_field, FieldId size_field) {
  return types_.type_of(ev, id_field, size_field);
}

MPI_Op Engine::redop_of(const Event& ev) {
  const int64_t id = ev.get(f_.redop);
  if (id == kAbsent) return MPI_SUM;
  std::size_t n = 0;
  const MPI_Op* named = mpi_ids::named_ops(n);
  if (id >= 1 && static_cast<std::size_t>(id) <= n) return named[id - 1];
  auto it = user_ops_.find(id);
  if (it != user_ops_.end()) return it->second;
  MPI_Op op;
  PMPI_Op_create(
      [](void*, void*, int*, MPI_Datatype*) {
        // Payloads are random: a user reduction only has to take as long
        // as moving the data, not compute anything.
      },
      1, &op);
  user_ops_.emplace(id, op);
  return op;
}

int Engine::count_of(const Event& ev, FieldId f) {
  const int64_t c = ev.get(f);
  if (c == kAbsent || c < 0) return 0;
  if (opts_.message_scale != 1.0 && scaled(ev))
    return static_cast<int>(std::llround(static_cast<double>(c) * opts_.message_scale));
  return static_cast<int>(c);
}

std::vector<int> Engine::counts_of(const Event& ev, FieldId f) {
  std::vector<int> out;
  if (const FieldValue* v = ev.find(f)) {
    out.reserve(v->list.size());
    for (int64_t c : v->list) {
      int64_t x = c < 0 ? 0 : c;
      if (opts_.message_scale != 1.0 && scaled(ev))
        x = std::llround(static_cast<double>(x) * opts_.message_scale);
      out.push_back(static_cast<int>(x));
    }
  }
  return out;
}

std::size_t Engine::extent_of(MPI_Datatype t) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(t, &lb, &extent);
  MPI_Aint true_lb = 0, true_extent = 0;
  PMPI_Type_get_true_extent(t, &true_lb, &true_extent);
  return static_cast<std::size_t>(std::max<MPI_Aint>({extent, true_extent, 1}));
}

void Engine::fill(std::vector<char>& buf, std::size_t bytes) {
  if (buf.size() >= bytes) return;
  const std::size_t old = buf.size();
  buf.resize(bytes);
  // Random payload, written once per buffer growth: message contents do
  // not matter, only that they are not all zero pages.
  for (std::size_t i = old; i < bytes; i += 64) buf[i] = static_cast<char>(rng_());
}

void Engine::issue(const Event& ev, const OpInfo& info) {
  switch (info.kind) {
    case Kind::kAbort: {
      std::fprintf(stderr, "tracefold replay: %s: the trace calls MPI_Abort here\n", who().c_str());
      MPI_Abort(comm_of(ev, f_.comm), 1);
      return;
    }
    case Kind::kPcontrol: {
      // The recorded level: a profiling tool under the replay sees what the
      // program told it (tracefold's recorder only records it).
      static const FieldId level = field("level");
      const int64_t l = ev.get(level);
      MPI_Pcontrol(l == kAbsent ? 0 : static_cast<int>(l));
      return;
    }
    case Kind::kSend:
    case Kind::kSendInit:
      return point_send(ev, info);
    case Kind::kRecv:
    case Kind::kRecvInit:
      return point_recv(ev, info);
    case Kind::kSendrecv:
      return sendrecv(ev, info);
    case Kind::kProbe:
      return probe(ev, info);
    case Kind::kMprobe:
      return mprobe(ev, info);
    case Kind::kMrecv:
      return mrecv(ev, info);
    case Kind::kStart:
      return start(ev, info);
    case Kind::kRequestFree:
    case Kind::kCancel: {
      auto slots = linked(ev);
      std::vector<MPI_Request> handles(slots.size(), MPI_REQUEST_NULL);
      for (std::size_t i = 0; i < slots.size(); ++i)
        if (slots[i] >= 0) handles[i] = slots_[static_cast<std::size_t>(slots[i])].handle;
      if (handles.size() != 1) fail(ev, "expected one request link");
      if (prob_ && slots[0] < 0) return;  // a planned receive's request: not ours
      if (info.kind == Kind::kCancel) {
        MPI_Cancel(handles.data());
      } else {
        // A start of a persistent wildcard receive may stand in as a
        // plain receive: the persistent request goes too.
        RequestSlot* slot = slots[0] >= 0 ? &slots_[static_cast<std::size_t>(slots[0])] : nullptr;
        if (slot && slot->parked != MPI_REQUEST_NULL) MPI_Request_free(&slot->parked);
        MPI_Request_free(handles.data());
      }
      after_completion(slots, handles);
      return;
    }
    case Kind::kComplete:
      return complete(ev);
    case Kind::kCommDup:
    case Kind::kCommSplit:
    case Kind::kCommSplitType:
    case Kind::kCommCreate:
    case Kind::kCommCreateGroup:
    case Kind::kCartCreate:
    case Kind::kGraphCreate:
    case Kind::kCartSub:
    case Kind::kIntercommCreate:
    case Kind::kIntercommMerge:
      return create_comm(ev, info);
    case Kind::kCommFree: {
      const int64_t id = ev.get(f_.comm);
      MPI_Comm c = comm_of(ev, f_.comm);
      if (c == MPI_COMM_WORLD || c == MPI_COMM_SELF || c == MPI_COMM_NULL)
        fail(ev, "frees a predefined communicator");
      if (shared_) shared_->await_other_users(id, thread_);
      MPI_Comm_free(&c);
      comms_.erase(id);
      carts_.erase(id);
      if (shared_) shared_->erase(id);
      return;
    }
    case Kind::kCartQuery:
      return cart_query(ev, info);
    case Kind::kTypeCreate:
    case Kind::kTypeCommit:
    case Kind::kTypeFree:
    case Kind::kTypeQuery: {
      const std::string problem = types_.replay(ev, info.name);
      if (!problem.empty()) warn(ev, problem);
      return;
    }
    default:
      return collective(ev, info);
  }
}

}  // namespace tracefold::replay_detail
