// The per-process recorder behind the generated MPI wrappers (internal).
//
// Every wrapped call builds one tracefold::Event through a Call object: the
// constructor takes the entry time (the gap since the previous call is the
// computation time), the generated code describes the arguments, and the
// destructor captures the call site and hands the event to the folder. The
// recorder never throws into the application: a failure prints one line to
// stderr and turns tracing off for this rank.
#pragma once

#include <mpi.h>
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "tracefold/event.hpp"

namespace tracefold::record {

/// Field ids used by the wrappers (interned once at load time).
extern const FieldId kPeer, kPeerRecv, kTag, kRtag, kCount, kDtype, kDsize, kRcount, kRdtype,
    kRdsize, kCounts, kRcounts, kRoot, kRedop, kColor, kKey, kNdims, kFlag, kIndex, kOutcount,
    kTarget, kSrc, kMtag, kNewcomm, kLinks, kSrcs, kMtags, kPcomm, kRleader, kHigh, kIndices,
    kBlocklen, kBlocklens, kPrecision, kRange;
/// Topology arguments (topology.cpp): dims and periods of MPI_Cart_create,
/// index and edges of MPI_Graph_create, and the sources and destinations of
/// MPI_Dist_graph_create_adjacent as offsets from the caller's rank.
extern const FieldId kDims, kPeriods, kGindex, kGedges, kGsrcs, kGdsts;

/// Op id of a known MPI function name (cached by the caller's static).
OpId op(const char* name);

/// The recorder's lock, and each thread stream's request-table lock.
/// Recursive: MPI_Finalize's wrapper holds it when the end of recording
/// takes it again, and so may a signal handler on a thread that holds it.
/// Calls that create or complete requests take their stream's, so the
/// uncontended case is inline, a compare-and-swap each way (glibc's
/// recursive mutex cost some 40 instructions per release); a thread that
/// finds it taken sleeps on the lock word (futex) until woken.
class RecorderLock {
 public:
  void lock() {
    const uintptr_t me = self();
    // Only this thread ever stores `me`, so a relaxed read that finds it
    // is this thread's own earlier store: it holds the lock.
    if (owner_.load(std::memory_order_relaxed) == me) {
      ++depth_;
      return;
    }
    uint32_t expected = 0;
    if (!state_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                        std::memory_order_relaxed)) [[unlikely]]
      lock_contended();
    owner_.store(me, std::memory_order_relaxed);
    depth_ = 1;
  }
  void unlock() {
    if (--depth_ != 0) return;
    owner_.store(0, std::memory_order_relaxed);
    // 2: another thread waits (lock_contended).
    if (state_.exchange(0, std::memory_order_release) == 2) [[unlikely]]
      wake();
  }

 private:
  static uintptr_t self() {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__aarch64__))
    return reinterpret_cast<uintptr_t>(__builtin_thread_pointer());
#else
    return static_cast<uintptr_t>(pthread_self());
#endif
  }
  [[gnu::noinline]] void lock_contended();
  [[gnu::noinline]] void wake();
  std::atomic<uint32_t> state_{0};  // 0 free, 1 taken, 2 taken and maybe waited for
  std::atomic<uintptr_t> owner_{0};
  uint32_t depth_ = 0;
};

class Call {
 public:
  explicit Call(OpId op);
  /// A poll the fast path called already, entered at `enter_ns`: it found
  /// something, so its full event is built now, as the slow path would.
  Call(OpId op, int64_t enter_ns);
  ~Call();
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  /// False when tracing is off, not yet initialized, or this call is nested
  /// inside another wrapped call (an MPI library calling MPI_* internally).
  bool active() const { return active_; }

  void comm(MPI_Comm comm);
  void scalar(FieldId f, int64_t value);
  void peer(FieldId f, int rank);
  void tag(FieldId f, int tag);
  void datatype(FieldId id_field, FieldId size_field, MPI_Datatype type);
  void counts(FieldId f, const int* counts);
  void int_list(FieldId f, int n, const int* values);
  /// Logical flags (C int or Fortran LOGICAL: any non-zero is true) as 0/1.
  void flag_list(FieldId f, int n, const int* values);
  /// Ranks of `comm` as offsets from the caller's rank, modulo its size:
  /// the same on every rank of a regular graph, so SPMD ranks fold.
  void relative_list(FieldId f, MPI_Comm comm, int n, const int* ranks);
  /// A neighbourhood v/w-collective's per-neighbour counts: as many as the
  /// call's communicator has sources (`sources`) or destinations.
  /// The sources and destinations MPI gives `graph`'s caller (what
  /// MPI_Dist_graph_create's caller does not pass itself), as
  /// relative_list of `comm` records them.
  void dist_graph_neighbours(MPI_Comm comm, MPI_Comm graph);
  void neighbour_counts(FieldId f, const int* counts, bool sources);
  /// Before MPI_Type_free: the type's id and size (the handle may come back
  /// for another type, so it is forgotten with its last reference).
  void type_freed(MPI_Datatype type);
  /// A type constructor's result (-> newtype, newsize).
  void newtype(MPI_Datatype type);
  /// The old types of MPI_Type_create_struct (-> dtypes, dsizes).
  void datatypes(int n, const MPI_Datatype* types);
  /// The types MPI_Type_get_contents returned for `type` (-> dtypes).
  void contents(MPI_Datatype type, int max_types, const MPI_Datatype* types);
  /// Waitsome/Testsome: the indices completed (-> indices, 0-based).
  void indices(int outcount, const int* indices, int index_base);
  void redop(MPI_Op op);
  void status(const MPI_Status* status);
  void request_out(const MPI_Request* request);
  /// Before the call: which events created these requests (-> links).
  void requests_in(int n, const MPI_Request* requests);
  /// After the call: forget requests that completed (handle became NULL).
  void requests_done(int n, const MPI_Request* requests);
  /// After MPI_Start(all): the start is now the event that activated them.
  void requests_started(int n, const MPI_Request* requests);
  /// Before Waitall/Testall/Waitsome/Testsome, after requests_in: the
  /// status array to hand to the library. That is `statuses` itself unless
  /// it is MPI_STATUSES_IGNORE and a wildcard receive is among the requests;
  /// then a per-thread buffer of `n` statuses, so what they matched can be
  /// read afterwards.
  MPI_Status* statuses_in(int n, MPI_Status* statuses);
  /// The same for the Fortran forms (MPI_F_STATUSES_IGNORE, Fortran statuses).
  MPI_Fint* fstatuses_in(int n, MPI_Fint* statuses);
  /// After a successful multi-request completion: `srcs`/`mtags` of its
  /// wildcard receives from the statuses. `outcount` < 0 means every request
  /// completed unless the recorded flag is 0 (Waitall/Testall); otherwise
  /// statuses[k] belongs to request indices[k] - `index_base`.
  void statuses(int n, const MPI_Status* statuses, int outcount, const int* indices,
                int index_base);
  /// The same with an array of Fortran statuses.
  void fstatuses(int n, const MPI_Fint* statuses, int outcount, const int* indices, int index_base);
  /// A communicator argument other than the call's own `comm` (the peer
  /// communicator of MPI_Intercomm_create), as its trace-wide id.
  void comm_field(FieldId f, MPI_Comm c);
  /// The communicator the call created from `parent` (MPI_COMM_NULL: none
  /// here). An intercommunicator gets one id on both sides.
  void newcomm(MPI_Comm parent, MPI_Comm created);
  /// Ends recording before the call: the call may block, and other threads
  /// must be able to record meanwhile.
  void release();
  /// After a request poll (MPI_Test, Testany, Testsome, Testall): whether it
  /// found nothing (flag or outcount 0) and the index it returned (Testany;
  /// else 0). `statuses`: the call has a status array (Testall, Testsome),
  /// whose wildcard matches need a status buffer the fast path does not
  /// hand out. Lets the next equal poll take the fast path.
  void poll_result(bool nothing, int index, bool statuses);
  /// The same after MPI_Iprobe/MPI_Improbe, with their source and tag.
  void probe_result(bool nothing, int source, int tag);
  /// For a Call made in a function the wrapper reached by a tail call (the
  /// out-of-line part of a poll wrapper), that function's return address:
  /// if it points into this library, the call was not a tail call after
  /// all and the wrapper's frame is one more of our own before the call
  /// site, so the stack walk's window grows by one.
  void caller(const void* return_address);

 private:
  void begin(OpId op, int64_t enter_ns);
  // The recorder's lock, for the rank's shared state (new communicators and
  // datatypes, the raw log, timeline and statistics): taken at most once
  // per call, by the calls that need it, and held until the event is
  // queued. A call that needs none records without it.
  void hold();
  // Every list field goes through here: Recorder::append then needs no pass
  // over the fields to learn how many list entries the event holds.
  void set_list(FieldId f, std::vector<int64_t> values) {
    list_entries_ += values.size();
    lists_ = true;
    ev_.set_list(f, std::move(values));
  }
  // Shared by statuses/fstatuses: `status_at(k)` gives the k-th status.
  template <class StatusAt>
  void record_matches(int n, int outcount, const int* indices, int index_base,
                      StatusAt&& status_at);
  std::unique_lock<RecorderLock> lock_;
  bool active_ = false;
  bool nested_ = false;
  OpId op_;
  int64_t enter_ns_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  // What comm() set as the event's communicator field (kAbsent: none), so
  // the queue need not look the field up again (ThreadStream::unfolded_comm).
  int64_t comm_id_ = kAbsent;
  bool wild_source_ = false;
  bool wild_tag_ = false;
  // Some request passed to requests_in is a live wildcard receive: the only
  // case where multi-request completions look at statuses.
  bool any_wild_ = false;
  // Per-thread buffers reused call after call (no allocation per call); a
  // thread has at most one active Call (nested calls are not recorded).
  std::vector<MPI_Request>& pending_;
  std::vector<std::pair<bool, bool>>& pending_wild_;  // per pending request: any source, any tag
  Event& ev_;
  std::size_t list_entries_ = 0;  // see set_list
  bool lists_ = false;
  // Set by poll_result/probe_result: ~Call arms the poll fast path.
  bool poll_nothing_ = false;
  int poll_index_ = 0, poll_source_ = 0, poll_tag_ = 0;
  uint8_t extra_frames_ = 0;  // see caller()
};

/// Fortran status -> C status, or MPI_STATUS_IGNORE.
const MPI_Status* status_f2c(MPI_Fint* fstatus, MPI_Status* out);

/// Type-erased Fortran entry point of the MPI library.
using FortranEntry = void (*)();
/// The library's own mpi_f08 entry `NAME` (e.g. "send_f08_"): pmpi_NAME or
/// mpi_NAME found past this library; `fallback` when it has neither (the
/// program is stopped when that is null too).
FortranEntry f08_entry(const char* name, FortranEntry fallback);

}  // namespace tracefold::record
