/* tracefold-mem: a Valgrind tool that records every load and store of the
 * application (its executable image by default) as per-thread raw streams.
 * Options, client requests and the tool's life cycle live here. */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_options.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_vki.h"
#include "valgrind.h"

#include "../../../include/tracefold/memtrace_requests.h"
#include "tm.h"

const HChar* tm_clo_raw_log = NULL;
Bool tm_clo_libs = False;
Bool tm_clo_call_paths = True;
static Bool clo_record_at_start = True;
static const HChar* clo_addr_range = NULL;
Bool tm_active = True;
Bool tm_forked_child = False;

static Bool tm_process_cmd_line_option(const HChar* arg) {
  if VG_STR_CLO (arg, "--raw-log", tm_clo_raw_log) {
    if (tm_clo_raw_log[0] == '\0') VG_(fmsg_bad_option)(arg, "--raw-log needs a directory\n");
  } else if VG_BOOL_CLO (arg, "--libs", tm_clo_libs) {
  } else if VG_BOOL_CLO (arg, "--record-at-start", clo_record_at_start) {
  } else if VG_BOOL_CLO (arg, "--call-paths", tm_clo_call_paths) {
  } else if VG_STR_CLO (arg, "--only", tm_clo_only) {
    if (tm_clo_only[0] == '\0') VG_(fmsg_bad_option)(arg, "--only needs a function name\n");
  } else if VG_STR_CLO (arg, "--addr-range", clo_addr_range) {
    if (!tm_filter_parse_ranges(clo_addr_range)) VG_(fmsg_bad_option)
    (arg,
     "--addr-range wants START-END[,START-END...] (END excluded, "
     "hex with 0x or decimal, at most 16 ranges)\n");
  } else {
    return False;
  }
  return True;
}

static void tm_print_usage(void) {
  VG_(printf)
  ("    --raw-log=DIR             write DIR/thread-N.bin, one raw stream per thread\n"
   "                              (N = creation order; DIR must exist; %%p and\n"
   "                              %%q{VAR} expand as in --log-file) [none]\n"
   "    --libs=no|yes             also record accesses made by code of shared\n"
   "                              libraries and the dynamic loader [no]\n"
   "    --record-at-start=yes|no  record from the first instruction; with no,\n"
   "                              only between TRACEFOLD_MEM_START and _STOP [yes]\n"
   "    --call-paths=yes|no       keep a shadow stack on calls and returns, give\n"
   "                              each access its call-path context and write\n"
   "                              DIR/contexts.bin [yes]\n"
   "    --only=FUNC               record only while a call to FUNC (by symbol\n"
   "                              name, entered at its first instruction) is on\n"
   "                              the thread's shadow stack [none]\n"
   "    --addr-range=S-E[,S-E..]  record only accesses to data addresses in\n"
   "                              [S, E) (hex with 0x, or decimal) [all]\n");
}

static void tm_print_debug_usage(void) {
  VG_(printf)("    (none)\n");
}

static Bool tm_handle_client_request(ThreadId tid, UWord* args, UWord* ret) {
  (void)tid;
  if (!VG_IS_TOOL_USERREQ('T', 'F', args[0])) return False;
  switch (args[0]) {
    case TRACEFOLD_MEM_REQ_START:
      tm_active = !tm_forked_child;
      break;
    case TRACEFOLD_MEM_REQ_STOP:
      tm_active = False;
      break;
    default:
      return False;
  }
  *ret = 0;
  return True;
}

static void tm_start_client_code(ThreadId tid, ULong blocks) {
  (void)blocks;
  /* A forked child records nothing: it must not even open streams. */
  tm_current = tm_forked_child ? NULL : tm_thread_of(tid);
  /* The first time a thread runs, its stack pointer is its stack base. */
  if (tm_current != NULL && !tm_current->stack_known) tm_addr_thread_starts(tm_current, tid);
}

static void tm_ll_create(ThreadId parent, ThreadId child) {
  (void)parent;
  if (!tm_forked_child) tm_thread_created(child);
}

static void tm_ll_exit(ThreadId tid) {
  tm_thread_exited(tid);
}

/* A forked child shares the parent's open streams: it must neither write
 * into them nor flush the parent's buffers a second time. It stops
 * recording (a limit documented in docs/memtrace.md). */
static void tm_atfork_child(ThreadId tid) {
  (void)tid;
  tm_forked_child = True;
  tm_active = False;
  tm_streams_drop_all();
}

static void tm_post_clo_init(void) {
  tm_active = clo_record_at_start;
  if (tm_clo_only != NULL && !tm_clo_call_paths) {
    VG_(fmsg)("tracefold-mem: --only needs the shadow stack: drop --call-paths=no\n");
    VG_(exit)(1);
  }
  /* VEX would otherwise chase unconditional calls into their callee within
   * one superblock, and the call would no longer end a block. */
  if (tm_clo_call_paths) VG_(clo_vex_control).guest_chase = False;
  if (tm_clo_raw_log != NULL) {
    /* %p and %q{VAR} as in --log-file: under mpirun, one directory per rank
     * (e.g. %q{OMPI_COMM_WORLD_RANK}). Relative names are taken from the
     * initial working directory, whatever the program does later. */
    tm_clo_raw_log = VG_(expand_file_name)("--raw-log", tm_clo_raw_log);
    struct vg_stat st;
    SysRes r = VG_(stat)(tm_clo_raw_log, &st);
    if (sr_isError(r) || !VKI_S_ISDIR(st.mode)) {
      VG_(fmsg)("tracefold-mem: --raw-log=%s is not an existing directory\n", tm_clo_raw_log);
      VG_(exit)(1);
    }
  }
  tm_stream_init();
  tm_ctx_init();
  tm_instr_init();
  VG_(atfork)(NULL, NULL, tm_atfork_child);
}

static void tm_fini(Int exitcode) {
  (void)exitcode;
  if (!tm_forked_child) tm_streams_finish();
}

static void tm_pre_clo_init(void) {
  VG_(details_name)("tracefold-mem");
  VG_(details_version)(NULL);
  VG_(details_description)("memory-reference recorder of tracefold");
  VG_(details_copyright_author)("Copyright (C) the tracefold authors");
  VG_(details_bug_reports_to)("the tracefold project");
  VG_(details_avg_translation_sizeB)(275);

  VG_(basic_tool_funcs)(tm_post_clo_init, tm_instrument, tm_fini);
  VG_(needs_command_line_options)(tm_process_cmd_line_option, tm_print_usage, tm_print_debug_usage);
  VG_(needs_client_requests)(tm_handle_client_request);
  VG_(track_start_client_code)(tm_start_client_code);
  VG_(track_pre_thread_ll_create)(tm_ll_create);
  VG_(track_pre_thread_ll_exit)(tm_ll_exit);
  tm_addr_init();
}

VG_DETERMINE_INTERFACE_VERSION(tm_pre_clo_init)
