// Requests: slots, request-event numbers, completion calls.
#include "engine.hpp"

namespace tracefold::replay_detail {

RequestSlot& Engine::new_slot() {
  std::size_t i;
  if (!free_slots_.empty()) {
    i = free_slots_.back();
    free_slots_.pop_back();
  } else {
    i = slots_.size();
    slots_.emplace_back();
  }
  RequestSlot& s = slots_[i];
  s.in_use = true;
  s.handle = MPI_REQUEST_NULL;
  s.persistent = false;
  s.send_bytes = 0;
  s.wild_persistent = false;
  s.parked = MPI_REQUEST_NULL;
  current_slot_ = i;
  return s;
}

void Engine::made_request() {
  RequestSlot& s = slots_[current_slot_];
  if (s.handle == MPI_REQUEST_NULL) {
    release(current_slot_);
    return;
  }
  s.number = ++request_events_;
  by_number_[s.number].push_back(current_slot_);
}

void Engine::release(std::size_t i) {
  RequestSlot& s = slots_[i];
  if (!s.in_use) return;
  forget_number(i);
  s.in_use = false;
  s.handle = MPI_REQUEST_NULL;
  free_slots_.push_back(i);
}

void Engine::forget_number(std::size_t slot) {
  auto it = by_number_.find(slots_[slot].number);
  if (it == by_number_.end()) return;
  auto& group = it->second;
  group.erase(std::remove(group.begin(), group.end(), slot), group.end());
  if (group.empty()) by_number_.erase(it);
}

const std::vector<std::ptrdiff_t>& Engine::linked(const Event& ev) {
  std::vector<std::ptrdiff_t>& out = linked_scratch_;
  out.clear();
  const FieldValue* links = ev.find(f_.links);
  if (!links) return out;
  out.reserve(links->list.size());
  // How often each number was named already (completions name few).
  std::vector<std::pair<uint64_t, std::size_t>>& seen = seen_scratch_;
  seen.clear();
  for (int64_t d : links->list) {
    if (d <= 0 || static_cast<uint64_t>(d) > request_events_) {
      out.push_back(-1);
      continue;
    }
    const uint64_t number = request_events_ - static_cast<uint64_t>(d) + 1;
    auto it = by_number_.find(number);
    auto s =
        std::find_if(seen.begin(), seen.end(), [&](const auto& p) { return p.first == number; });
    if (s == seen.end()) s = seen.insert(seen.end(), {number, 0});
    const std::size_t k = s->second++;
    if (it == by_number_.end() || k >= it->second.size()) {
      out.push_back(-1);
      continue;
    }
    out.push_back(static_cast<std::ptrdiff_t>(it->second[k]));
  }
  return out;
}

void Engine::after_completion(const std::vector<std::ptrdiff_t>& slots,
                              const std::vector<MPI_Request>& handles) {
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (slots[i] < 0) continue;
    RequestSlot& s = slots_[static_cast<std::size_t>(slots[i])];
    s.handle = handles[i];
    if (s.handle == MPI_REQUEST_NULL && s.parked != MPI_REQUEST_NULL) {
      // The receive standing in for a start of a persistent wildcard
      // receive is done: the persistent request is the slot's again.
      s.handle = s.parked;
      s.parked = MPI_REQUEST_NULL;
      continue;
    }
    if (s.handle == MPI_REQUEST_NULL) release(static_cast<std::size_t>(slots[i]));
  }
}

void Engine::complete(const Event& ev) {
  const auto& slots = linked(ev);
  std::vector<MPI_Request>& handles = handles_scratch_;
  handles.assign(slots.size(), MPI_REQUEST_NULL);
  for (std::size_t i = 0; i < slots.size(); ++i)
    if (slots[i] >= 0) handles[i] = slots_[static_cast<std::size_t>(slots[i])].handle;
  const int n = static_cast<int>(handles.size());
  const Variant v = table_[ev.op].variant;
  if (v == Variant::kWait) {
    if (n != 1) fail(ev, "MPI_Wait without exactly one request link");
    MPI_Wait(handles.data(), status_like(ev));
  } else if (v == Variant::kWaitall) {
    MPI_Waitall(n, handles.data(), MPI_STATUSES_IGNORE);
  } else {
    if (v == Variant::kTest && n != 1) fail(ev, "MPI_Test without exactly one request link");
    complete_as_recorded(ev, v, handles);
  }
  after_completion(slots, handles);
}

void Engine::complete_as_recorded(const Event& ev, Variant v, std::vector<MPI_Request>& handles) {
  const int64_t flag = ev.get(f_.flag), index = ev.get(f_.index), outcount = ev.get(f_.outcount);
  Outcome& want = outcome_scratch_;
  want.found = flag == 1 || v == Variant::kWaitany || v == Variant::kWaitsome ||
               (v == Variant::kTestsome && outcount > 0);
  want.index = index == kAbsent || index < 0 ? -1 : static_cast<int>(index);
  want.outcount = outcount == kAbsent || outcount < 0 ? -1 : static_cast<int>(outcount);
  const FieldValue* idx = ev.find(f_.indices);
  want.has_indices = idx != nullptr;
  want.indices.clear();
  if (idx)
    for (int64_t k : idx->list) want.indices.push_back(static_cast<int>(k));
  // Before a test that found requests complete: wait (without
  // completing) until they could, so the forced outcome is a true one.
  if (v == Variant::kTest && want.found) await_ready(handles[0]);
  if (v == Variant::kTestall && want.found)
    for (MPI_Request r : handles) await_ready(r);
  const bool recorded = (v == Variant::kTest || v == Variant::kTestall) ? flag != kAbsent
                        : v == Variant::kTestany ? flag != kAbsent && index != kAbsent
                        : v == Variant::kWaitany ? index != kAbsent
                                                 : outcount != kAbsent;
  if (prob_ || !recorded) {
    // Probabilistic replay's planned receives are not the trace's requests.
    issue_completion(v, handles, status_like(ev), indices_scratch_);
    return;
  }
  const CompletionResult r = force_completion(v, handles, want, status_like(ev), indices_scratch_);
  if (!r.problem.empty()) warn(ev, r.problem);
}

}  // namespace tracefold::replay_detail
