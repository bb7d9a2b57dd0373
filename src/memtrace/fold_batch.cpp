#include "fold_batch.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#include "fold_codec.hpp"

namespace tracefold::memtrace::fold_detail {

void LoopBatcher::forward(const Event& ev) {
  folder_.append(ev);
  events_++;
}

bool LoopBatcher::matches(const Member& m, const Event& ev, const void* layout) const {
  if (ev.site != m.site || ev.op != m.op) return false;
  if (layout != nullptr && layout == m.layout) return true;
  if (ev.fields.size() != m.ids.size() + (m.has_list ? 1 : 0)) return false;
  std::size_t k = 0;
  for (std::size_t j = 0; j < ev.fields.size(); j++) {
    const FieldId id = ev.fields[j].field;
    if (m.has_list && j == m.list_at) {
      if (id != m.list) return false;
    } else if (id != m.ids[k++]) {
      return false;
    }
  }
  return true;
}

void LoopBatcher::take(Member& m, const Event& ev) {
  // The row is written through a pointer into room made ahead (push_back
  // would reload the vector's ends after every store).
  const std::size_t w = m.ids.size();
  if (m.room < m.used + w) {
    m.room = 2 * m.room + w;
    void* grown = std::realloc(m.rows.get(), m.room * sizeof(std::int64_t));
    if (grown == nullptr) throw std::bad_alloc();
    (void)m.rows.release();
    m.rows.reset(static_cast<std::int64_t*>(grown));
  }
  std::int64_t* row = m.rows.get() + m.used;
  m.used += w;
  const FieldValue* fv = ev.fields.data();
  const std::size_t n = ev.fields.size();
  const std::size_t list_at = m.has_list ? m.list_at : n;
  for (std::size_t j = 0; j < list_at; j++) *row++ = fv[j].scalar;
  if (list_at == n) return;
  m.free.insert(m.free.end(), fv[list_at].list.begin(), fv[list_at].list.end());
  m.free_len.push_back(fv[list_at].list.size());
  for (std::size_t j = list_at + 1; j < n; j++) *row++ = fv[j].scalar;
}

void LoopBatcher::push(const Event& ev, bool irregular, const void* layout) {
  while (in_loop_) {
    Member& m = members_[pos_];
    if (matches(m, ev, layout)) {
      take(m, ev);
      if (++pos_ == members_.size()) {
        pos_ = 0;
        if (++iters_ == kMaxIters) close();
      }
      return;
    }
    close();  // hands the unfinished iteration back, which may start another loop
  }
  // A loop needs a run with free positions in its body: until one comes,
  // events go straight on, uncopied (the regular kernels' case). A loop
  // whose first iteration began before it is then found one iteration on.
  if (win_.empty() && !irregular) {
    forward(ev);
    return;
  }
  win_.push_back(ev);
  win_irr_.push_back(irregular);
  win_layout_.push_back(layout);
  const std::size_t n = win_.size();
  for (std::size_t p = 1; p <= kMaxPeriod && 2 * p <= n; p++) {
    if (win_[n - 1 - p].key() != ev.key()) continue;
    bool same = true, irr = false;
    for (std::size_t i = 0; i < p && same; i++) {
      const Event& a = win_[n - 2 * p + i];
      const Event& b = win_[n - p + i];
      same = a.key() == b.key() && a.fields.size() == b.fields.size();
      for (std::size_t j = 0; j < a.fields.size() && same; j++)
        same = a.fields[j].field == b.fields[j].field;
      irr = irr || win_irr_[n - p + i];
    }
    if (same && irr) {
      start(p);
      return;
    }
  }
  // Only the last 2 * kMaxPeriod events can still start a loop.
  if (n >= 4 * kMaxPeriod) {
    const std::size_t half = n / 2;
    for (std::size_t i = 0; i < half; i++) forward(win_[i]);
    win_.erase(win_.begin(), win_.begin() + static_cast<std::ptrdiff_t>(half));
    win_irr_.erase(win_irr_.begin(), win_irr_.begin() + static_cast<std::ptrdiff_t>(half));
    win_layout_.erase(win_layout_.begin(), win_layout_.begin() + static_cast<std::ptrdiff_t>(half));
    if (std::find(win_irr_.begin(), win_irr_.end(), 1) == win_irr_.end()) {
      for (const Event& e : win_) forward(e);
      win_.clear();
      win_irr_.clear();
      win_layout_.clear();
    }
  }
}

void LoopBatcher::start(std::size_t period) {
  const std::size_t a = win_.size() - 2 * period;
  for (std::size_t i = 0; i < a; i++) forward(win_[i]);
  // The last loop's row buffers serve again: the loops of a program are
  // often as long as each other, and growing a buffer copies it.
  std::vector<Member> old(period);
  old.swap(members_);
  for (std::size_t i = 0; i < period && i < old.size(); i++) {
    members_[i].rows = std::move(old[i].rows);
    members_[i].room = old[i].room;
    members_[i].free.swap(old[i].free);
    members_[i].free.clear();
  }
  for (std::size_t i = 0; i < period; i++) {
    Member& m = members_[i];
    const Event& e = win_[a + i];
    m.site = e.site;
    m.op = e.op;
    m.irregular = win_irr_[a + i] != 0;
    // Both iterations' events have the same ids (push checked).
    m.layout = win_layout_[a + i] ? win_layout_[a + i] : win_layout_[a + period + i];
    for (std::size_t j = 0; j < e.fields.size(); j++) {
      if (FieldTable::kind(e.fields[j].field) == FieldKind::kList && !m.has_list) {
        m.has_list = true;
        m.list = e.fields[j].field;
        m.list_at = j;
      } else {
        m.ids.push_back(e.fields[j].field);
      }
    }
    m.by_name.resize(m.ids.size());
    for (std::size_t k = 0; k < m.ids.size(); k++) m.by_name[k] = k;
    std::sort(m.by_name.begin(), m.by_name.end(), [&m](std::size_t x, std::size_t y) {
      return FieldTable::name(m.ids[x]) < FieldTable::name(m.ids[y]);
    });
    take(m, e);
    take(m, win_[a + period + i]);
  }
  win_.clear();
  win_irr_.clear();
  win_layout_.clear();
  in_loop_ = true;
  iters_ = 2;
  pos_ = 0;
}

void LoopBatcher::rebuild(const Member& m, std::size_t i, Event& out) const {
  out.op = m.op;
  out.site = m.site;
  out.fields.clear();
  std::size_t at = 0;
  if (m.has_list)
    for (std::size_t j = 0; j < i; j++) at += m.free_len[j];
  std::size_t k = 0;
  for (std::size_t j = 0; j < m.ids.size() + (m.has_list ? 1 : 0); j++) {
    if (m.has_list && j == m.list_at) {
      const auto b = m.free.begin() + static_cast<std::ptrdiff_t>(at);
      out.fields.push_back({m.list, kAbsent, {b, b + static_cast<std::ptrdiff_t>(m.free_len[i])}});
    } else {
      out.fields.push_back({m.ids[k], m.rows.get()[i * m.ids.size() + k], {}});
      k++;
    }
  }
}

SiteId LoopBatcher::loop_site_id() {
  std::vector<SiteId> key;
  for (const Member& m : members_) key.push_back(m.site);
  auto it = loop_ids_.find(key);
  if (it != loop_ids_.end()) return it->second;
  std::vector<const CallSite*> sites;
  for (SiteId s : key) sites.push_back(&sites_.at(s));
  const SiteId id = sites_.intern(loop_site(sites));
  loop_ids_.emplace(std::move(key), id);
  return id;
}

void LoopBatcher::close() {
  in_loop_ = false;
  const std::size_t n = static_cast<std::size_t>(iters_);
  // Sized once: the list runs to a value per row and column, and growing
  // it copies it.
  std::size_t most = 0;
  for (const Member& m : members_) most += m.ids.size() * (n + 1) + 1 + m.free.size();
  std::vector<std::int64_t> list;
  list.reserve(most);
  for (const Member& m : members_)
    for (std::size_t k : m.by_name) put_column(m.rows.get() + k, m.ids.size(), n, list);
  for (const Member& m : members_) {
    if (!m.has_list) continue;
    std::size_t total = 0;
    for (std::size_t j = 0; j < n; j++) total += m.free_len[j];
    list.push_back(static_cast<std::int64_t>(total));
    list.insert(list.end(), m.free.begin(), m.free.begin() + static_cast<std::ptrdiff_t>(total));
  }
  out_.op = run_op();
  out_.site = loop_site_id();
  out_.fields.clear();
  out_.fields.push_back({loop_iters_field(), static_cast<std::int64_t>(n), {}});
  out_.fields.push_back({loop_list_field(), kAbsent, std::move(list)});
  std::sort(out_.fields.begin(), out_.fields.end(),
            [](const FieldValue& a, const FieldValue& b) { return a.field < b.field; });
  forward(out_);
  // The unfinished iteration's events start over, in order.
  std::vector<Event> partial(pos_);
  std::vector<char> irr(pos_);
  std::vector<const void*> layouts(pos_);
  for (std::size_t i = 0; i < pos_; i++) {
    rebuild(members_[i], n, partial[i]);
    irr[i] = members_[i].irregular;
    layouts[i] = members_[i].layout;
  }
  pos_ = 0;
  iters_ = 0;
  for (std::size_t i = 0; i < partial.size(); i++) push(partial[i], irr[i] != 0, layouts[i]);
}

void LoopBatcher::finish() {
  while (in_loop_) close();
  for (const Event& e : win_) forward(e);
  win_.clear();
  win_irr_.clear();
  win_layout_.clear();
}

}  // namespace tracefold::memtrace::fold_detail
