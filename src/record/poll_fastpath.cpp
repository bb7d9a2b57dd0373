// The poll fast path: a poll that finds nothing again costs a few
// comparisons, two clock reads and a repeat count, no Call.
//
// A waiting loop polls thousands of times, and every poll that finds
// nothing would be recorded as a repeat of the last queued event anyway
// (Recorder::repeat_of_last). When the slow path queued such a poll, the
// thread remembers what made its event what it was (arm_poll): the op and
// the argument values, the recorder's queue_seq (no event queued or folded
// since, so the request table, the communicators and the last queued event
// are unchanged), the wrapper's frame address and the stack slots at and
// above it that decide the call path. A later poll from a wrapper with the
// same frame whose arguments and slots match would give an event equal to
// the queued one if it again finds nothing: it is then counted as a repeat
// directly, inline in the wrapper (poll_fastpath.hpp). If it finds
// something, the wrapper builds the full event from the remembered
// arguments, as the slow path would have.
//
// Why the slots at and above the frame suffice (docs/recording.md, "the
// poll fast path"): the call site is the first stack_depth frames outside
// this library, found by walking the stack from the wrapper outwards. The
// call-path cache entry that named the site lists every slot that walk
// read: return addresses, and the saved frame pointers of frames found
// through their frame pointer. The wrapper keeps a frame pointer
// (__builtin_frame_address), so its return address sits at frame + 8 and
// the caller's frame pointer, which it saved, at frame + 0. Every slot
// below the frame belongs to this library's own frames between the
// wrapper and ~Call; they hold return addresses into this library's code
// and frame pointers that follow from the frame, and none of them is part
// of the site. So two polls from the same wrapper at the same frame whose
// slots at and above it hold the same values walk to the same frames: the
// same call site.
//
// Off where those assumptions fail: MPI_THREAD_MULTIPLE (another thread
// could record between the check and the count), statistics (their values
// differ per call), the raw log and the timeline (per-call lines), the
// call-path cache off or checked, TRACEFOLD_POLL_FASTPATH=0.

#include "poll_fastpath.hpp"

#include <sched.h>

namespace tracefold::record {

TRACEFOLD_STATIC_TLS constinit thread_local PollMemo tl_poll;

static_assert(offsetof(PathCache::Entry, site) == 0, "arm_poll finds the entry by its site memo");

void arm_poll(Recorder& r, ThreadStream& s, OpId op, const std::vector<MPI_Request>& requests,
              MPI_Comm comm, int source, int tag, int index, uintptr_t anchor, SiteId* site_memo) {
  PollMemo& m = tl_poll;
  if (m.expect_repeat) {
    m.expect_repeat = false;
    // A repeat leaves queue_seq as the armed poll saw it.
    if (s.queue_seq.load(std::memory_order_relaxed) == m.seq) {
      ++r.poll_checked;
    } else if (r.poll_mismatches++ == 0) {
      std::fprintf(stderr,
                   "tracefold: rank %d: poll fast path: an armed %s that found nothing was not a "
                   "repeat of the last event\n",
                   r.rank, OpTable::name(op).c_str());
    }
  }
  m.key = 0;
  // The wrapper and frame this call went through (set by the wrapper's
  // out-of-line part; a nested call's deeper frame fails the test below).
  const uintptr_t frame = m.entry_frame;
  const uint32_t key = m.entry_key;
  m.entry_frame = 0;
  m.entry_key = 0;
  if (!r.poll_fastpath || key == 0 || !site_memo || *site_memo == PathCache::kSiteUnknown ||
      s.unfolded_n == 0 || requests.size() > PollMemo::kMaxRequests || frame <= anchor)
    return;
  const auto* e = reinterpret_cast<const PathCache::Entry*>(site_memo);
  // The site's first frame must be the wrapper's return address, right
  // above its frame; every slot below the frame is one of our own.
  std::size_t first = 0;
  while (first < e->frames && !(e->in_key & (1u << first))) ++first;
  if (first == e->frames || anchor + e->offset[first] != frame + sizeof(uintptr_t)) return;
  uint8_t n = 0;
  for (std::size_t i = 0; i < e->frames; ++i) {
    const uintptr_t addr = anchor + e->offset[i];
    if (addr < frame) {
      if (e->in_key & (1u << i)) return;
      continue;
    }
    m.slot[n] = reinterpret_cast<const uintptr_t*>(addr);
    m.value[n] = e->value[i];
    ++n;
  }
  m.slots = n;
  m.n = static_cast<int>(requests.size());
  std::copy(requests.begin(), requests.end(), m.requests.begin());
  m.comm = comm;
  m.source = source;
  m.tag = tag;
  m.index = index;
  m.seq = s.queue_seq.load(std::memory_order_relaxed);
  m.frame = frame;
  m.rec = &s;
  m.times = &s.unfolded_repeats[s.unfolded_n - 1];
  m.check = r.poll_check;
  m.key = key;
}

bool poll_count_growing(PollMemo& m, int64_t t1) {
  ThreadStream& r = *m.rec;
  const int64_t t0 = m.found_t0;
  m.times->push_back({std::max<int64_t>(0, t0 - r.last_exit_ns), t1 - t0});
  ++r.unfolded_repeat_n;
  r.last_exit_ns = t1;
  r.fast_busy.store(0, std::memory_order_release);
  return true;
}

void wait_fast_polls(Recorder& r) {
  // No armed poll counts after this (poll_counted compares queue_seq).
  for (auto& s : r.streams) s->bump_queue_seq();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (auto& s : r.streams)
    while (s->fast_busy.load() != 0) sched_yield();
}

}  // namespace tracefold::record
