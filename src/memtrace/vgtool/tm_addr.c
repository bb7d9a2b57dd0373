/* Address normalisation of tracefold-mem: every recorded data address is
 * also given a form that does not depend on where this run happened to put
 * things (raw_format.h, "normalised address"): a module and an offset for
 * statics, the thread and an offset from its starting stack pointer for the
 * stack, and (allocation context, allocating thread, ordinal, offset) for
 * heap blocks, which the tool allocates itself through Valgrind's malloc
 * replacement so that it sees every block's birth and death. */
#include "pub_tool_aspacemgr.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_oset.h"
#include "pub_tool_replacemalloc.h"
#include "pub_tool_vki.h"

#include "tm.h"

/* ---- heap blocks ---- */

typedef struct {
  Addr start; /* the OSet key */
  SizeT size;
  UInt ctx, owner, ordinal;
} Block;

static OSet* blocks = NULL;
/* Bumped whenever a block dies, so that a thread's one-block cache never
 * names freed memory. */
static ULong heap_generation = 1;

/* Per thread and allocation context: how many blocks so far. */
typedef struct OrdNode {
  struct OrdNode* next;
  UWord key; /* the context */
  UInt count;
} OrdNode;

static Word cmp_block(const void* key, const void* elem) {
  Addr a = *(const Addr*)key;
  const Block* b = elem;
  SizeT len = b->size > 0 ? b->size : 1; /* malloc(0) still has an address */
  if (a < b->start) return -1;
  if (a >= b->start + len) return 1;
  return 0;
}

static void* new_block(ThreadId tid, SizeT n, SizeT align, Bool zero) {
  void* p = VG_(cli_malloc)(align, n);
  if (p == NULL) return NULL;
  if (zero) VG_(memset)(p, 0, n);
  Block* b = VG_(OSetGen_AllocNode)(blocks, sizeof(Block));
  b->start = (Addr)p;
  b->size = n;
  if (tm_forked_child) {
    /* Nothing is recorded in a forked child; it must not open a stream. */
    b->ctx = b->owner = b->ordinal = 0;
    VG_(OSetGen_Insert)(blocks, b);
    return p;
  }
  TmThread* t = tm_thread_of(tid);
  b->ctx = t->ctx;
  b->owner = t->number;
  if (t->ordinals == NULL) t->ordinals = VG_(HT_construct)("tm.ordinals");
  OrdNode* o = VG_(HT_lookup)(t->ordinals, (UWord)t->ctx);
  if (o == NULL) {
    o = VG_(malloc)("tm.ordinal", sizeof(OrdNode));
    o->key = (UWord)t->ctx;
    o->count = 0;
    VG_(HT_add_node)(t->ordinals, o);
  }
  b->ordinal = o->count++;
  VG_(OSetGen_Insert)(blocks, b);
  return p;
}

static void drop_block(void* p) {
  if (p == NULL) return;
  Addr a = (Addr)p;
  Block* b = VG_(OSetGen_Remove)(blocks, &a);
  /* A pointer the replacement never handed out (a bug of the program):
   * leave it alone rather than corrupt Valgrind's arena. */
  if (b == NULL) return;
  VG_(OSetGen_FreeNode)(blocks, b);
  heap_generation++;
  VG_(cli_free)(p);
}

static void* tm_malloc(ThreadId tid, SizeT n) {
  return new_block(tid, n, VG_(clo_alignment), False);
}
static void* tm_new_aligned(ThreadId tid, SizeT n, SizeT align) {
  return new_block(tid, n, align, False);
}
static void* tm_memalign(ThreadId tid, SizeT align, SizeT n) {
  return new_block(tid, n, align, False);
}
static void* tm_calloc(ThreadId tid, SizeT nmemb, SizeT size1) {
  ULong total = (ULong)nmemb * (ULong)size1;
  if (size1 != 0 && total / size1 != nmemb) return NULL; /* overflow */
  return new_block(tid, (SizeT)total, VG_(clo_alignment), True);
}
static void tm_free(ThreadId tid, void* p) {
  (void)tid;
  drop_block(p);
}
static void tm_free_aligned(ThreadId tid, void* p, SizeT align) {
  (void)tid;
  (void)align;
  drop_block(p);
}
static void* tm_realloc(ThreadId tid, void* p, SizeT n) {
  if (p == NULL) return tm_malloc(tid, n);
  Addr a = (Addr)p;
  Block* old = VG_(OSetGen_Lookup)(blocks, &a);
  if (old == NULL || old->start != a) return NULL;
  /* A new block, in the context of this call: moving or not, realloc hands
   * back memory the program must treat as new. */
  SizeT keep = old->size < n ? old->size : n;
  void* q = new_block(tid, n, VG_(clo_alignment), False);
  if (q == NULL) return NULL;
  VG_(memcpy)(q, p, keep);
  drop_block(p);
  return q;
}
static SizeT tm_usable_size(ThreadId tid, void* p) {
  (void)tid;
  Addr a = (Addr)p;
  Block* b = VG_(OSetGen_Lookup)(blocks, &a);
  return b != NULL && b->start == a ? b->size : 0;
}

/* ---- modules (statics) ---- */

typedef struct {
  ULong dev, ino;
  Addr base;
  Addr text_lo, text_hi; /* its executable mappings, filled at exit */
  HChar* name;
} Module;

static Module* modules = NULL; /* modules[id - 1] */
static UInt modules_used = 0, modules_len = 0;
/* Bumped on every mmap and munmap: a thread's cached static range is only
 * trusted within one generation. */
static ULong map_generation = 1;

/* Executable ranges the client mapped: only unmapping one of them can drop
 * code whose call targets --only cached. A program that maps and unmaps
 * data often (glibc's large mallocs) then does not pay a scan of the target
 * table per munmap. */
typedef struct {
  Addr start, end;
} Range;
static Range* code_ranges = NULL;
static UInt code_used = 0, code_len = 0;

static void add_code_range(Addr start, Addr end) {
  if (code_used == code_len) {
    code_len = code_len ? 2 * code_len : 16;
    code_ranges = VG_(realloc)("tm.code", code_ranges, code_len * sizeof(Range));
  }
  code_ranges[code_used].start = start;
  code_ranges[code_used].end = end;
  code_used++;
}

static void on_mmap(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di_handle) {
  (void)rr, (void)ww, (void)di_handle;
  map_generation++;
  if (xx && len > 0) add_code_range(a, a + len);
}
static void on_munmap(Addr a, SizeT len) {
  map_generation++;
  const Addr end = a + len;
  Bool code = False;
  const UInt n = code_used;
  for (UInt i = 0; i < n; i++) {
    Range r = code_ranges[i];
    if (!(r.start < end && a < r.end)) continue;
    code = True;
    /* What is left of the range on either side stays mapped; an emptied
     * range is dropped below. */
    if (r.start < a)
      code_ranges[i].end = a;
    else
      code_ranges[i].start = code_ranges[i].end = 0;
    if (end < r.end) add_code_range(end, r.end);
  }
  UInt kept = 0;
  for (UInt i = 0; i < code_used; i++)
    if (code_ranges[i].start < code_ranges[i].end) code_ranges[kept++] = code_ranges[i];
  code_used = kept;
  if (code) tm_filter_unmapped(a, len);
}

/* The module's load base: the start of its mapping at file offset 0 that
 * lies closest below `seg` (a file may be mapped more than once). */
static Addr module_base(NSegment const* seg) {
  Addr best = seg->start - seg->offset;
  /* Asked with a one-slot buffer first: the answer is minus the count
   * needed when it does not fit (the call refuses an empty buffer). */
  Addr one;
  Int n = VG_(am_get_segment_starts)(SkFileC, &one, 1);
  if (n == 0) return best;
  Int want = n < 0 ? -n : n;
  Addr* starts = VG_(malloc)("tm.starts", (SizeT)want * sizeof(Addr));
  Int got = n < 0 ? VG_(am_get_segment_starts)(SkFileC, starts, want) : 1;
  if (n > 0) starts[0] = one;
  Bool found = False;
  for (Int i = 0; i < got; i++) {
    NSegment const* s = VG_(am_find_nsegment)(starts[i]);
    if (s == NULL || s->dev != seg->dev || s->ino != seg->ino || s->offset != 0) continue;
    if (s->start > seg->start) continue;
    if (!found || s->start > best) best = s->start;
    found = True;
  }
  VG_(free)(starts);
  return best;
}

static UInt module_of(NSegment const* seg, Addr* base) {
  for (UInt i = 0; i < modules_used; i++) {
    if (modules[i].dev == seg->dev && modules[i].ino == seg->ino) {
      *base = modules[i].base;
      return i + 1;
    }
  }
  if (modules_used == modules_len) {
    modules_len = modules_len ? 2 * modules_len : 16;
    modules = VG_(realloc)("tm.modules", modules, modules_len * sizeof(Module));
  }
  Module* m = &modules[modules_used++];
  m->dev = seg->dev;
  m->ino = seg->ino;
  m->base = module_base(seg);
  m->text_lo = m->text_hi = 0;
  const HChar* name = VG_(am_get_filename)(seg);
  m->name = VG_(strdup)("tm.modname", name != NULL ? name : "");
  *base = m->base;
  return modules_used;
}

/* The static segment holding `a`: a client file mapping, or the anonymous
 * mapping right after a writable one (the module's .bss). Fills the
 * thread's cache on success. */
static Bool find_static(TmThread* t, Addr a) {
  NSegment const* seg = VG_(am_find_nsegment)(a);
  if (seg == NULL) return False;
  NSegment const* file = seg;
  if (seg->kind == SkAnonC && seg->start > 0) {
    /* The client heap is anonymous too and may follow a library's data
     * segment: memory there outside a live block is not a static. */
    if (seg->isCH) return False;
    file = VG_(am_find_nsegment)(seg->start - 1);
    if (file == NULL || file->kind != SkFileC || !file->hasW) return False;
  } else if (seg->kind != SkFileC) {
    return False;
  }
  Addr base = 0;
  t->st_module = module_of(file, &base);
  t->st_lo = seg->start;
  t->st_hi = seg->end; /* inclusive */
  t->st_base = base;
  t->st_generation = map_generation;
  return True;
}

/* ---- the thread's stack ---- */

void tm_addr_thread_starts(TmThread* t, ThreadId tid) {
  Addr sp = VG_(get_SP)(tid);
  t->stack_base = sp;
  Addr max = VG_(thread_get_stack_max)(tid);
  SizeT size = VG_(thread_get_stack_size)(tid);
  if (max >= sp && size > 0 && max - size < sp) {
    t->stack_hi = max;
    t->stack_lo = max - size + 1;
  } else {
    /* Valgrind does not know this stack: take the mapping around sp. */
    NSegment const* seg = VG_(am_find_nsegment)(sp);
    t->stack_lo = seg != NULL ? seg->start : sp;
    t->stack_hi = seg != NULL ? seg->end : sp;
  }
  t->stack_known = True;
  if (VG_(clo_verbosity) > 1) {
    VG_(umsg)
    ("tracefold-mem: stream %u: stack %#lx..%#lx, base %#lx\n", t->number, t->stack_lo, t->stack_hi,
     t->stack_base);
  }
}

/* ---- per access ---- */

void tm_normalise(TmThread* t, Addr a, TfmRawRecord* r) {
  r->region = r->ordinal = r->owner = r->reserved = 0;
  UInt kind = TFM_ADDR_OTHER;
  if (t->stack_known && a >= t->stack_lo && a <= t->stack_hi) {
    kind = TFM_ADDR_STACK;
    r->owner = t->number;
    r->offset = (Long)(a - t->stack_base);
  } else if (t->hp_generation == heap_generation && a >= t->hp_lo && a < t->hp_hi) {
    kind = TFM_ADDR_HEAP;
  } else if (t->st_generation == map_generation && a >= t->st_lo && a <= t->st_hi) {
    kind = TFM_ADDR_STATIC;
  } else {
    Block* b = VG_(OSetGen_Lookup)(blocks, &a);
    if (b != NULL) {
      t->hp_lo = b->start;
      t->hp_hi = b->start + (b->size > 0 ? b->size : 1);
      t->hp_ctx = b->ctx;
      t->hp_owner = b->owner;
      t->hp_ordinal = b->ordinal;
      t->hp_generation = heap_generation;
      kind = TFM_ADDR_HEAP;
    } else if (find_static(t, a)) {
      kind = TFM_ADDR_STATIC;
    } else {
      /* Another thread's stack (a worker reading its argument from the
       * creator's frame): named after that thread's own base. */
      TmThread* o = tm_stack_owner(a);
      if (o != NULL) {
        kind = TFM_ADDR_STACK;
        r->owner = o->number;
        r->offset = (Long)(a - o->stack_base);
      }
    }
  }
  if (kind == TFM_ADDR_HEAP) {
    r->region = t->hp_ctx;
    r->ordinal = t->hp_ordinal;
    r->owner = t->hp_owner;
    r->offset = (Long)(a - t->hp_lo);
  } else if (kind == TFM_ADDR_STATIC) {
    r->region = t->st_module;
    r->offset = (Long)(a - t->st_base);
  } else if (kind == TFM_ADDR_OTHER) {
    r->offset = (Long)a;
  }
  r->flags |= (uint8_t)(kind << TFM_RAW_KIND_SHIFT);
}

void tm_addr_thread_done(TmThread* t) {
  if (t->ordinals != NULL) VG_(HT_destruct)(t->ordinals, VG_(free));
  t->ordinals = NULL;
}

void tm_addr_init(void) {
  blocks =
      VG_(OSetGen_Create)(offsetof(Block, start), cmp_block, VG_(malloc), "tm.blocks", VG_(free));
  VG_(needs_malloc_replacement)
  (tm_malloc, tm_malloc, tm_new_aligned, tm_malloc, tm_new_aligned, tm_memalign, tm_calloc, tm_free,
   tm_free, tm_free_aligned, tm_free, tm_free_aligned, tm_realloc, tm_usable_size, 0);
  VG_(track_new_mem_mmap)(on_mmap);
  VG_(track_die_mem_munmap)(on_munmap);
}

/* Every client file mapping at exit: each file with code becomes a module
 * (after those whose statics were accessed, which keep their ids), and each
 * module's executable mappings give its text extent, so that a reader can
 * name any instruction or call site as a module and an offset. */
static void add_code_modules(void) {
  Addr one;
  Int n = VG_(am_get_segment_starts)(SkFileC, &one, 1);
  if (n == 0) return;
  Int want = n < 0 ? -n : n;
  Addr* starts = VG_(malloc)("tm.starts", (SizeT)want * sizeof(Addr));
  Int got = n < 0 ? VG_(am_get_segment_starts)(SkFileC, starts, want) : 1;
  if (n > 0) starts[0] = one;
  for (Int i = 0; i < got; i++) {
    NSegment const* s = VG_(am_find_nsegment)(starts[i]);
    if (s == NULL || s->kind != SkFileC || !s->hasX) continue;
    Addr base;
    UInt id = module_of(s, &base); /* may move `modules`: index it after */
    Module* m = &modules[id - 1];
    if (m->text_lo == m->text_hi || s->start < m->text_lo) m->text_lo = s->start;
    if (s->end + 1 > m->text_hi) m->text_hi = s->end + 1; /* end is inclusive */
  }
  VG_(free)(starts);
}

void tm_modules_write(const HChar* dir) {
  add_code_modules();
  HChar path[4096];
  Bool good;
  Int fd = tm_table_create(dir, "modules.bin", "modules", TFM_MOD_MAGIC, TFM_MOD_VERSION,
                           sizeof(TfmModRecord), modules_used, path, sizeof path, &good);
  if (fd < 0) return;
  for (UInt i = 0; good && i < modules_used; i++) {
    TfmModRecord m;
    m.id = i + 1;
    m.name_len = (uint32_t)VG_(strlen)(modules[i].name);
    m.base = modules[i].base;
    m.text_lo = modules[i].text_lo;
    m.text_hi = modules[i].text_hi;
    good = VG_(write)(fd, &m, sizeof m) == (Int)sizeof m &&
           VG_(write)(fd, modules[i].name, (Int)m.name_len) == (Int)m.name_len;
  }
  VG_(close)(fd);
  if (!good) VG_(umsg)("tracefold-mem: writing %s failed: modules incomplete\n", path);
}
