/* Call-path contexts of tracefold-mem: a shadow stack per thread, moved on
 * every call and return, and one table interning (parent context, call
 * site) pairs into ids. An access costs nothing here: it copies the
 * thread's current id. */
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vki.h"

#include "tm.h"

typedef struct {
  ULong site;
  UInt parent;
  UInt id; /* 0 = empty slot */
} Slot;

static Slot* slots = NULL;
static UInt slots_len = 0;         /* power of two */
static TfmCtxRecord* by_id = NULL; /* by_id[id - 1] */
static UInt count = 0, by_id_len = 0;
static Bool overflow_said = False;

/* Deeper than this, calls are not pushed (the context stays the caller's);
 * their returns then pop nothing, as the frames they would pop are above. */
#define TM_MAX_DEPTH (1u << 20)

void tm_ctx_init(void) {
  slots_len = 1u << 12;
  slots = VG_(calloc)("tm.ctx.slots", slots_len, sizeof(Slot));
}

static UInt hash(UInt parent, ULong site) {
  ULong h = (site ^ ((ULong)parent << 32 | parent)) * 0x9E3779B97F4A7C15ULL;
  return (UInt)(h >> 32);
}

static void grow(void) {
  Slot* old = slots;
  UInt old_len = slots_len;
  slots_len *= 2;
  slots = VG_(calloc)("tm.ctx.slots", slots_len, sizeof(Slot));
  for (UInt i = 0; i < old_len; i++) {
    if (old[i].id == 0) continue;
    UInt j = hash(old[i].parent, old[i].site) & (slots_len - 1);
    while (slots[j].id != 0) j = (j + 1) & (slots_len - 1);
    slots[j] = old[i];
  }
  VG_(free)(old);
}

static UInt intern(UInt parent, Addr site) {
  UInt j = hash(parent, site) & (slots_len - 1);
  while (slots[j].id != 0) {
    if (slots[j].parent == parent && slots[j].site == site) return slots[j].id;
    j = (j + 1) & (slots_len - 1);
  }
  if (count >= TFM_CTX_LIMIT) {
    if (!overflow_said) {
      overflow_said = True;
      VG_(umsg)
      ("tracefold-mem: more than %u call-path contexts (deep recursion?): "
       "further new paths are recorded as context %u\n",
       TFM_CTX_LIMIT, TFM_CTX_OVERFLOW);
    }
    return TFM_CTX_OVERFLOW;
  }
  if (count == by_id_len) {
    by_id_len = by_id_len ? 2 * by_id_len : 1024;
    by_id = VG_(realloc)("tm.ctx.by_id", by_id, by_id_len * sizeof(TfmCtxRecord));
  }
  UInt id = ++count;
  by_id[id - 1].id = id;
  by_id[id - 1].parent = parent;
  by_id[id - 1].call_site = site;
  slots[j].parent = parent;
  slots[j].site = site;
  slots[j].id = id;
  if (2 * count > slots_len) grow();
  return id;
}

/* Called at the end of a superblock that ends in a call: `sp` is the stack
 * pointer once the return address is pushed. */
static void pop(TmThread* t) {
  TmFrame* f = &t->frames[--t->depth];
  t->ctx = f->ctx;
  if (f->only) t->only_frames--;
}

void tm_on_call(Addr site, Addr sp, Addr target) {
  TmThread* t = tm_current;
  if (t == NULL) return;
  /* Frames whose return-address slot is at or below the new one were left
   * without a return (longjmp, a thrown exception): the call is made from
   * the context below them. */
  while (t->depth > 0 && t->frames[t->depth - 1].sp <= sp) pop(t);
  if (t->depth >= TM_MAX_DEPTH) return;
  if (t->depth == t->frames_len) {
    t->frames_len = t->frames_len ? 2 * t->frames_len : 64;
    t->frames = VG_(realloc)("tm.ctx.frames", t->frames, t->frames_len * sizeof(TmFrame));
  }
  t->frames[t->depth].sp = sp;
  t->frames[t->depth].ctx = t->ctx;
  t->frames[t->depth].only = tm_clo_only != NULL && tm_is_only_target(target);
  if (t->frames[t->depth].only) t->only_frames++;
  t->depth++;
  t->ctx = intern(t->ctx, site);
}

/* Called at the end of a superblock that ends in a return, with the stack
 * pointer after it. Every frame whose return-address slot now lies below
 * the stack pointer is gone: one for a plain return, several after a
 * longjmp or an exception unwound past them. */
void tm_on_ret(Addr sp);
void tm_on_ret(Addr sp) {
  TmThread* t = tm_current;
  if (t == NULL) return;
  while (t->depth > 0 && t->frames[t->depth - 1].sp < sp) pop(t);
}

Int tm_table_create(const HChar* dir, const HChar* file, const HChar* what, const char* magic,
                    UInt version, UInt record_size, UInt count, HChar* path, SizeT path_size,
                    Bool* good) {
  VG_(snprintf)(path, (Int)path_size, "%s/%s", dir, file);
  SysRes r = VG_(open)(path, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC, 0644);
  if (sr_isError(r)) {
    VG_(umsg)("tracefold-mem: cannot create %s: %s not written\n", path, what);
    return -1;
  }
  Int fd = (Int)sr_Res(r);
  TfmCtxHeader h;
  VG_(memset)(&h, 0, sizeof h);
  VG_(memcpy)(h.magic, magic, sizeof h.magic);
  h.version = version;
  h.record_size = record_size;
  h.count = count;
  *good = VG_(write)(fd, &h, sizeof h) == (Int)sizeof h;
  return fd;
}

void tm_ctx_write(const HChar* dir) {
  HChar path[4096];
  Bool good;
  Int fd = tm_table_create(dir, "contexts.bin", "contexts", TFM_CTX_MAGIC, TFM_CTX_VERSION,
                           sizeof(TfmCtxRecord), count, path, sizeof path, &good);
  if (fd < 0) return;
  const UChar* p = (const UChar*)by_id;
  SizeT left = (SizeT)count * sizeof(TfmCtxRecord);
  while (good && left > 0) {
    Int chunk = left > (1u << 20) ? (1 << 20) : (Int)left;
    Int n = VG_(write)(fd, p, chunk);
    if (n <= 0) good = False;
    p += n > 0 ? n : 0;
    left -= n > 0 ? (SizeT)n : 0;
  }
  VG_(close)(fd);
  if (!good) VG_(umsg)("tracefold-mem: writing %s failed: contexts incomplete\n", path);
}
