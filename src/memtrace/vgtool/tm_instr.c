/* VEX IR instrumentation of tracefold-mem: one helper call per memory access
 * of the instrumented code, placed before the statement that makes it. */
#include "pub_tool_aspacemgr.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"

#include "tm.h"

void tm_record(Addr iaddr, Addr daddr, UWord packed);

/* The executable's file identity: code is "the application" when it comes
 * from a mapping of this file. Comparing dev/inode rather than names makes
 * relative paths and symlinks on the command line harmless. */
static Bool exe_known = False;
static ULong exe_dev = 0, exe_ino = 0;

void tm_instr_init(void) {
  struct vg_stat st;
  SysRes r = VG_(stat)(VG_(args_the_exename), &st);
  if (sr_isError(r)) {
    if (!tm_clo_libs) {
      VG_(fmsg)
      ("tracefold-mem: cannot stat the executable %s to tell it from libraries; "
       "use --libs=yes\n",
       VG_(args_the_exename));
      VG_(exit)(1);
    }
    return;
  }
  exe_known = True;
  exe_dev = st.dev;
  exe_ino = st.ino;
}

static Bool in_application(Addr a) {
  if (tm_clo_libs) return True;
  if (!exe_known) return False;
  NSegment const* seg = VG_(am_find_nsegment)(a);
  return seg != NULL && seg->kind == SkFileC && seg->dev == exe_dev && seg->ino == exe_ino;
}

typedef struct {
  IRSB* out;
  Addr iaddr;
  UInt index; /* next access index within the current instruction */
} Emitter;

/* Packs size, index and flags into one word: the helper takes three
 * arguments, which all fit in registers. */
static void emit(Emitter* e, IRExpr* addr, Int size, UInt flags, IRExpr* guard) {
  tl_assert(isIRAtom(addr));
  /* Sizes above 16 bits come only from dirty helpers (e.g. xsave areas):
   * split them so the record's size field stays exact. */
  Int offset = 0;
  do {
    Int piece = size - offset > 0xffff ? 0xffff : size - offset;
    IRExpr* a = addr;
    if (offset > 0) {
      IRTemp t = newIRTemp(e->out->tyenv, Ity_I64);
      addStmtToIRSB(e->out, IRStmt_WrTmp(t, IRExpr_Binop(Iop_Add64, addr,
                                                         IRExpr_Const(IRConst_U64(offset)))));
      a = IRExpr_RdTmp(t);
    }
    UInt idx = e->index < 255 ? e->index : 255;
    UWord packed = ((UWord)flags << 24) | ((UWord)idx << 16) | (UWord)piece;
    IRDirty* d = unsafeIRDirty_0_N(
        3, "tm_record", VG_(fnptr_to_fnentry)(tm_record),
        mkIRExprVec_3(mkIRExpr_HWord((HWord)e->iaddr), a, mkIRExpr_HWord((HWord)packed)));
    if (guard != NULL) d->guard = guard;
    addStmtToIRSB(e->out, IRStmt_Dirty(d));
    e->index++;
    offset += piece;
  } while (offset < size);
}

static void emit_dirty(Emitter* e, const IRDirty* d) {
  if (d->mFx == Ifx_None) return;
  tl_assert(d->mAddr != NULL && d->mSize > 0);
  /* The dirty call's own guard also guards its memory effects. */
  IRExpr* guard = d->guard;
  if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify) emit(e, d->mAddr, d->mSize, 0, guard);
  if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
    emit(e, d->mAddr, d->mSize, TFM_RAW_STORE, guard);
}

static void emit_stmt(Emitter* e, IRStmt* st) {
  IRTypeEnv* env = e->out->tyenv;
  switch (st->tag) {
    case Ist_WrTmp: {
      IRExpr* data = st->Ist.WrTmp.data;
      if (data->tag == Iex_Load)
        emit(e, data->Iex.Load.addr, sizeofIRType(data->Iex.Load.ty), 0, NULL);
      break;
    }
    case Ist_Store: {
      IRExpr* data = st->Ist.Store.data;
      emit(e, st->Ist.Store.addr, sizeofIRType(typeOfIRExpr(env, data)), TFM_RAW_STORE, NULL);
      break;
    }
    case Ist_StoreG: {
      IRStoreG* sg = st->Ist.StoreG.details;
      emit(e, sg->addr, sizeofIRType(typeOfIRExpr(env, sg->data)), TFM_RAW_STORE, sg->guard);
      break;
    }
    case Ist_LoadG: {
      IRLoadG* lg = st->Ist.LoadG.details;
      IRType wide = Ity_INVALID, narrow = Ity_INVALID;
      typeOfIRLoadGOp(lg->cvt, &wide, &narrow);
      emit(e, lg->addr, sizeofIRType(narrow), 0, lg->guard);
      break;
    }
    case Ist_Dirty:
      emit_dirty(e, st->Ist.Dirty.details);
      break;
    case Ist_CAS: {
      /* A CAS reads, then writes (whether or not the comparison succeeds,
       * as far as the cache is concerned); a double CAS covers both halves. */
      IRCAS* cas = st->Ist.CAS.details;
      Int size = sizeofIRType(typeOfIRExpr(env, cas->dataLo));
      if (cas->dataHi != NULL) size *= 2;
      emit(e, cas->addr, size, 0, NULL);
      emit(e, cas->addr, size, TFM_RAW_STORE, NULL);
      break;
    }
    case Ist_LLSC: {
      IRExpr* sd = st->Ist.LLSC.storedata;
      if (sd == NULL) {
        emit(e, st->Ist.LLSC.addr, sizeofIRType(typeOfIRTemp(env, st->Ist.LLSC.result)), 0, NULL);
      } else {
        emit(e, st->Ist.LLSC.addr, sizeofIRType(typeOfIRExpr(env, sd)), TFM_RAW_STORE, NULL);
      }
      break;
    }
    default:
      break;
  }
}

/* Calls and returns of all code move the shadow stack, even where accesses
 * are filtered out, so that a library calling back into the application
 * leaves the context it would have had. The block's last instruction is the
 * call; the stack pointer read after all of the block's statements is the
 * one the jump leaves behind. (post_clo_init turns off VEX's chasing of
 * calls, which would otherwise fold a call into the middle of a block.) */
static void track_call_or_return(Emitter* e, IRJumpKind jk, IRExpr* next, Int offset_sp) {
  IRTemp sp = newIRTemp(e->out->tyenv, Ity_I64);
  addStmtToIRSB(e->out, IRStmt_WrTmp(sp, IRExpr_Get(offset_sp, Ity_I64)));
  IRDirty* d;
  if (jk == Ijk_Call) {
    /* The block's `next` is the callee's address (an atom, valid here). */
    d = unsafeIRDirty_0_N(3, "tm_on_call", VG_(fnptr_to_fnentry)(tm_on_call),
                          mkIRExprVec_3(mkIRExpr_HWord((HWord)e->iaddr), IRExpr_RdTmp(sp), next));
  } else {
    d = unsafeIRDirty_0_N(1, "tm_on_ret", VG_(fnptr_to_fnentry)(tm_on_ret),
                          mkIRExprVec_1(IRExpr_RdTmp(sp)));
  }
  addStmtToIRSB(e->out, IRStmt_Dirty(d));
}

IRSB* tm_instrument(VgCallbackClosure* closure, IRSB* sb_in, const VexGuestLayout* layout,
                    const VexGuestExtents* vge, const VexArchInfo* archinfo_host, IRType gWordTy,
                    IRType hWordTy) {
  (void)closure;
  (void)vge;
  (void)archinfo_host;
  if (gWordTy != hWordTy) VG_(tool_panic)("tracefold-mem: host/guest word size mismatch");

  Emitter e;
  e.out = deepCopyIRSBExceptStmts(sb_in);
  e.iaddr = 0;
  e.index = 0;
  Bool on = False;
  Int i = 0;
  /* Statements before the first IMark set up the block; they make no
   * accesses of the guest program. */
  for (; i < sb_in->stmts_used && sb_in->stmts[i]->tag != Ist_IMark; i++)
    addStmtToIRSB(e.out, sb_in->stmts[i]);
  for (; i < sb_in->stmts_used; i++) {
    IRStmt* st = sb_in->stmts[i];
    if (st == NULL) continue;
    if (st->tag == Ist_IMark) {
      e.iaddr = (Addr)st->Ist.IMark.addr;
      e.index = 0;
      on = in_application(e.iaddr);
    } else if (on) {
      emit_stmt(&e, st);
    }
    addStmtToIRSB(e.out, st);
  }
  if (tm_clo_call_paths && (sb_in->jumpkind == Ijk_Call || sb_in->jumpkind == Ijk_Ret))
    track_call_or_return(&e, sb_in->jumpkind, sb_in->next, layout->offset_SP);
  return e.out;
}
