// Call-path sampling (`tracefold record --sample`, TRACEFOLD_SAMPLE): a
// per-thread POSIX timer interrupts each thread every period; the signal
// handler only copies raw instruction addresses into the thread's
// preallocated ring, and the recorder turns them into contexts and writes them
// (samples.hpp) from its MPI wrappers and at the end. Design and limits:
// docs/sampling.md.
#pragma once

#include <atomic>
#include <cstdint>

// Hidden, like the rest of the recorder's internals.
#pragma GCC visibility push(hidden)

namespace tracefold::record {

class Recorder;

// Per thread, read by the signal handler. For the LCA marker (sampler.cpp):
// how many wrapped MPI calls this thread entered, and the lowest stack
// address one was entered at since this thread's last sample. And, once
// the recorder gave the current call its place in the rank's event
// sequence (timestamp, before the call's own end), which place: a sample
// in the rest of the call names that event, not the next. And when the
// current call was entered (its timeline enter time, unskewed), 0 while
// that is still to be read: copies for ticks that fell due before it, and
// a tick taken before it is read, are not in the call.
struct SamplerThreadMarks {
  uint64_t calls = 0;
  uintptr_t low_mpi_sp = UINTPTR_MAX;
  uint64_t timed_call = 0;
  uint64_t timed_event = 0;
  int64_t enter_ns = 0;
};
[[gnu::tls_model(
    "initial-exec")]] extern constinit thread_local SamplerThreadMarks tl_sampler_marks;

// Samples taken by any handler and not yet written: the MPI wrappers drain
// only when this moves.
extern std::atomic<uint64_t> g_samples_produced;
extern uint64_t g_samples_consumed;  // under the recorder's lock

/// From Call::begin (inlined there): one more MPI call entered at `sp`.
[[gnu::always_inline]] inline void sampler_note_call(uintptr_t sp) {
  SamplerThreadMarks& m = tl_sampler_marks;
  ++m.calls;
  if (sp < m.low_mpi_sp) m.low_mpi_sp = sp;
}

/// From Call::begin, before the thread counts as inside a call: the
/// call's enter time when it is known already (a poll the fast path made
/// earlier), else 0 until sampler_note_enter. Noted first, so that a tick
/// that finds the thread inside never reads the previous call's time.
[[gnu::always_inline]] inline void sampler_note_entering(int64_t enter_ns) {
  tl_sampler_marks.enter_ns = enter_ns;
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

/// From Call::begin, once the call's enter time is read.
[[gnu::always_inline]] inline void sampler_note_enter(int64_t enter_ns) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  tl_sampler_marks.enter_ns = enter_ns;
}

/// Caller holds the recorder's lock: event `index`, which ended at
/// `exit_ns` (the raw clock), is timestamped now.
void sampler_note_timed_at(uint64_t index, int64_t exit_ns);

/// From Recorder::timestamp (under the recorder's lock, only while
/// sampling): this thread's current call is event `index`, which ended at
/// `exit_ns`.
[[gnu::always_inline]] inline void sampler_note_timed(uint64_t index, int64_t exit_ns) {
  SamplerThreadMarks& m = tl_sampler_marks;
  m.timed_event = index;
  std::atomic_signal_fence(std::memory_order_release);
  m.timed_call = m.calls;
  sampler_note_timed_at(index, exit_ns);
}

/// From Recorder::new_stream, on the thread whose stream `number` it made:
/// the samples file says which stream the thread's samples belong to.
void sampler_note_stream(int number);

/// Starts sampling if TRACEFOLD_SAMPLE asks for it (end of Recorder::start,
/// after the timeline was opened: the samples go to its directory).
void start_sampler(Recorder& r, const char* timeline_dir);
/// Caller holds the recorder's lock: writes what the handlers collected.
void drain_samples(Recorder& r);
inline void maybe_drain_samples(Recorder& r) {
  if (g_samples_produced.load(std::memory_order_relaxed) != g_samples_consumed) drain_samples(r);
}
/// Caller holds the recorder's lock: stops every timer, writes the rest and
/// closes the file (MPI_Finalize, or a partial when the process dies).
void stop_sampler(Recorder& r);

}  // namespace tracefold::record

#pragma GCC visibility pop
