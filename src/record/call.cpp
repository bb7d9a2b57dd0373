// What the wrappers say about a call's arguments and results (Call methods).

#include "recorder_impl.hpp"

#include "tracefold/analysis_basic.hpp"

namespace tracefold::record {

void Call::comm(MPI_Comm c) {
  comm_ = c;
  if (c == MPI_COMM_NULL) return;
  try {
    comm_id_ = recorder().comm_id(c);
    ev_.set(kComm, comm_id_);
  } catch (const std::exception& ex) {
    recorder().fail(ex.what());
  }
}

void Call::comm_field(FieldId f, MPI_Comm c) {
  hold();
  try {
    ev_.set(f, c == MPI_COMM_NULL ? kNull : recorder().comm_id(c));
  } catch (const std::exception& ex) {
    recorder().fail(ex.what());
  }
}

void Call::scalar(FieldId f, int64_t value) {
  ev_.set(f, value);
}

void Call::peer(FieldId f, int rank) {
  if (rank == MPI_PROC_NULL) {
    ev_.set(f, kNull);
  } else if (rank == MPI_ANY_SOURCE) {
    ev_.set(f, kAny);
    wild_source_ = true;
  } else {
    ev_.set(f, rank);
  }
}

void Call::tag(FieldId f, int tag) {
  if (tag == MPI_ANY_TAG) {
    ev_.set(f, kAny);
    wild_tag_ = true;
  } else {
    ev_.set(f, tag);
  }
}

void Call::counts(FieldId f, const int* counts) {
  if (!counts || comm_ == MPI_COMM_NULL) return;
  int n = 0, inter = 0;
  PMPI_Comm_test_inter(comm_, &inter);
  if (inter)
    PMPI_Comm_remote_size(comm_, &n);
  else
    PMPI_Comm_size(comm_, &n);
  set_list(f, std::vector<int64_t>(counts, counts + n));
}

void Call::redop(MPI_Op o) {
  try {
    ev_.set(kRedop, recorder().op_id(o));
  } catch (const std::exception& ex) {
    recorder().fail(ex.what());
  }
}

void Call::status(const MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE || st == nullptr) return;
  // Test/Iprobe that found nothing: the status holds nothing meaningful.
  if (ev_.get(kFlag) == 0) return;
  // Waitany/Testany: the completed request decides what was a wildcard.
  const int64_t index = ev_.get(kIndex);
  if (index != kAbsent && index >= 0 && static_cast<std::size_t>(index) < pending_wild_.size()) {
    wild_source_ = pending_wild_[static_cast<std::size_t>(index)].first;
    wild_tag_ = pending_wild_[static_cast<std::size_t>(index)].second;
  }
  if (!wild_source_ && !wild_tag_) return;
  // An empty status (an inactive persistent request, MPI_REQUEST_NULL) or
  // a cancelled receive matched nothing: its MPI_SOURCE is no rank (as in
  // Call::statuses).
  if (st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG) return;
  int cancelled = 0;
  PMPI_Test_cancelled(st, &cancelled);
  if (cancelled) return;
  if (wild_source_) ev_.set(kSrc, st->MPI_SOURCE);
  if (wild_tag_) ev_.set(kMtag, st->MPI_TAG);
}

void Call::indices(int outcount, const int* indices, int index_base) {
  if (outcount == MPI_UNDEFINED || outcount < 0 || (outcount > 0 && !indices)) return;
  std::vector<int64_t> out(static_cast<std::size_t>(outcount));
  for (int k = 0; k < outcount; ++k) out[static_cast<std::size_t>(k)] = indices[k] - index_base;
  set_list(kIndices, std::move(out));
}

void Call::request_out(const MPI_Request* req) {
  if (!req) return;
  ThreadStream& s = recorder().stream();
  std::lock_guard lock(s.requests_mu);
  // Counted even when the library hands back MPI_REQUEST_NULL: readers
  // (replay, export matching) number every request-making call
  // (OpTable::makes_request), so links must count the same events.
  ++s.request_events;
  if (*req != MPI_REQUEST_NULL)
    s.requests.push(*req, RequestInfo{s.request_events, wild_source_, wild_tag_});
}

namespace {
// How often reqs[i] appeared before position i: the k-th repeat of a handle
// stands for its k-th oldest live request. Short arrays (the usual case) are
// scanned; long ones are counted in a map.
struct RepeatCounter {
  std::unordered_map<MPI_Request, std::size_t> seen;
  std::size_t before(const MPI_Request* reqs, int n, int i) {
    if (n <= 32) {
      std::size_t k = 0;
      for (int j = 0; j < i; ++j) k += reqs[j] == reqs[i];
      return k;
    }
    return seen[reqs[i]]++;
  }
};

// Requests of `reqs` that `s`'s own table lacks (their links kUndefined)
// may have been made by another thread of the rank: their links count
// back in that thread's request events, and `lthreads` names it (kNull
// for the requests of the calling thread; docs/format.md). Rare, so it
// takes the lock to read the other threads' streams.
// Returns the `lthreads` list, empty when no other thread made any of them.
std::vector<int64_t> foreign_links(ThreadStream& s, int n, const MPI_Request* reqs,
                                   std::vector<int64_t>& links,
                                   std::vector<std::pair<bool, bool>>& wild) {
  Recorder& r = recorder();
  std::vector<ThreadStream*>& owner = thread_buffers().pending_owner;
  std::vector<int64_t> threads(static_cast<std::size_t>(n), kNull);
  bool found = false;
  std::lock_guard lock(r.mu);
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (links[k] != kUndefined) continue;
    std::size_t before = 0;  // the handle's repeats before i, as RepeatCounter counts
    for (int j = 0; j < i; ++j) before += reqs[j] == reqs[i];
    for (auto& other : r.streams) {
      if (other.get() == &s) continue;
      std::lock_guard olock(other->requests_mu);
      const RequestInfo* info = other->requests.find(reqs[i], before);
      if (!info) continue;
      links[k] = static_cast<int64_t>(other->request_events - info->event + 1);
      threads[k] = other->number;
      owner[k] = other.get();
      wild[k] = {info->wild_source, info->wild_tag};
      found = true;
      break;
    }
  }
  if (!found) threads.clear();
  return threads;
}

}  // namespace

void Call::requests_in(int n, const MPI_Request* reqs) {
  // A count of 0 may come with a null array (MPI_Waitall(0, NULL, ...) on a
  // rank without neighbours); its links are still the empty list, as for
  // any other array, so the call reads the same whatever the pointer.
  if (n < 0 || (n > 0 && !reqs)) return;
  Recorder& r = recorder();
  ThreadStream& s = r.stream();
  CallBuffers& buffers = thread_buffers();
  std::vector<int64_t> links = std::move(buffers.spare_links);
  links.assign(static_cast<std::size_t>(n), 0);
  pending_wild_.assign(static_cast<std::size_t>(n), {false, false});
  buffers.pending_owner.assign(static_cast<std::size_t>(n), nullptr);
  RepeatCounter repeats;
  bool foreign = false;  // some request is not in this thread's table
  {
    std::lock_guard lock(s.requests_mu);
    for (int i = 0; i < n; ++i) {
      auto& link = links[static_cast<std::size_t>(i)];
      if (reqs[i] == MPI_REQUEST_NULL) {
        link = kNull;
        continue;
      }
      const RequestInfo* info = s.requests.find(reqs[i], repeats.before(reqs, n, i));
      if (!info) {
        link = kUndefined;
        foreign = true;
        continue;
      }
      link = static_cast<int64_t>(s.request_events - info->event + 1);
      pending_wild_[static_cast<std::size_t>(i)] = {info->wild_source, info->wild_tag};
      any_wild_ = any_wild_ || info->wild_source || info->wild_tag;
    }
  }
  std::vector<int64_t> lthreads;
  if (foreign) [[unlikely]] {
    lthreads = foreign_links(s, n, reqs, links, pending_wild_);
    for (const auto& [source, tag] : pending_wild_) any_wild_ = any_wild_ || source || tag;
  }
  if (n == 1) {
    // A completion of one wildcard receive reports what it matched.
    wild_source_ = pending_wild_[0].first;
    wild_tag_ = pending_wild_[0].second;
  }
  set_list(kLinks, std::move(links));
  if (!lthreads.empty()) [[unlikely]] {
    static const FieldId kLthreads = FieldTable::intern("lthreads", FieldKind::kList);
    set_list(kLthreads, std::move(lthreads));
  }
  // Remember the handles: completed ones are forgotten afterwards.
  pending_.assign(reqs, reqs + n);
}

MPI_Status* Call::statuses_in(int n, MPI_Status* statuses) {
  if (!any_wild_ || statuses != MPI_STATUSES_IGNORE || n <= 0) return statuses;
  auto& buf = thread_buffers().statuses;
  if (buf.size() < static_cast<std::size_t>(n)) buf.resize(static_cast<std::size_t>(n));
  return buf.data();
}

MPI_Fint* Call::fstatuses_in(int n, MPI_Fint* statuses) {
  if (!any_wild_ || !fortran_statuses_ignored(statuses) || n <= 0) return statuses;
  auto& buf = thread_buffers().fstatuses;
  const std::size_t need = static_cast<std::size_t>(n) * fortran_status_size();
  if (buf.size() < need) buf.resize(need);
  return buf.data();
}

template <class StatusAt>
void Call::record_matches(int n, int outcount, const int* indices, int index_base,
                          StatusAt&& status_at) {
  // Testall that found some request unfinished completed none of them.
  if (outcount < 0 && ev_.get(kFlag) == 0) return;
  if (outcount == MPI_UNDEFINED) return;
  const std::size_t count =
      std::min(static_cast<std::size_t>(std::max(n, 0)), pending_wild_.size());
  auto& buffers = thread_buffers();
  auto& srcs = buffers.srcs;
  auto& mtags = buffers.mtags;
  // Entry j of the lists belongs to the j-th wildcard receive of the
  // request array.
  auto& entry_of = buffers.entry_of;
  entry_of.assign(count, SIZE_MAX);
  srcs.clear();
  for (std::size_t i = 0; i < count; ++i) {
    if (!(pending_wild_[i].first || pending_wild_[i].second)) continue;
    entry_of[i] = srcs.size();
    srcs.push_back(kUndefined);
  }
  mtags.assign(srcs.size(), kUndefined);
  auto fill = [&](std::size_t request, const MPI_Status& st) {
    if (request >= count || entry_of[request] == SIZE_MAX) return;
    // An empty status (inactive request) or a cancelled receive matched
    // nothing.
    if (st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG) return;
    int cancelled = 0;
    PMPI_Test_cancelled(&st, &cancelled);
    if (cancelled) return;
    srcs[entry_of[request]] = st.MPI_SOURCE;
    mtags[entry_of[request]] = st.MPI_TAG;
  };
  if (outcount < 0) {
    for (std::size_t i = 0; i < count; ++i)
      if (entry_of[i] != SIZE_MAX) fill(i, status_at(i));
  } else {
    for (int k = 0; k < outcount; ++k) {
      const int index = indices[k] - index_base;
      if (index >= 0) fill(static_cast<std::size_t>(index), status_at(static_cast<std::size_t>(k)));
    }
  }
  if (std::all_of(srcs.begin(), srcs.end(), [](int64_t v) { return v == kUndefined; })) return;
  set_list(kSrcs, srcs);
  set_list(kMtags, mtags);
}

void Call::statuses(int n, const MPI_Status* statuses, int outcount, const int* indices,
                    int index_base) {
  if (!any_wild_ || statuses == MPI_STATUSES_IGNORE || statuses == nullptr) return;
  record_matches(n, outcount, indices, index_base,
                 [&](std::size_t k) -> const MPI_Status& { return statuses[k]; });
}

void Call::fstatuses(int n, const MPI_Fint* statuses, int outcount, const int* indices,
                     int index_base) {
  if (!any_wild_ || fortran_statuses_ignored(statuses)) return;
  MPI_Status converted;
  record_matches(n, outcount, indices, index_base, [&](std::size_t k) -> const MPI_Status& {
    if (MPI_Status_f2c(statuses + k * fortran_status_size(), &converted) != MPI_SUCCESS) {
      converted.MPI_SOURCE = MPI_ANY_SOURCE;  // read as empty: recorded as undef
      converted.MPI_TAG = MPI_ANY_TAG;
    }
    return converted;
  });
}

void Call::requests_done(int n, const MPI_Request* after) {
  if (pending_.empty()) return;
  ThreadStream& s = recorder().stream();
  const std::vector<ThreadStream*>& owner = thread_buffers().pending_owner;
  for (int i = 0; i < n && static_cast<std::size_t>(i) < pending_.size(); ++i) {
    const MPI_Request before = pending_[static_cast<std::size_t>(i)];
    if (before == MPI_REQUEST_NULL || after[i] != MPI_REQUEST_NULL) continue;
    // Made by another thread (foreign_links): forgotten in its table.
    ThreadStream* o =
        static_cast<std::size_t>(i) < owner.size() && owner[static_cast<std::size_t>(i)]
            ? owner[static_cast<std::size_t>(i)]
            : &s;
    std::lock_guard lock(o->requests_mu);
    o->requests.pop_oldest(before);
  }
}

void Call::requests_started(int n, const MPI_Request* reqs) {
  ThreadStream& s = recorder().stream();
  std::lock_guard lock(s.requests_mu);
  const uint64_t number = ++s.request_events;
  for (int i = 0; i < n; ++i)
    if (RequestInfo* info = s.requests.oldest(reqs[i])) info->event = number;
}

}  // namespace tracefold::record
