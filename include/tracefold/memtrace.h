/* Start and stop recording of memory references under the tracefold-mem
 * Valgrind tool (`valgrind --tool=tracefold-mem --record-at-start=no ...`).
 * Outside Valgrind both are a handful of instructions that do nothing, so
 * they can stay in production builds. Needs Valgrind's valgrind.h (Debian
 * package `valgrind`). Usable from C and C++. */
#ifndef TRACEFOLD_MEMTRACE_H
#define TRACEFOLD_MEMTRACE_H

#include <valgrind/valgrind.h>

#include "tracefold/memtrace_requests.h"

/* Recording is one switch for the whole process: every thread's accesses
 * are recorded from START to STOP, whichever thread issues them. */
#define TRACEFOLD_MEM_START() \
  VALGRIND_DO_CLIENT_REQUEST_STMT(TRACEFOLD_MEM_REQ_START, 0, 0, 0, 0, 0)
#define TRACEFOLD_MEM_STOP() VALGRIND_DO_CLIENT_REQUEST_STMT(TRACEFOLD_MEM_REQ_STOP, 0, 0, 0, 0, 0)

#endif
