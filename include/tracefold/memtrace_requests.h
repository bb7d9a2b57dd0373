/* Client-request numbers shared by include/tracefold/memtrace.h (the
 * application side) and the tracefold-mem Valgrind tool. Needs valgrind.h
 * included first (VG_USERREQ_TOOL_BASE). */
#ifndef TRACEFOLD_MEMTRACE_REQUESTS_H
#define TRACEFOLD_MEMTRACE_REQUESTS_H

enum { TRACEFOLD_MEM_REQ_START = VG_USERREQ_TOOL_BASE('T', 'F'), TRACEFOLD_MEM_REQ_STOP };

#endif
