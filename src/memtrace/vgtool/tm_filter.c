/* Filters of tracefold-mem beyond the application-image one (tm_instr.c):
 * --only=FUNC records an access only while a call to FUNC is on the
 * thread's shadow stack, --addr-range only accesses to given data
 * addresses. */
#include "pub_tool_debuginfo.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_mallocfree.h"

#include "tm.h"

const HChar* tm_clo_only = NULL;

/* ---- --addr-range=START-END[,START-END...] ---- */

#define TM_MAX_RANGES 16
static Addr range_lo[TM_MAX_RANGES], range_hi[TM_MAX_RANGES]; /* [lo, hi) */
static UInt n_ranges = 0;

/* A number in hex (0x...) or decimal; *end is left after it. */
static Bool parse_number(const HChar* s, const HChar** end, ULong* out) {
  HChar* e = NULL;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    *out = VG_(strtoull16)(s + 2, &e);
  else
    *out = VG_(strtoull10)(s, &e);
  if (e == s || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && e == s + 2)) return False;
  *end = e;
  return True;
}

Bool tm_filter_parse_ranges(const HChar* spec) {
  const HChar* p = spec;
  while (*p != '\0') {
    ULong lo, hi;
    if (n_ranges == TM_MAX_RANGES) return False;
    if (!parse_number(p, &p, &lo) || *p != '-') return False;
    p++;
    if (!parse_number(p, &p, &hi) || hi <= lo) return False;
    if (*p != ',' && *p != '\0') return False;
    if (*p == ',' && *++p == '\0') return False; /* a trailing comma */
    range_lo[n_ranges] = (Addr)lo;
    range_hi[n_ranges] = (Addr)hi;
    n_ranges++;
  }
  return n_ranges > 0;
}

Bool tm_filter_addr(Addr a) {
  if (n_ranges == 0) return True;
  for (UInt i = 0; i < n_ranges; i++)
    if (a >= range_lo[i] && a < range_hi[i]) return True;
  return False;
}

/* ---- --only=FUNC ---- */

/* Call targets already looked up: whether each is FUNC's entry. Debug
 * information is read as objects are mapped, so a target is only decided
 * when first called, not when the option is read. */
typedef struct TargetNode {
  struct TargetNode* next;
  UWord key; /* the target address */
  Bool is_only;
} TargetNode;

static VgHashTable* targets = NULL;
static Bool only_entered = False;

Bool tm_is_only_target(Addr target) {
  if (targets == NULL) targets = VG_(HT_construct)("tm.only.targets");
  TargetNode* n = VG_(HT_lookup)(targets, (UWord)target);
  if (n == NULL) {
    n = VG_(malloc)("tm.only.target", sizeof(TargetNode));
    n->key = (UWord)target;
    const HChar* name = NULL;
    n->is_only = VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), target, &name) &&
                 VG_(strcmp)(name, tm_clo_only) == 0;
    VG_(HT_add_node)(targets, n);
  }
  if (n->is_only) only_entered = True;
  return n->is_only;
}

/* Code unmapped (dlclose) takes its decisions along: other code mapped
 * there later may have another function at the same address. */
void tm_filter_unmapped(Addr a, SizeT len) {
  if (targets == NULL || len == 0) return;
  UInt n = 0;
  VgHashNode** nodes = VG_(HT_to_array)(targets, &n);
  if (n == 0) return;
  for (UInt i = 0; i < n; i++) {
    TargetNode* t = (TargetNode*)nodes[i];
    if (t->key >= a && t->key - a < len) VG_(free)(VG_(HT_remove)(targets, t->key));
  }
  VG_(free)(nodes);
}

void tm_filter_finish(void) {
  if (tm_clo_only != NULL && !only_entered) VG_(umsg)
  ("tracefold-mem: --only=%s: no call to a function of that name was seen; "
   "nothing recorded\n",
   tm_clo_only);
}
