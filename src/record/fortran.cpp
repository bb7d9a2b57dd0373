// Fortran statuses and entry points, and the hand-written environment calls
// (MPI_Init, MPI_Finalize, MPI_Abort, MPI_Pcontrol) in every binding.

#include <dlfcn.h>

#include <cstring>

#include "recorder_impl.hpp"

namespace tracefold::record {

// The same wrapper bodies serve mpif.h/use mpi and mpi_f08, and an mpi_f08
// binding may mark an ignored status with objects of its own (MPI-4's
// MPI_F08_STATUS(ES)_IGNORE: MPICH does; Open MPI 4 passes the mpif.h ones).
bool is_ignore_marker(const MPI_Fint* p, const MPI_Fint* mpif_marker, const void* f08_marker) {
  return p == nullptr || p == mpif_marker || static_cast<const void*>(p) == f08_marker;
}

bool fortran_statuses_ignored(const MPI_Fint* statuses) {
#if MPI_VERSION >= 4
  return is_ignore_marker(statuses, MPI_F_STATUSES_IGNORE, MPI_F08_STATUSES_IGNORE);
#else
  return is_ignore_marker(statuses, MPI_F_STATUSES_IGNORE, nullptr);
#endif
}

bool fortran_status_ignored(const MPI_Fint* status) {
#if MPI_VERSION >= 4
  return is_ignore_marker(status, MPI_F_STATUS_IGNORE, MPI_F08_STATUS_IGNORE);
#else
  return is_ignore_marker(status, MPI_F_STATUS_IGNORE, nullptr);
#endif
}

const MPI_Status* status_f2c(MPI_Fint* fstatus, MPI_Status* out) {
  if (fortran_status_ignored(fstatus)) return MPI_STATUS_IGNORE;
  if (MPI_Status_f2c(fstatus, out) != MPI_SUCCESS) return MPI_STATUS_IGNORE;
  return out;
}

FortranEntry f08_entry(const char* name, FortranEntry fallback) {
  // RTLD_NEXT skips this library, so the wrapper never finds itself; the
  // pmpi_ name first, as the other Fortran wrappers call the profiling entry.
  for (const char* prefix : {"pmpi_", "mpi_"}) {
    const std::string sym = std::string(prefix) + name;
    if (void* p = dlsym(RTLD_NEXT, sym.c_str())) return reinterpret_cast<FortranEntry>(p);
  }
  if (fallback != nullptr) return fallback;
  std::fprintf(stderr, "tracefold: the MPI library has no mpi_%s; cannot forward the call\n", name);
  std::abort();
}

}  // namespace tracefold::record

// ------------------------------------------------------------ hand-written
// Environment calls need more than argument roles: they start and stop the
// recorder, and their Fortran forms call the library's Fortran entry points.

namespace tracefold::record {
namespace {

// MPI's level constants differ between libraries; the trace stores 0
// (SINGLE) to 3 (MULTIPLE), as replay asks for them again elsewhere.
int64_t level_number(int level) {
  if (level == MPI_THREAD_SINGLE) return 0;
  if (level == MPI_THREAD_FUNNELED) return 1;
  if (level == MPI_THREAD_SERIALIZED) return 2;
  if (level == MPI_THREAD_MULTIPLE) return 3;
  return level;
}

// `required` < 0: MPI_Init, which has no thread level to record.
void start_recording(int64_t t0, const char* name, int required = -1, int provided = -1) {
  if (foreign_mpi()) return;  // the recorder never starts: every wrapper passes through
  Recorder& r = recorder();
  const bool was = r.initialized;
  r.start(t0);
  if (was || !r.initialized) return;
  r.thread_order = required >= 0 && level_number(provided) >= 2;
  std::lock_guard lock(r.mu);
  HoldingMark holding;
  const bool recording = r.recording();
  StackKey stack;
  if (recording) stack = r.capture_stack();
  // The recorder's start-up (clock offsets, files) takes longer on some
  // ranks, rank 0 most: without this the first collective of the program
  // would show that as waiting. Every rank that started takes part, even
  // one whose set-up failed, so none waits forever; on the recorder's own
  // communicator, so it is no event and matches nothing of the program.
  PMPI_Barrier(r.private_comm);
  if (!recording) return;
  Event ev;
  ev.op = op(name);
  if (required >= 0) {
    // Replay initializes MPI at this level again, and a trace with these
    // fields is known to give each thread that called MPI its own stream.
    ev.set(FieldTable::intern("required", FieldKind::kScalar), level_number(required));
    ev.set(FieldTable::intern("provided", FieldKind::kScalar), level_number(provided));
  }
  ev.compute_ns = 0;
  const int64_t exit_ns = now_ns();
  ev.comm_ns = exit_ns - t0;
  const OpId init_op = ev.op;  // append takes ev's contents
  ThreadStream& s = r.stream();
  if (r.append(s, ev, stack)) r.timestamp(init_op, t0, exit_ns, s.number);
  s.last_exit_ns = now_ns();
  if (r.compute_cpu) mark_compute_cpu();
}

void record_finalize() {
  { Call c(op("MPI_Finalize")); }
  recorder().finish();
}

void record_abort(MPI_Comm comm, int code) {
  {
    Call c(op("MPI_Abort"));
    if (c.active()) {
      c.comm(comm);
      c.scalar(FieldTable::intern("code", FieldKind::kScalar), code);
    }
  }
  recorder().write_partial("MPI_Abort was called");
}

}  // namespace
}  // namespace tracefold::record

namespace R = tracefold::record;

// Some MPI libraries (MPICH) implement the Fortran MPI_INIT on top of the C
// MPI_Init: the Fortran wrapper then starts the recorder, not the C one.
extern "C" int MPI_Init(int* argc, char*** argv) {
  if (R::tl_in_call) return PMPI_Init(argc, argv);
  const int64_t t0 = R::now_ns();
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) R::start_recording(t0, "MPI_Init");
  return rc;
}

extern "C" int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  if (R::tl_in_call) return PMPI_Init_thread(argc, argv, required, provided);
  const int64_t t0 = R::now_ns();
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) R::start_recording(t0, "MPI_Init_thread", required, *provided);
  return rc;
}

extern "C" int MPI_Finalize(void) {
  R::record_finalize();
  return PMPI_Finalize();
}

extern "C" int MPI_Abort(MPI_Comm comm, int errorcode) {
  R::record_abort(comm, errorcode);
  return PMPI_Abort(comm, errorcode);
}

namespace {
int traced_pcontrol(int level) {
  static const tracefold::OpId op = R::op("MPI_Pcontrol");
  static const tracefold::FieldId level_field =
      tracefold::FieldTable::intern("level", tracefold::FieldKind::kScalar);
  R::Call c(op);
  if (c.active()) c.scalar(level_field, level);
  return PMPI_Pcontrol(level);
}

// MPI_PCONTROL(LEVEL) has no IERROR argument, unlike every other Fortran
// binding, so it cannot come from the generated wrappers; and the varargs
// C entry is the one thing both MPI libraries' Fortran bindings call.
void fortran_pcontrol(const MPI_Fint* level) {
  traced_pcontrol(static_cast<int>(*level));
}
}  // namespace

extern "C" int MPI_Pcontrol(const int level, ...) {
  return traced_pcontrol(level);
}

extern "C" void mpi_pcontrol_(const MPI_Fint* level) {
  fortran_pcontrol(level);
}
extern "C" void mpi_pcontrol__(const MPI_Fint* level) {
  fortran_pcontrol(level);
}
extern "C" void mpi_pcontrol(const MPI_Fint* level) {
  fortran_pcontrol(level);
}
extern "C" void MPI_PCONTROL(const MPI_Fint* level) {
  fortran_pcontrol(level);
}
// mpi_f08's MPI_Pcontrol(level) passes the INTEGER the same way.
extern "C" void mpi_pcontrol_f08_(const MPI_Fint* level) {
  fortran_pcontrol(level);
}

extern "C" void pmpi_init_(MPI_Fint* ierr);
extern "C" void pmpi_init_thread_(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr);
extern "C" void pmpi_finalize_(MPI_Fint* ierr);
extern "C" void pmpi_abort_(MPI_Fint* comm, MPI_Fint* code, MPI_Fint* ierr);

namespace {
using InitEntry = void (*)(MPI_Fint*);
using InitThreadEntry = void (*)(MPI_Fint*, MPI_Fint*, MPI_Fint*);
using FinalizeEntry = void (*)(MPI_Fint*);
using AbortEntry = void (*)(MPI_Fint*, MPI_Fint*, MPI_Fint*);

void f_init(InitEntry fwd, MPI_Fint* ierr) {
  const int64_t t0 = R::now_ns();
  R::tl_in_call = true;
  fwd(ierr);
  R::tl_in_call = false;
  if (*ierr == MPI_SUCCESS) R::start_recording(t0, "MPI_Init");
}
void f_init_thread(InitThreadEntry fwd, MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  const int64_t t0 = R::now_ns();
  R::tl_in_call = true;
  fwd(required, provided, ierr);
  R::tl_in_call = false;
  if (*ierr == MPI_SUCCESS)
    R::start_recording(t0, "MPI_Init_thread", static_cast<int>(*required),
                       static_cast<int>(*provided));
}
void f_finalize(FinalizeEntry fwd, MPI_Fint* ierr) {
  R::record_finalize();
  fwd(ierr);
}
void f_abort(AbortEntry fwd, MPI_Fint* comm, MPI_Fint* code, MPI_Fint* ierr) {
  R::record_abort(MPI_Comm_f2c(*comm), static_cast<int>(*code));
  fwd(comm, code, ierr);
}

// The library's mpi_f08 entry, or the mpif.h one (same ABI) without it.
template <typename Entry>
Entry f08(const char* name, Entry fallback) {
  return reinterpret_cast<Entry>(R::f08_entry(name, reinterpret_cast<R::FortranEntry>(fallback)));
}
}  // namespace

#define TF_FORTRAN_ALL(lower, upper, params, args) \
  extern "C" void lower##_ params {                \
    args;                                          \
  }                                                \
  extern "C" void lower##__ params {               \
    args;                                          \
  }                                                \
  extern "C" void lower params {                   \
    args;                                          \
  }                                                \
  extern "C" void upper params {                   \
    args;                                          \
  }

TF_FORTRAN_ALL(mpi_init, MPI_INIT, (MPI_Fint * ierr), f_init(pmpi_init_, ierr))
TF_FORTRAN_ALL(mpi_init_thread, MPI_INIT_THREAD,
               (MPI_Fint * required, MPI_Fint* provided, MPI_Fint* ierr),
               f_init_thread(pmpi_init_thread_, required, provided, ierr))
TF_FORTRAN_ALL(mpi_finalize, MPI_FINALIZE, (MPI_Fint * ierr), f_finalize(pmpi_finalize_, ierr))
TF_FORTRAN_ALL(mpi_abort, MPI_ABORT, (MPI_Fint * comm, MPI_Fint* code, MPI_Fint* ierr),
               f_abort(pmpi_abort_, comm, code, ierr))

// use mpi_f08 (Open MPI's names; MPICH's are the same for these four). The
// optional ierror arrives as a null pointer when the program leaves it out:
// the library then gets a local one.
extern "C" void mpi_init_f08_(MPI_Fint* ierr) {
  MPI_Fint local = MPI_SUCCESS;
  static const InitEntry fwd = f08("init_f08_", pmpi_init_);
  f_init(fwd, ierr != nullptr ? ierr : &local);
}
extern "C" void mpi_init_thread_f08_(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  MPI_Fint local = MPI_SUCCESS;
  static const InitThreadEntry fwd = f08("init_thread_f08_", pmpi_init_thread_);
  f_init_thread(fwd, required, provided, ierr != nullptr ? ierr : &local);
}
extern "C" void mpi_finalize_f08_(MPI_Fint* ierr) {
  MPI_Fint local = MPI_SUCCESS;
  static const FinalizeEntry fwd = f08("finalize_f08_", pmpi_finalize_);
  f_finalize(fwd, ierr != nullptr ? ierr : &local);
}
extern "C" void mpi_abort_f08_(MPI_Fint* comm, MPI_Fint* code, MPI_Fint* ierr) {
  MPI_Fint local = MPI_SUCCESS;
  static const AbortEntry fwd = f08("abort_f08_", pmpi_abort_);
  f_abort(fwd, comm, code, ierr != nullptr ? ierr : &local);
}
