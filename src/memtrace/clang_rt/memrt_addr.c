/* Address normalisation of libtracefold_memrt, done when a thread writes
 * its buffer (never on the hot path): static addresses as module + offset
 * from the module's load base, stack addresses as thread + offset from the
 * thread's base, as the Valgrind tool does. Heap blocks are not tracked
 * (the runtime does not replace malloc): they are `other`, raw address. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memrt.h"

typedef struct {
  uintptr_t lo, hi; /* its PT_LOAD segments, whole pages */
  uintptr_t base;   /* start of the mapping at file offset 0 */
  uint32_t id;      /* 0 until an access names it; then 1.. in order of first access */
  char* name;
} MemrtModule;

typedef struct {
  uint64_t generation; /* dlpi_adds + dlpi_subs when it was taken */
  uint32_t count;
  MemrtModule* mods[]; /* sorted by lo */
} MemrtSnapshot;

/* Replaced as a whole when objects come or go; an old snapshot is never
 * freed (a thread may still be reading it): dlopen is rare. */
static MemrtSnapshot* g_snap;
static pthread_mutex_t g_mod_lock = PTHREAD_MUTEX_INITIALIZER;
static MemrtModule** g_named; /* by id - 1 */
static uint32_t g_named_count, g_named_cap;

#define MEMRT_MAX_STACKS 4096
typedef struct {
  uintptr_t lo, hi, base;
  uint32_t number;
  int alive;
} MemrtStack;
static MemrtStack g_stacks[MEMRT_MAX_STACKS];
static uint32_t g_stack_count;

static int generation_cb(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  *(uint64_t*)data = info->dlpi_adds + info->dlpi_subs;
  return 1;
}

typedef struct {
  MemrtSnapshot* old;
  MemrtModule** list;
  uint32_t count, cap;
} Collect;

static int collect_cb(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  Collect* c = data;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t lo = UINTPTR_MAX, hi = 0, base = UINTPTR_MAX;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
    if (s < lo) lo = s;
    if (e > hi) hi = e;
    if (ph->p_offset < page && s - ph->p_offset < base) base = s - ph->p_offset;
  }
  if (hi == 0) return 0;
  lo &= ~(page - 1);
  hi = (hi + page - 1) & ~(page - 1);
  if (base == UINTPTR_MAX) base = lo;
  char exe[4096];
  const char* name = info->dlpi_name;
  if (!name || !*name) {
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    name = exe;
  }
  MemrtModule* m = NULL;
  for (uint32_t i = 0; c->old && i < c->old->count; i++) {
    MemrtModule* o = c->old->mods[i];
    if (o->lo == lo && o->base == base && strcmp(o->name, name) == 0) m = o;
  }
  if (!m) {
    m = calloc(1, sizeof *m);
    if (!m) return 0;
    m->lo = lo;
    m->hi = hi;
    m->base = base;
    m->name = strdup(name);
    if (!m->name) m->name = "";
  }
  if (c->count == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 32;
    MemrtModule** l = realloc(c->list, c->cap * sizeof *l);
    if (!l) return 1;
    c->list = l;
  }
  c->list[c->count++] = m;
  return 0;
}

static int by_lo(const void* a, const void* b) {
  uintptr_t x = (*(MemrtModule*const*)a)->lo, y = (*(MemrtModule*const*)b)->lo;
  return x < y ? -1 : x > y;
}

static void reload(uint64_t generation) {
  Collect c = {.old = g_snap};
  dl_iterate_phdr(collect_cb, &c);
  MemrtSnapshot* s = malloc(sizeof *s + c.count * sizeof(MemrtModule*));
  if (!s) {
    free(c.list);
    return;
  }
  s->generation = generation;
  s->count = c.count;
  if (c.count) memcpy(s->mods, c.list, c.count * sizeof(MemrtModule*));
  qsort(s->mods, s->count, sizeof(MemrtModule*), by_lo);
  free(c.list);
  __atomic_store_n(&g_snap, s, __ATOMIC_RELEASE);
}

void memrt_addr_init(void) {
  uint64_t gen = 0;
  dl_iterate_phdr(generation_cb, &gen);
  pthread_mutex_lock(&g_mod_lock);
  reload(gen);
  pthread_mutex_unlock(&g_mod_lock);
}

void memrt_addr_refresh(void) {
  uint64_t gen = 0;
  dl_iterate_phdr(generation_cb, &gen);
  MemrtSnapshot* s = __atomic_load_n(&g_snap, __ATOMIC_ACQUIRE);
  if (s && s->generation == gen) return;
  pthread_mutex_lock(&g_mod_lock);
  s = __atomic_load_n(&g_snap, __ATOMIC_ACQUIRE);
  if (!s || s->generation != gen) reload(gen);
  pthread_mutex_unlock(&g_mod_lock);
}

void memrt_addr_register(MemrtThread* t) {
  pthread_mutex_lock(&g_mod_lock);
  uint32_t i = g_stack_count;
  if (i < MEMRT_MAX_STACKS) {
    g_stacks[i] = (MemrtStack){t->stack_lo, t->stack_hi, t->stack_base, t->number, 1};
    __atomic_store_n(&g_stack_count, i + 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_mod_lock);
}

void memrt_addr_unregister(MemrtThread* t) {
  uint32_t n = __atomic_load_n(&g_stack_count, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n; i++)
    if (g_stacks[i].number == t->number) __atomic_store_n(&g_stacks[i].alive, 0, __ATOMIC_RELEASE);
}

static uint32_t module_id(MemrtModule* m) {
  uint32_t id = __atomic_load_n(&m->id, __ATOMIC_ACQUIRE);
  if (id) return id;
  pthread_mutex_lock(&g_mod_lock);
  if (!m->id && (g_named_count < g_named_cap || g_named_cap < (1u << 20))) {
    if (g_named_count == g_named_cap) {
      uint32_t cap = g_named_cap ? 2 * g_named_cap : 16;
      MemrtModule** l = realloc(g_named, cap * sizeof *l);
      if (l) {
        g_named = l;
        g_named_cap = cap;
      }
    }
    if (g_named_count < g_named_cap) {
      g_named[g_named_count++] = m;
      __atomic_store_n(&m->id, g_named_count, __ATOMIC_RELEASE);
    }
  }
  id = m->id;
  pthread_mutex_unlock(&g_mod_lock);
  return id;
}

static void set(TfmRawRecord* r, uint32_t kind, uint32_t region, uint32_t owner, int64_t off) {
  r->flags = (uint8_t)(kind << TFM_RAW_KIND_SHIFT);
  r->region = region;
  r->ordinal = 0;
  r->owner = owner;
  r->reserved = 0;
  r->offset = off;
}

void memrt_normalise(const MemrtThread* t, uint64_t daddr, TfmRawRecord* r) {
  uintptr_t a = (uintptr_t)daddr;
  if (a >= t->stack_lo && a < t->stack_hi) {
    set(r, TFM_ADDR_STACK, 0, t->number, (int64_t)(a - t->stack_base));
    return;
  }
  uint32_t n = __atomic_load_n(&g_stack_count, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n; i++) {
    const MemrtStack* s = &g_stacks[i];
    if (a >= s->lo && a < s->hi && __atomic_load_n(&s->alive, __ATOMIC_ACQUIRE)) {
      set(r, TFM_ADDR_STACK, 0, s->number, (int64_t)(a - s->base));
      return;
    }
  }
  const MemrtSnapshot* snap = __atomic_load_n(&g_snap, __ATOMIC_ACQUIRE);
  uint32_t lo = 0, hi = snap ? snap->count : 0;
  while (lo < hi) { /* the last module starting at or below a */
    uint32_t mid = lo + (hi - lo) / 2;
    if (snap->mods[mid]->lo <= a)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo > 0 && a < snap->mods[lo - 1]->hi) {
    MemrtModule* m = snap->mods[lo - 1];
    uint32_t id = module_id(m);
    if (id) {
      set(r, TFM_ADDR_STATIC, id, 0, (int64_t)(a - m->base));
      return;
    }
  }
  set(r, TFM_ADDR_OTHER, 0, 0, (int64_t)a);
}

int memrt_write_modules(const char* dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/modules.bin", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, "tracefold-memrt: error: cannot write %s\n", path);
    return -1;
  }
  pthread_mutex_lock(&g_mod_lock);
  TfmCtxHeader h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, TFM_MOD_MAGIC, sizeof h.magic);
  h.version = TFM_MOD_VERSION;
  h.record_size = sizeof(TfmModRecord);
  h.count = g_named_count;
  int ok = write(fd, &h, sizeof h) == (ssize_t)sizeof h;
  for (uint32_t i = 0; ok && i < g_named_count; i++) {
    /* No text extent (0, 0): this runtime keeps only each module's base. */
    TfmModRecord m = {i + 1, (uint32_t)strlen(g_named[i]->name), g_named[i]->base, 0, 0};
    ok = write(fd, &m, sizeof m) == (ssize_t)sizeof m &&
         write(fd, g_named[i]->name, m.name_len) == (ssize_t)m.name_len;
  }
  pthread_mutex_unlock(&g_mod_lock);
  close(fd);
  if (!ok) fprintf(stderr, "tracefold-memrt: error: writing %s failed\n", path);
  return ok ? 0 : -1;
}
