// The call-path cache and call-site table: which call site a stack is.

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "recorder_impl.hpp"

namespace tracefold::record {

TRACEFOLD_STATIC_TLS constinit thread_local PathCache* tl_path_cache = nullptr;

#ifdef TRACEFOLD_PATH_CACHE
// TRACEFOLD_PATH_CACHE=check: the unwinder's answer is recorded, and any
// difference is reported (a test runs with this).
void Recorder::check_cached(const StackKey& cached, const StackKey& walked) {
  path_hits.fetch_add(1, std::memory_order_relaxed);
  if (cached == walked) return;
  uint8_t i = 0;
  while (i < cached.n && i < walked.n && cached.addr[i] == walked.addr[i]) ++i;
  if (path_mismatches.fetch_add(1, std::memory_order_relaxed) == 0)
    std::fprintf(stderr,
                 "tracefold: rank %d: call-path cache gave %u frames, the stack walk %u; "
                 "frame %u differs (%#lx, %#lx)\n",
                 rank, unsigned(cached.n), unsigned(walked.n), unsigned(i),
                 static_cast<unsigned long>(i < cached.n ? cached.addr[i] : 0),
                 static_cast<unsigned long>(i < walked.n ? walked.addr[i] : 0));
}

void Recorder::report_memo_mismatch(SiteId memo, SiteId walked) {
  if (path_mismatches.fetch_add(1, std::memory_order_relaxed) == 0)
    std::fprintf(stderr,
                 "tracefold: rank %d: call-path cache remembered site %u, the stack walk gives "
                 "site %u\n",
                 rank, unsigned(memo), unsigned(walked));
}

PathCache* Recorder::path_cache() {
  if (PathCache* pc = tl_path_cache) return pc;
  PathCache* pc = tl_path_cache = new (std::nothrow) PathCache;
  if (!pc) return nullptr;
  static thread_local struct Owner {
    ~Owner() {
      PathCache* pc = tl_path_cache;
      tl_path_cache = nullptr;  // before the delete: a signal may still look
      delete pc;
    }
  } owner;
  (void)owner;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* lo = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
      pc->stack_lo = reinterpret_cast<uintptr_t>(lo);
      pc->stack_hi = pc->stack_lo + size;
    }
    pthread_attr_destroy(&attr);
  }
  // glibc derives the main thread's stack bottom from the stack limit;
  // under `ulimit -s unlimited` that range covers the heap, where
  // coroutine stacks live. The mapping that holds the stack is the truth.
  pc->main_thread = getpid() == static_cast<pid_t>(syscall(SYS_gettid));
  if (pc->main_thread) {
    pc->stack_lo = pc->stack_hi;
    refresh_main_stack(*pc);
  }
  return pc;
}

// Moves the main thread's stack bottom to that of the mapping holding its
// top (the stack only grows, so a bottom once read stays valid).
void Recorder::refresh_main_stack(PathCache& pc) {
  if (pc.stack_hi == 0) return;
  const int saved_errno = errno;  // the application may be looking at it
  if (FILE* maps = std::fopen("/proc/self/maps", "re")) {
    char chunk[512];
    bool line_start = true;  // a long line comes in several chunks
    while (std::fgets(chunk, sizeof chunk, maps)) {
      unsigned long lo = 0, hi = 0;
      if (line_start && std::sscanf(chunk, "%lx-%lx", &lo, &hi) == 2 && lo < pc.stack_hi &&
          pc.stack_hi <= hi) {
        pc.stack_lo = lo;
        break;
      }
      line_start = std::strchr(chunk, '\n') != nullptr;
    }
    std::fclose(maps);
  }
  errno = saved_errno;
}

// True if `anchor` lies in this thread's stack, so that every slot between
// it and the stack's top can be read. Stacks of their own (coroutines,
// alternate signal stacks) are not cached.
bool Recorder::stack_holds(PathCache& pc, uintptr_t anchor) {
  if (anchor >= pc.stack_lo && anchor < pc.stack_hi) return true;
  // The main thread's stack may have grown since its bottom was read; a
  // few rereads for anchors just below it (coroutine stacks on the heap
  // lie far below and do not use them up), then such calls are walked.
  constexpr uintptr_t kGrowth = uintptr_t{64} << 20;
  if (pc.main_thread && anchor < pc.stack_lo && anchor + kGrowth >= pc.stack_lo &&
      pc.stack_refreshes < 16) {
    ++pc.stack_refreshes;
    refresh_main_stack(pc);
    return anchor >= pc.stack_lo;
  }
  return false;
}

// A path is learned on its second miss; one whose learning failed is not
// tried again while its mark stays in the table.
PathCache::Entry* Recorder::learn_on_second_miss(uintptr_t ret, uintptr_t anchor,
                                                 const StackKey& key) {
  if (path_cache_mode == PathCacheMode::kCheck) path_misses.fetch_add(1, std::memory_order_relaxed);
  if (key.n == 0) return nullptr;
  PathCache* pc = path_cache();
  if (!pc) return nullptr;
  const uint64_t h =
      ((ret * 0x9E3779B97F4A7C15ull) ^ (anchor * 0xC2B2AE3D27D4EB4Full) ^ key.addr[0]) & ~1ull;
  // Two marks per bucket, newest first, so two paths that alternate in
  // one bucket do not keep erasing each other's mark.
  auto& bucket = pc->seen[(h * 0x165667B19E3779F9ull) >> 57];
  uint64_t* mark = bucket[0] >> 1 == h >> 1   ? &bucket[0]
                   : bucket[1] >> 1 == h >> 1 ? &bucket[1]
                                              : nullptr;
  if (!mark) {
    bucket[1] = bucket[0];
    bucket[0] = h;
    return nullptr;
  }
  if (*mark != h) return nullptr;  // learning this path failed before
  if (pc->evictions[PathCache::set_index(ret, anchor, key.addr[0])] >= PathCache::kThrash)
    return nullptr;
  PathCache::Entry* e = remember_path(pc, ret, anchor, key);
  if (!e) *mark = h | 1;
  return e;
}

// Learns where the return addresses of `key` (and of our own frames before
// and between them) sit relative to `anchor`, by walking the stack again
// with registers. Nothing is cached unless the walk agrees with `key`
// frame for frame, no frame is a signal frame, and every slot lies in this
// thread's stack.
PathCache::Entry* Recorder::remember_path(PathCache* pc, uintptr_t ret, uintptr_t anchor,
                                          const StackKey& key) {
  ++pc->learn_attempts;
  if (!stack_holds(*pc, anchor)) return nullptr;
  unw_context_t ctx;
  unw_cursor_t cur;
  if (unw_getcontext(&ctx) != 0 || unw_init_local(&cur, &ctx) != 0) return nullptr;
  PathCache::Entry e;
  PathCache::Tag tag{ret, anchor, 0};
  // Slots are checked in this order on a hit, so a slot is read only once
  // everything that places it has matched.
  auto add = [&](uintptr_t slot, uintptr_t value, bool in_key) {
    if (e.frames == PathCache::kMaxFrames || slot < anchor ||
        slot + sizeof(uintptr_t) > pc->stack_hi || slot - anchor > UINT32_MAX ||
        *reinterpret_cast<const uintptr_t*>(slot) != value)
      return false;
    if (in_key) e.in_key |= 1u << e.frames;
    e.offset[e.frames] = static_cast<uint32_t>(slot - anchor);
    e.value[e.frames] = value;
    ++e.frames;
    return true;
  };
  bool started = false;
  uint8_t matched = 0;
  unw_word_t prev_fp = 0, prev_sp = 0;
  unw_save_loc_t prev_fp_loc{};
  while (matched < key.n) {
    if (unw_step(&cur) <= 0) return nullptr;
    unw_word_t ip = 0, sp = 0;
    if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || unw_get_reg(&cur, UNW_REG_SP, &sp) != 0)
      return nullptr;
    // A frame a signal interrupted sits where the kernel's saved stack
    // pointer says, which no slot records.
    if (unw_is_signal_frame(&cur) > 0) return nullptr;
    if (!started) {
      // Frames of remember_path and the capturing function come first.
      if (ip != ret) continue;
      started = true;
    } else if (sp == prev_fp + 16) {
      // The previous frame was found from its frame pointer (alloca, VLAs,
      // code built with frame pointers): its size can change between
      // calls, so its saved frame pointer is checked too.
      if (prev_fp_loc.type != UNW_SLT_MEMORY || !add(prev_fp_loc.u.addr, prev_fp, false))
        return nullptr;
    } else if (prev_fp >= prev_sp + 8 && prev_fp < sp &&
               *reinterpret_cast<const uintptr_t*>(prev_fp - 8) == sp) {
      // A frame pointer inside the previous frame that does not give its
      // position: GCC's realignment through another register (a VLA or
      // alloca with an over-aligned local or AVX value), where the frame's
      // position is kept at [RBP - 8]. Both are checked.
      if (prev_fp_loc.type != UNW_SLT_MEMORY || !add(prev_fp_loc.u.addr, prev_fp, false) ||
          !add(prev_fp - 8, sp, false))
        return nullptr;
    }
    prev_sp = sp;
    const bool in_key = ip == key.addr[matched];
    if (!in_key && (ip < own_lo || ip >= own_hi))
      return nullptr;  // the two walks disagree: leave this path uncached
    if (!add(sp - sizeof(uintptr_t), ip, in_key)) return nullptr;
    if (in_key) ++matched;
    if (unw_get_reg(&cur, UNW_X86_64_RBP, &prev_fp) != 0 ||
        unw_get_save_loc(&cur, UNW_X86_64_RBP, &prev_fp_loc) != 0)
      return nullptr;
  }
  // The hit check reads four slots at a time: up to the next multiple of
  // four, slot 0 is repeated (read twice, it agrees or not both times).
  for (std::size_t i = e.frames; i % PathCache::kGroup != 0; ++i) {
    e.offset[i] = e.offset[0];
    e.value[i] = e.value[0];
  }
  for (uint8_t i = 0; i < e.frames; ++i) {
    if (!(e.in_key & (1u << i))) continue;
    tag.first = e.value[i];
    auto& bucket = pc->probes[PathCache::probe_index(ret)];
    if (bucket[0].ret != ret) bucket[1] = bucket[0];
    bucket[0] = {ret, e.offset[i]};
    break;
  }
  // This path missed, so no way holds it; the same helper reached from
  // several call sites has one way each here.
  const std::size_t set = PathCache::set_index(ret, anchor, tag.first);
  std::size_t way = pc->victim[set];
  for (std::size_t w = 0; w < PathCache::kWays; ++w)
    if (pc->entries[set][w].frames == 0) {
      way = w;
      break;
    }
  if (way == pc->victim[set]) pc->victim[set] = static_cast<uint8_t>((way + 1) % PathCache::kWays);
  if (pc->entries[set][way].frames != 0 && pc->evictions[set] < PathCache::kThrash)
    ++pc->evictions[set];
  pc->tags[set][way] = tag;
  pc->entries[set][way] = e;
  ++pc->learned;
  return &pc->entries[set][way];
}

#endif

SiteId Recorder::site_of(const StackKey& key) {
  auto it = stacks.find(key);
  if (it != stacks.end()) return it->second;
  CallSite cs;
  for (uint8_t i = 0; i < key.n; ++i) cs.frames.push_back(frame_of(key.addr[i]).frame);
  if (cs.frames.empty()) cs.frames.push_back(Frame{"unknown", 0});
  if (site_tolerance > 0) {
    // Approximate call-site matching (seed 000, 5.2.3; lossy, opt-in): a
    // new stack that differs from a known one in fewer than
    // `site_tolerance` frames, compared from the outermost frame inwards,
    // is taken to be that call site.
    for (SiteId id = 0; id < sites.size(); ++id) {
      const auto& known = sites.at(id).frames;
      if (known.size() != cs.frames.size()) continue;
      int differing = 0;
      for (std::size_t f = known.size(); f-- > 0 && differing < site_tolerance;)
        if (!(known[f] == cs.frames[f])) ++differing;
      if (differing < site_tolerance) {
        stacks.emplace(key, id);
        return id;
      }
    }
  }
  const std::size_t before = sites.size();
  const SiteId id = sites.intern(cs);
  if (sites.size() != before && rawlog.is_open())
    rawlog << "site " << id << " " << SiteTable::format(cs) << "\n";
  stacks.emplace(key, id);
  return id;
}

const FrameInfo& Recorder::frame_of(uintptr_t a) {
  auto it = frames.find(a);
  if (it != frames.end()) return it->second;
  FrameInfo fi;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(a), &info) && info.dli_fbase) {
    const auto base = reinterpret_cast<uintptr_t>(info.dli_fbase);
    fi.own = base == own_base;
    std::string path = info.dli_fname ? info.dli_fname : "?";
    fi.frame.module = path.substr(path.find_last_of('/') + 1);
    // A return address points after the call; step back into it.
    fi.frame.offset = a - base - 1;
  } else {
    // push_back, not = "?": GCC 12 sees a bogus overlap in the inlined
    // string assignment here (-Wrestrict).
    fi.frame.module.push_back('?');
    fi.frame.offset = a;
  }
  for (char& c : fi.frame.module)
    if (c == ' ') c = '_';
  if (fi.frame.module != "?") note_module(fi.frame.module, a - 1 - fi.frame.offset);
  return frames.emplace(a, fi).first->second;
}

// [own_lo, own_hi): the PT_LOAD segments of the object loaded at own_base.
// Left empty if not found (frame_of's dladdr test is used then).
void Recorder::find_own_range() {
  struct Range {
    uintptr_t base, lo = 0, hi = 0;
  } range{own_base};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* r = static_cast<Range*>(data);
        uintptr_t lo = UINTPTR_MAX, hi = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          lo = std::min<uintptr_t>(lo, info->dlpi_addr + ph.p_vaddr);
          hi = std::max<uintptr_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
        // dladdr's base is the lowest loaded address of the object.
        if (hi == 0 || lo > r->base || r->base >= hi) return 0;
        r->lo = lo;
        r->hi = hi;
        return 1;
      },
      &range);
  own_lo = range.lo;
  own_hi = range.hi;
}

}  // namespace tracefold::record
