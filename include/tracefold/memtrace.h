/* Start and stop recording of memory references, under the tracefold-mem
 * Valgrind tool (`valgrind --tool=tracefold-mem --record-at-start=no ...`)
 * and in a program built for the clang front end and linked with
 * libtracefold_memrt (run with TRACEFOLD_MEM_RECORD_AT_START=no).
 * Elsewhere both are a handful of instructions that do nothing, so they can
 * stay in production builds. Needs Valgrind's valgrind.h (Debian package
 * `valgrind`). Usable from C and C++. */
#ifndef TRACEFOLD_MEMTRACE_H
#define TRACEFOLD_MEMTRACE_H

#include <valgrind/valgrind.h>

#include "tracefold/memtrace_requests.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Defined by libtracefold_memrt; weak, so a program not linked with it
 * sees null pointers and the macros only make the client request. */
void tracefold_memrt_start(void) __attribute__((weak));
void tracefold_memrt_stop(void) __attribute__((weak));
#ifdef __cplusplus
}
#endif

/* Recording is one switch for the whole process: every thread's accesses
 * are recorded from START to STOP, whichever thread issues them. The client
 * request stores its arguments to the stack: START makes it before it
 * calls the library, STOP after, so that the clang front end records
 * neither. */
#define TRACEFOLD_MEM_START()                                                \
  do {                                                                       \
    VALGRIND_DO_CLIENT_REQUEST_STMT(TRACEFOLD_MEM_REQ_START, 0, 0, 0, 0, 0); \
    if (tracefold_memrt_start) tracefold_memrt_start();                      \
  } while (0)
#define TRACEFOLD_MEM_STOP()                                                \
  do {                                                                      \
    if (tracefold_memrt_stop) tracefold_memrt_stop();                       \
    VALGRIND_DO_CLIENT_REQUEST_STMT(TRACEFOLD_MEM_REQ_STOP, 0, 0, 0, 0, 0); \
  } while (0)

#endif
