#!/usr/bin/env python3
"""Generates tracefold's MPI wrappers from mpi_functions.txt.

For every listed function it emits:
  * a C wrapper `MPI_Xxx` that times the call, calls `PMPI_Xxx`, and hands the
    arguments to the recorder according to their roles;
  * unless marked `nofortran`, Fortran wrappers under every name mangling
    (mpi_xxx_, mpi_xxx__, mpi_xxx, MPI_XXX) that convert handles with the f2c
    functions, call the MPI library's own Fortran entry `pmpi_xxx_` (so
    MPI_IN_PLACE, MPI_BOTTOM and MPI_STATUS_IGNORE keep their Fortran meaning)
    and record the same way;
  * for the same functions, `use mpi_f08` wrappers under the names the MPI
    libraries given on the command line export (mpi_xxx_f08_, mpi_xxx_f08ts_),
    forwarding to the library's entry found with dlsym(RTLD_NEXT).

Usage: gen_wrappers.py LIST OUTPUT.cpp [MPI_LIBRARY...]
"""
import re
import subprocess
import sys


class Param:
    def __init__(self, text):
        text = text.strip()
        self.text = text
        m = re.match(r"^(.*?)([A-Za-z_][A-Za-z0-9_]*)\s*(\[\])?$", text)
        if not m:
            raise ValueError("cannot parse parameter: " + text)
        self.ctype = m.group(1).strip()
        self.name = m.group(2)
        self.array = bool(m.group(3))

    @property
    def base(self):
        return self.ctype.replace("const", "").replace("*", "").strip()

    @property
    def pointer_depth(self):
        return self.ctype.count("*") + (1 if self.array else 0)


class Function:
    def __init__(self, line, lineno):
        proto, _, roles = line.partition("::")
        m = re.match(r"^\s*int\s+(MPI_[A-Za-z0-9_]+)\s*\((.*)\)\s*$", proto)
        if not m:
            raise ValueError("line %d: cannot parse prototype" % lineno)
        self.name = m.group(1)
        args = m.group(2).strip()
        self.variadic = "..." in args
        self.params = []
        if args and args != "void":
            for a in args.split(","):
                if a.strip() == "...":
                    continue
                self.params.append(Param(a))
        self.roles = {}
        self.flags = set()
        for tok in roles.split():
            if "=" in tok:
                k, v = tok.split("=", 1)
                self.roles[k] = v
            else:
                self.flags.add(tok)
        names = {p.name for p in self.params}
        for k, v in self.roles.items():
            if k == "special":
                continue
            for part in v.split(","):
                if not part.isdigit() and part not in names:
                    raise ValueError("line %d: role %s names unknown parameter %s" % (lineno, k, part))

    @property
    def special(self):
        return self.roles.get("special")

    def cparams(self):
        return ", ".join(p.text for p in self.params) + (", ..." if self.variadic else "") or "void"

    def cargs(self):
        return ", ".join(p.name for p in self.params)


def record_code(fn, pre, fortran=False):
    """Statements that describe the call to the recorder (`c` is the Call)."""
    r = fn.roles
    out = []
    if pre:
        if "reqs_in" in r:
            n, arr = r["reqs_in"].split(",")
            out.append("c.requests_in(%s, %s);" % (n, arr))
        if "req_in" in r:
            out.append("c.requests_in(1, %s);" % r["req_in"])
        if "start" in r:
            n, arr = r["start"].split(",")
            out.append("c.requests_in(%s, %s);" % (n, arr))
        if "statuses" in r:
            # After requests_in: the substitute for STATUSES_IGNORE is only
            # needed when a wildcard receive is among the requests.
            n, arr = r["statuses"].split(",")
            if fortran:
                out.append("f_%s = c.fstatuses_in(%s, f_%s);" % (arr, n, arr))
            else:
                out.append("%s = c.statuses_in(%s, %s);" % (arr, n, arr))
        if "freecomm" in r:
            out.append("c.comm(*%s);" % r["freecomm"])
        if "freetype" in r:
            # Before the call: MPI_Type_free sets the handle to NULL.
            out.append("c.type_freed(*%s);" % r["freetype"])
        return out
    # Mostly in field id order (peer, src/rpeer, tag, count, dtype, dsize,
    # rcount, rdtype, rdsize, comm, ...): Event::set then appends instead of
    # inserting. The event's fields are sorted either way. comm comes before
    # counts/rcounts (they need the communicator's size), peer/src/tag before
    # status and req_out (wildcards).
    if "peer" in r:
        out.append("c.peer(R::kPeer, %s);" % r["peer"])
    if "src" in r:
        out.append("c.peer(R::kPeer%s, %s);" % ("Recv" if "peer" in r else "", r["src"]))
    if "tag" in r:
        out.append("c.tag(R::kTag, %s);" % r["tag"])
    if "count" in r:
        out.append("c.scalar(R::kCount, %s);" % r["count"])
    if "dtype" in r:
        out.append("c.datatype(R::kDtype, R::kDsize, %s);" % r["dtype"])
    if "usetype" in r:
        out.append("c.datatype(R::kDtype, R::kDsize, *%s);" % r["usetype"])
    if "rcount" in r:
        out.append("c.scalar(R::kRcount, %s);" % r["rcount"])
    if "rdtype" in r:
        out.append("c.datatype(R::kRdtype, R::kRdsize, %s);" % r["rdtype"])
    if "comm" in r:
        out.append("c.comm(%s);" % r["comm"])
    if "counts" in r:
        out.append("c.counts(R::kCounts, %s);" % r["counts"])
    if "rcounts" in r:
        out.append("c.counts(R::kRcounts, %s);" % r["rcounts"])
    # Neighbourhood v/w collectives: one count per destination (sources
    # for the receive side), in the topology's neighbour order.
    if "ncounts" in r:
        out.append("c.neighbour_counts(R::kCounts, %s, false);" % r["ncounts"])
    if "nrcounts" in r:
        out.append("c.neighbour_counts(R::kRcounts, %s, true);" % r["nrcounts"])
    if "target" in r:
        out.append("c.scalar(R::kTarget, %s);" % r["target"])
    if "rtag" in r:
        out.append("c.tag(R::kRtag, %s);" % r["rtag"])
    if "root" in r:
        out.append("c.scalar(R::kRoot, %s);" % r["root"])
    if "redop" in r:
        out.append("c.redop(%s);" % r["redop"])
    if "pcomm" in r:
        out.append("c.comm_field(R::kPcomm, %s);" % r["pcomm"])
    for k, field in (("color", "kColor"), ("key", "kKey"), ("ndims", "kNdims"),
                     ("rleader", "kRleader"), ("high", "kHigh"), ("blocklen", "kBlocklen"),
                     ("precision", "kPrecision"), ("range", "kRange")):
        if k in r:
            out.append("c.scalar(R::%s, %s);" % (field, r[k]))
    if "flag" in r:
        out.append("c.scalar(R::kFlag, *%s);" % r["flag"])
    if "index" in r:
        if fortran:  # Fortran indices are 1-based: record the C index
            out.append("c.scalar(R::kIndex, *%s == MPI_UNDEFINED ? MPI_UNDEFINED : *%s - 1);"
                       % (r["index"], r["index"]))
        else:
            out.append("c.scalar(R::kIndex, *%s);" % r["index"])
    if "outcount" in r:
        out.append("c.scalar(R::kOutcount, *%s);" % r["outcount"])
    if "status" in r:
        out.append("c.status(%s);" % r["status"])
    if "statuses" in r:
        # After flag/outcount: Testall's flag says whether anything completed.
        n, arr = r["statuses"].split(",")
        outcount = "*%s" % r["outcount"] if "outcount" in r else "-1"
        indices = r.get("indices", "nullptr")
        if fortran:  # Fortran statuses, 1-based indices; ierr was checked
            out.append("c.fstatuses(%s, f_%s, %s, %s, 1);" % (n, arr, outcount, indices))
        else:
            out.append("if (rc == MPI_SUCCESS) c.statuses(%s, %s, %s, %s, 0);"
                       % (n, arr, outcount, indices))
    if "indices" in r:
        if fortran:
            out.append("c.indices(*%s, %s, 1);" % (r["outcount"], r["indices"]))
        else:
            out.append("if (rc == MPI_SUCCESS) c.indices(*%s, %s, 0);" % (r["outcount"], r["indices"]))
    # Integer lists passed as (length, array): the role, the recorder method
    # and the field it fills.
    for role, method, field in (("blocklens", "int_list", "kBlocklens"),
                                ("dims", "int_list", "kDims"),
                                ("periods", "flag_list", "kPeriods"),
                                ("gindex", "int_list", "kGindex")):
        if role in r:
            n, arr = r[role].split(",")
            out.append("c.%s(R::%s, %s, %s);" % (method, field, n, arr))
    if "gedges" in r:
        # index[nnodes - 1] edges in all (MPI_Graph_create's layout).
        n, index, arr = r["gedges"].split(",")
        out.append("c.int_list(R::kGedges, %s > 0 ? %s[%s - 1] : 0, %s);" % (n, index, n, arr))
    for role, field in (("gsrcs", "kGsrcs"), ("gdsts", "kGdsts")):
        if role in r:
            n, arr = r[role].split(",")
            out.append("c.relative_list(R::%s, %s, %s, %s);" % (field, r["comm"], n, arr))
    if "distgraph" in r:
        # MPI_Dist_graph_create: each rank passes some edges of the graph,
        # so its own neighbours are asked of the new communicator.
        out.append("%sc.dist_graph_neighbours(%s, *%s);"
                   % ("" if fortran else "if (rc == MPI_SUCCESS) ", r["comm"], r["distgraph"]))
    if "types" in r:
        n, arr = r["types"].split(",")
        out.append("c.datatypes(%s, %s);" % (n, arr))
    if "contents" in r:
        t, n, arr = r["contents"].split(",")
        out.append("%sc.contents(%s, %s, %s);" % ("" if fortran else "if (rc == MPI_SUCCESS) ", t, n, arr))
    if "newtype" in r:
        out.append("%sc.newtype(*%s);" % ("" if fortran else "if (rc == MPI_SUCCESS) ", r["newtype"]))
    if "req_out" in r:
        out.append("c.request_out(%s);" % r["req_out"])
    if "newcomm" in r:
        out.append("c.newcomm(%s, *%s);" % (r.get("comm", "MPI_COMM_WORLD"), r["newcomm"]))
    if "start" in r:
        n, arr = r["start"].split(",")
        out.append("c.requests_started(%s, %s);" % (n, arr))
    if "reqs_in" in r:
        n, arr = r["reqs_in"].split(",")
        out.append("c.requests_done(%s, %s);" % (n, arr))
    if "req_in" in r:
        out.append("c.requests_done(1, %s);" % r["req_in"])
    return out


# The op id is looked up once per wrapper (a string lookup per call is not
# cheap). Recording before the call releases the recorder's lock again: the
# call may block, and other threads must be able to record meanwhile.
C_TEMPLATE = """
extern "C" int {name}({cparams}) {{
  static const tracefold::OpId tf_op = R::op("{name}");
  R::Call c(tf_op);
{pre}  const int rc = P{name}({cargs});
  if (c.active()) {{
{post}  }}
  return rc;
}}
"""

# Polls (flag `poll`): the fast path is the exported wrapper itself
# (poll_fastpath.hpp, inline). When the thread's last recorded poll armed it
# for this wrapper (`key`, numbered from 1), these arguments, this frame and
# this call path, the library is called between two clock reads, and a poll
# that again found nothing is only counted. Everything else is out of line,
# reached by a tail call, so that the fast path saves no registers for it:
# tf_slow_ records the call as any wrapper does; tf_found_ records an armed
# poll that found something, with the arguments as they were before the
# call. The tail call leaves the out-of-line part the wrapper's frame
# (__builtin_frame_address keeps a frame pointer in both) and return
# address, so the call site is found as if the wrapper had recorded it;
# Call::caller notices when a compiler did not make the tail call.
POLL_TEMPLATE = """
static tracefold::OpId tf_op_{name}() {{
  static const tracefold::OpId op = R::op("{name}");
  return op;
}}
[[gnu::noinline, gnu::cold]] static int tf_slow_{name}({cparams}) {{
  R::poll_entry(R::tl_poll, {key}, reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  R::Call c(tf_op_{name}());
  c.caller(__builtin_return_address(0));
{pre}  const int rc = P{name}({cargs});
  if (c.active()) {{
{post}    {result}
  }}
  return rc;
}}
[[gnu::noinline, gnu::cold]] static int tf_found_{name}({cparams}) {{
  R::PollMemo& tf_m = R::tl_poll;
  const int rc = tf_m.found_rc;
  R::poll_not_counted(tf_m, {nothing}, {index});
  R::poll_entry(tf_m, {key}, reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  R::Call c(tf_op_{name}(), tf_m.found_t0);
  c.caller(__builtin_return_address(0));
  if (c.active()) {{
{rebuilt}{post}    {result}
  }}
  return rc;
}}
extern "C" int {name}({cparams}) {{
  R::PollMemo& tf_m = R::tl_poll;
  const auto tf_frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (!{armed}) return tf_slow_{name}({cargs});
{stash}  tf_m.found_t0 = R::now_ns();
  const int rc = tf_m.found_rc = P{name}({fast_args});
  // Found nothing (so rc is MPI_SUCCESS) and counted.
  if ({fast_nothing}{fast_same_index} && R::poll_counted(tf_m)) [[likely]]
    return MPI_SUCCESS;
  return tf_found_{name}({fast_args});
}}
"""


def poll_parts(fn):
    """The pieces of POLL_TEMPLATE for a poll: its key, its outcome, its pre-call records."""
    r = fn.roles
    if "req_in" in r:
        n, arr = "1", r["req_in"]
    elif "reqs_in" in r:
        n, arr = r["reqs_in"].split(",")
    else:
        n = arr = None
    found = "*%s == 0" % (r["flag"] if "flag" in r else r["outcount"])
    nothing = "rc == MPI_SUCCESS && %s" % found
    index = "*%s" % r["index"] if "index" in r else "0"
    if arr is None:  # a probe: source, tag and communicator
        key = (r["src"], r["tag"], r["comm"])
        armed = "R::probe_armed(tf_m, {key}, %s, %s, %s, tf_frame)" % key
        result = "c.probe_result(%s, %s, %s);" % (nothing, key[0], key[1])
        rebuilt = ""
        from_memo = {key[0]: "tf_m.source", key[1]: "tf_m.tag", key[2]: "tf_m.comm"}
    else:
        armed = "R::poll_armed<%s>(tf_m, {key}, %s, %s, tf_frame)" % (
            "true" if "statuses" in r else "false", n, arr)
        result = "c.poll_result(%s, %s, %s);" % (nothing, index,
                                                "true" if "statuses" in r else "false")
        # The library may have nulled completed handles: the links come from
        # the handles as they were, which the armed poll remembered.
        rebuilt = "      c.requests_in(%s, R::poll_requests());\n" % n
        from_memo = {n: "tf_m.n"} if not n.isdigit() else {}
    # On the fast path, after the armed check: the arguments the memo holds
    # are read back from it, the pointers are kept in it across the clock
    # read (PollMemo::arg), so that the wrapper saves few registers.
    stash, fast = "", {}
    for p in fn.params:
        if p.name in from_memo:
            fast[p.name] = from_memo[p.name]
            continue
        i = len([v for v in fast.values() if v.startswith("static_cast")])
        stash += "  tf_m.arg[%d] = const_cast<void*>(static_cast<const void*>(%s));\n" % (i, p.name)
        ptype = p.ctype + ("*" if p.array else "")
        fast[p.name] = "static_cast<%s>(tf_m.arg[%d])" % (ptype, i)
    def on_fast(expr):
        return re.sub(r"\b[A-Za-z_][A-Za-z0-9_]*\b", lambda m: fast.get(m.group(0), m.group(0)), expr)
    return dict(armed=armed, nothing=nothing, index=index, result=result, rebuilt=rebuilt,
                stash=stash, fast_args=", ".join(fast[p.name] for p in fn.params),
                fast_nothing=on_fast(nothing),
                fast_same_index=(" && %s == tf_m.index" % on_fast(index)) if "index" in r else "")


# Fortran: every argument is passed by reference; handles and ints are MPI_Fint.
HANDLE_F2C = {
    "MPI_Comm": "MPI_Comm_f2c",
    "MPI_Datatype": "MPI_Type_f2c",
    "MPI_Op": "MPI_Op_f2c",
    "MPI_Group": "MPI_Group_f2c",
    "MPI_Info": "MPI_Info_f2c",
    "MPI_Win": "MPI_Win_f2c",
    "MPI_File": "MPI_File_f2c",
    "MPI_Message": "MPI_Message_f2c",
    "MPI_Request": "MPI_Request_f2c",
}


def used_params(fn):
    used = set()
    for k, v in fn.roles.items():
        if k == "special":
            continue
        used.update(x for x in v.split(",") if not x.isdigit())
    return used


def fortran_wrapper(fn, f08_symbols):
    """Fortran entry points, or None if an argument type has no Fortran form here."""
    used = used_params(fn)
    fargs, conv, pre_conv, call_args = [], [], [], []
    for role in ("reqs_in", "start"):
        if role in fn.roles:
            n = fn.roles[role].split(",")[0]
            if not n.isdigit() and n in used:
                pre_conv.append("const int %s = static_cast<int>(*f_%s);" % (n, n))
                used.discard(n)
    for p in fn.params:
        call_args.append("f_" + p.name)
        if p.base == "void":
            fargs.append("void* f_" + p.name)
            continue
        if p.base == "char":
            return None
        fargs.append("MPI_Fint* f_" + p.name)
        if p.name not in used:
            continue
        if "statuses" in fn.roles and fn.roles["statuses"].endswith("," + p.name):
            continue  # read by Call::fstatuses in its Fortran layout
        b = p.base
        handle_array = [fn.roles[k].split(",")[-2] for k in ("types", "contents")
                        if k in fn.roles and fn.roles[k].endswith("," + p.name)]
        if b == "MPI_Datatype" and handle_array:
            # An array of handles: every one converted, not just the first.
            conv.append("std::vector<MPI_Datatype> v_%s(static_cast<std::size_t>(*f_%s));"
                        % (p.name, handle_array[0]))
            conv.append("for (std::size_t i = 0; i < v_%s.size(); ++i) v_%s[i] = MPI_Type_f2c(f_%s[i]);"
                        % (p.name, p.name, p.name))
            conv.append("const MPI_Datatype* %s = v_%s.data();" % (p.name, p.name))
            continue
        if b == "MPI_Status":
            conv.append("MPI_Status s_%s; const MPI_Status* %s = R::status_f2c(f_%s, &s_%s);"
                        % (p.name, p.name, p.name, p.name))
        elif b == "MPI_Request":
            n = "1"
            for role in ("reqs_in", "start"):
                if role in fn.roles and fn.roles[role].endswith("," + p.name):
                    n = fn.roles[role].split(",")[0]
            count = "1" if n == "1" else "*f_" + n
            pre_conv.append("std::vector<MPI_Request> v_%s(static_cast<std::size_t>(%s));"
                            % (p.name, count))
            pre_conv.append("for (std::size_t i = 0; i < v_%s.size(); ++i) v_%s[i] = MPI_Request_f2c(f_%s[i]);"
                            % (p.name, p.name, p.name))
            pre_conv.append("MPI_Request* %s = v_%s.data(); (void)%s;" % (p.name, p.name, p.name))
        elif b in HANDLE_F2C and p.pointer_depth >= 1:
            freed = p.name in (fn.roles.get("freecomm"), fn.roles.get("freetype"))
            (pre_conv if freed else conv).append("%s v_%s = %s(*f_%s); %s* %s = &v_%s;"
                        % (b, p.name, HANDLE_F2C[b], p.name, b, p.name, p.name))
        elif b in HANDLE_F2C:
            conv.append("const %s %s = %s(*f_%s);" % (b, p.name, HANDLE_F2C[b], p.name))
        elif b == "int" and p.pointer_depth >= 1:
            conv.append("const int* %s = reinterpret_cast<const int*>(f_%s);" % (p.name, p.name))
        elif b in ("int", "MPI_Aint"):
            conv.append("const %s %s = static_cast<%s>(*f_%s);" % (b, p.name, b, p.name))
        else:
            return None
    fargs.append("MPI_Fint* ierr")
    call_args.append("ierr")
    pre_stmts = record_code(fn, pre=True, fortran=True)
    post_stmts = record_code(fn, pre=False, fortran=True)
    lower = fn.name.lower()
    # The body takes the library entry to forward to, so the mpif.h/use mpi
    # names and the mpi_f08 names share it.
    body = ["using tf_fe_%s = void (*)(%s);" % (fn.name, ", ".join(fargs)),
            "static void tf_f_%s(tf_fe_%s tf_fwd, %s) {" % (fn.name, fn.name, ", ".join(fargs)),
            "  static const tracefold::OpId tf_op = R::op(\"%s\");" % fn.name,
            "  R::Call c(tf_op);"]
    if pre_stmts:
        body.append("  if (c.active()) {")
        body += ["    " + x for x in pre_conv + pre_stmts]
        body.append("    c.release();")
        body.append("  }")
    body.append("  tf_fwd(%s);" % ", ".join(call_args))
    body.append("  if (c.active() && *ierr == MPI_SUCCESS) {")
    body += ["    " + x for x in pre_conv + conv + post_stmts]
    body.append("  }")
    body.append("}")
    out = ["extern \"C\" void p%s_(%s);" % (lower, ", ".join(fargs)), "\n".join(body)]
    plain = ", ".join(a.split()[-1] for a in fargs)
    for mangled in (lower + "_", lower + "__", lower, fn.name.upper()):
        out.append("extern \"C\" void %s(%s) { tf_f_%s(p%s_, %s); }"
                   % (mangled, ", ".join(fargs), fn.name, lower, plain))
    # mpi_f08: the handles are derived types around one INTEGER and the status
    # is laid out like the INTEGER array, so the same body serves. ierror is
    # optional there (a null pointer when absent) but the body reads it after
    # the call: hand it a local instead. The _f08ts_ forms take descriptors
    # for choice buffers, which are only passed through.
    plain08 = ", ".join(a.split()[-1] for a in fargs[:-1])
    for suffix in ("_f08_", "_f08ts_"):
        sym = lower + suffix
        if sym not in f08_symbols:
            continue
        # Only the _f08_ form has the same ABI as the mpif.h entry; a missing
        # _f08ts_ entry stops the program instead of passing descriptors on.
        fallback = ("reinterpret_cast<R::FortranEntry>(p%s_)" % lower) if suffix == "_f08_" else "nullptr"
        out.append("extern \"C\" void %s(%s) {" % (sym, ", ".join(fargs)))
        out.append("  static const auto tf_fwd = reinterpret_cast<tf_fe_%s>(R::f08_entry(\"%s\", %s));"
                   % (fn.name, sym[len("mpi_"):], fallback))
        out.append("  MPI_Fint tf_ierr = MPI_SUCCESS;")
        out.append("  tf_f_%s(tf_fwd, %s, ierr != nullptr ? ierr : &tf_ierr);" % (fn.name, plain08))
        out.append("}")
    return "\n".join(out) + "\n"


def library_symbols(paths):
    """Dynamic symbols the MPI libraries define (empty when nm cannot tell)."""
    syms = set()
    for path in paths:
        try:
            res = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                                 text=True, check=False)
        except OSError:
            continue
        for line in res.stdout.splitlines():
            parts = line.split()
            if len(parts) >= 3:
                syms.add(parts[2])
    return syms


def main():
    src, dst = sys.argv[1], sys.argv[2]
    # mpi_f08 wrappers exist only under the names the MPI library exports:
    # they differ between implementations (Open MPI: mpi_send_f08_, MPICH:
    # mpi_send_f08ts_), and a name the library lacks is never called.
    f08_symbols = {s for s in library_symbols(sys.argv[3:]) if s.endswith(("_f08_", "_f08ts_"))}
    fns = []
    polls = 0
    with open(src) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fns.append(Function(line, lineno))
    out = ["// Generated by gen_wrappers.py from mpi_functions.txt. Do not edit.",
           "#include <mpi.h>", "#include <vector>", "#include \"recorder.hpp\"",
           "#include \"poll_fastpath.hpp\"",
           "namespace R = tracefold::record;", ""]
    for fn in fns:
        if fn.special:
            continue  # hand-written in recorder.cpp
        pre_stmts = record_code(fn, pre=True)
        pre = ""
        if pre_stmts:
            pre = "  if (c.active()) {\n" + "".join("    %s\n" % s for s in pre_stmts) + \
                  "    c.release();\n  }\n"
        post_stmts = record_code(fn, pre=False)
        post = "".join("    %s\n" % s for s in post_stmts)
        if "poll" in fn.flags:
            polls += 1
            parts = poll_parts(fn)
            parts["armed"] = parts["armed"].replace("{key}", str(polls))
            out.append(POLL_TEMPLATE.format(
                name=fn.name, cparams=fn.cparams(), cargs=fn.cargs(), pre=pre, post=post,
                key=polls, **parts))
            continue
        out.append(C_TEMPLATE.format(name=fn.name, cparams=fn.cparams(), cargs=fn.cargs(),
                                     pre=pre, post=post))
    out.append("\n// ---------------------------------------------------------------- Fortran\n")
    for fn in fns:
        if fn.special or "nofortran" in fn.flags:
            continue
        w = fortran_wrapper(fn, f08_symbols)
        if w:
            out.append(w)
    with open(dst, "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
