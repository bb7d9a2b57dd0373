// The events of a loop around an irregular run, as one event (fold.cpp's
// third level, between its runs and core's folder). Internal to
// src/memtrace; the format is in fold_codec.hpp (loop_site) and
// docs/memtrace.md.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <unordered_map>
#include <vector>

#include "tracefold/event.hpp"
#include "tracefold/folder.hpp"

namespace tracefold::memtrace::fold_detail {

// Core's folder costs thousands of instructions an event. A loop whose
// body holds a run with free positions (a CSR row: the row pointers, the
// row's run, the store of y[i]) hands it the same few events every
// iteration with values that follow the data, so it folds them into one
// loop whose value lists are the data anyway. Here such a loop's
// iterations become one `memrun` event at a `memloop` site, its values
// in one list: core sees one event per loop instead of several per row.
// Loops without free positions go through untouched (core folds their
// values into repeats, which a list would not).
class LoopBatcher {
 public:
  LoopBatcher(Folder& folder, SiteTable& sites) : folder_(folder), sites_(sites) {}
  // ev: the next event; irregular: a run with free positions. layout, if
  // not null, stands for ev's field ids in their order: events pushed with
  // the same layout have the same ids, which then need no comparing.
  void push(const Event& ev, bool irregular, const void* layout = nullptr);
  // Hands everything still held to the folder.
  void finish();
  // Events handed to core's folder.
  std::uint64_t events() const { return events_; }

  // Longest loop body, in events, looked for.
  static constexpr std::size_t kMaxPeriod = 8;
  // Most iterations in one event (bounds the list held).
  static constexpr std::uint64_t kMaxIters = 1 << 16;

 private:
  struct Member {
    SiteId site = 0;
    OpId op = 0;
    bool irregular = false;
    std::vector<FieldId> ids;  // its scalar fields, in event order
    // The columns' order in the list: by field name, which a reader's
    // field ids need not follow.
    std::vector<std::size_t> by_name;
    FieldId list = 0;  // its list field (free offsets), if has_list
    bool has_list = false;
    std::size_t list_at = 0;       // the list field's place among its fields
    const void* layout = nullptr;  // as push's, if known
    // The scalar fields' values, iteration after iteration (ids.size() a
    // row): one append an event rather than one a field.
    // Grown by hand, uninitialised: the values are written once each, and
    // zeroing the room first doubled the cost of taking an event. Grown
    // with realloc, which moves a large block's pages instead of copying
    // them (a loop's rows grow to megabytes).
    struct FreeRows {
      void operator()(std::int64_t* p) const { std::free(p); }
    };
    std::unique_ptr<std::int64_t, FreeRows> rows;
    std::size_t used = 0, room = 0;     // values held, the allocation's length
    std::vector<std::int64_t> free;     // the lists, concatenated
    std::vector<std::size_t> free_len;  // per iteration
  };

  void forward(const Event& ev);
  bool matches(const Member& m, const Event& ev, const void* layout) const;
  void take(Member& m, const Event& ev);
  void start(std::size_t period);
  void close();
  // Member m's event of iteration i, rebuilt.
  void rebuild(const Member& m, std::size_t i, Event& out) const;
  SiteId loop_site_id();

  Folder& folder_;
  SiteTable& sites_;
  std::uint64_t events_ = 0;
  // Not in a loop: recent events, not yet handed on.
  std::vector<Event> win_;
  std::vector<char> win_irr_;
  std::vector<const void*> win_layout_;
  // In a loop: its body, complete iterations, position in the next.
  bool in_loop_ = false;
  std::vector<Member> members_;
  std::uint64_t iters_ = 0;
  std::size_t pos_ = 0;
  struct BodyHash {
    std::size_t operator()(const std::vector<SiteId>& v) const {
      std::uint64_t h = v.size();
      for (SiteId s : v) h = (h ^ s) * 0x9e3779b97f4a7c15ULL;
      return static_cast<std::size_t>(h ^ (h >> 29));
    }
  };
  std::unordered_map<std::vector<SiteId>, SiteId, BodyHash> loop_ids_;
  Event out_;
};

}  // namespace tracefold::memtrace::fold_detail
