// The C program of a parametric model (parametric.hpp): the grid from the
// rank count at start (or a refusal), then the nodes in their loops; every
// value is a small function of the execution counter whose branches are
// the grid's cells, written as predicates on the rank's coordinates.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "gen.hpp"
#include "parametric.hpp"

namespace tracefold::benchgen::param {

namespace {

std::string seq_body(const SymSeq& seq) {
  std::string out;
  for (std::size_t r = 0; r < seq.size(); ++r) {
    const SymRun& run = seq[r];
    const bool last = r + 1 == seq.size();
    const std::string n = std::to_string(run.pattern.size());
    if (last && seq.size() == 1 && run.pattern.size() == 1)
      return "return " + to_c(run.pattern[0]) + ";";
    std::string vals;
    for (const Expr& e : run.pattern) vals += (vals.empty() ? "" : ", ") + to_c(e);
    out += "{ const long p[] = {" + vals + "}; ";
    // The last run repeats: a later execution than the inputs had (a
    // longer run) reads the pattern on.
    if (last)
      out += "return p[k % " + n + "]; }";
    else
      out += "const long n = " + to_c(run.reps) + " * " + n + "; if (k < n) return p[k % " + n +
             "]; k -= n; } ";
  }
  return out;
}

struct Emitter {
  Emitter(const Model& model, const bench::Options& options) : m(model), opt(options) {}
  const Model& m;
  const bench::Options& opt;
  std::ostringstream decls, body;
  int depth = 1;
  int loop_vars = 0;
  std::vector<std::string> phases;
  int64_t far = 1;
  int64_t list_width = 1;
  std::set<std::string> made;  // value functions written

  std::string line() const { return std::string(static_cast<std::size_t>(depth) * 2, ' '); }
  [[noreturn]] void fail(std::size_t i, const std::string& what) const {
    throw bench::BenchError(m.nodes[i].label + ": " + what);
  }

  // Cells grouped by equal code, in order of their first cell.
  template <class F>
  std::vector<std::pair<std::vector<int>, std::string>> groups(const CellSeqs& cs, F code) {
    std::vector<std::pair<std::vector<int>, std::string>> out;
    for (std::size_t c = 0; c < cs.size(); ++c) {
      if (!cs[c]) continue;
      const std::string text = code(*cs[c]);
      auto it =
          std::find_if(out.begin(), out.end(), [&](const auto& g) { return g.second == text; });
      if (it == out.end())
        out.push_back({{static_cast<int>(c)}, text});
      else
        it->first.push_back(static_cast<int>(c));
    }
    return out;
  }

  std::string present_cells_predicate(const std::vector<int>& cells) const {
    // Cells no input showed never reach here (main refuses them), so they
    // may join any group: the shortest predicate wins.
    std::vector<int> with = cells;
    for (std::size_t c = 0; c < m.known_cells.size(); ++c)
      if (!m.known_cells[c]) with.push_back(static_cast<int>(c));
    const std::string a = cells_predicate(cells, m.dims), b = cells_predicate(with, m.dims);
    return b.size() < a.size() ? b : a;
  }

  // `static long NAME(long k)`: the value of execution k on this rank.
  std::string value_fn(const std::string& name, const CellSeqs& cs) {
    if (!made.insert(name).second) return name;
    const auto gs = groups(cs, seq_body);
    decls << "static long " << name << "(long k) {\n  (void)k;\n";
    const std::size_t present = static_cast<std::size_t>(
        std::count_if(cs.begin(), cs.end(), [](const auto& s) { return s.has_value(); }));
    const std::size_t known =
        static_cast<std::size_t>(std::count(m.known_cells.begin(), m.known_cells.end(), true));
    for (const auto& [cells, text] : gs) {
      if (gs.size() == 1 && present == known) {
        decls << "  " << text << "\n}\n";
        return name;
      }
      decls << "  if (" << present_cells_predicate(cells) << ") " << text << "\n";
    }
    decls << "  return TF_ABSENT;\n}\n";
    return name;
  }

  // `static const int *NAME(long k)`: list k (length at [-1]), for lists
  // whose lengths are constants and whose sequence is one repeated run.
  std::string list_fn(std::size_t i, const std::string& name, const CellSeqs& cs) {
    if (!made.insert(name).second) return name;
    auto code = [&](const SymSeq& seq) {
      if (seq.size() != 1)
        fail(i, "a list that changes between calls is not supported by --parametric");
      const auto& pat = seq[0].pattern;
      std::vector<std::string> cases;
      for (std::size_t at = 0; at < pat.size();) {
        if (pat[at].kind != Expr::Kind::kPoly || pat[at].terms.size() > 1 ||
            (pat[at].terms.size() == 1 && pat[at].terms[0].second != 0))
          fail(i, "a list whose length depends on the grid is not supported by --parametric");
        const int64_t len = pat[at].terms.empty() ? 0 : pat[at].terms[0].first.to_int64();
        if (at + 1 + static_cast<std::size_t>(len) > pat.size())
          fail(i, "a list runs past its pattern");
        list_width = std::max(list_width, len);
        std::string c = "b[0] = " + std::to_string(len) + ";";
        for (int64_t j = 0; j < len; ++j)
          c += " b[" + std::to_string(j + 1) + "] = (int)" +
               to_c(pat[at + 1 + static_cast<std::size_t>(j)]) + ";";
        cases.push_back(c);
        at += 1 + static_cast<std::size_t>(len);
      }
      std::string out = "switch (k % " + std::to_string(cases.size()) + ") {";
      for (std::size_t j = 0; j < cases.size(); ++j)
        out += " case " + std::to_string(j) + ": " + cases[j] + " return b + 1;";
      return out + " }";
    };
    const auto gs = groups(cs, code);
    decls << "static const int *" << name
          << "(long k) {\n  static int b[1 + LIST_WIDTH];\n  (void)k;\n";
    for (const auto& [cells, text] : gs)
      decls << "  if (" << present_cells_predicate(cells) << ") " << text << "\n";
    decls << "  b[0] = 0;\n  return b + 1;\n}\n";
    return name;
  }

  const CellSeqs* field(const PNode& n, const std::string& f) const {
    for (const auto& [name, cs] : n.fields)
      if (name == f) return &cs;
    return nullptr;
  }

  void call(std::size_t i, const std::string& k) {
    const PNode& n = m.nodes[i];
    auto emit = [&](const std::string& s) { body << line() << s << "\n"; };
    auto F = [&](const std::string& f, const std::string& wrap, const std::string& otherwise) {
      const CellSeqs* cs = field(n, f);
      if (!cs) return otherwise;
      return wrap + "(" + value_fn(n.name + "_" + f, *cs) + "(" + k + "))";
    };
    const std::string C = "MPI_COMM_WORLD";
    const std::string cnt = F("count", "(int)", "0"), dt = F("dtype", "dtype_of", "MPI_BYTE");
    const std::string rcnt = F("rcount", "(int)", cnt), rdt = F("rdtype", "dtype_of", dt);
    const std::string peer = F("peer", "val", "MPI_PROC_NULL"), tag = F("tag", "tag_of", "0");
    const std::string root = F("root", "(int)", "0"), op = F("redop", "op_of", "MPI_SUM");
    const std::string& o = n.op;
    const bool gathers =
        o == "MPI_Allgather" || o == "MPI_Alltoall" || o == "MPI_Gather" || o == "MPI_Scatter";
    auto buffers = [&] {
      const std::string sb = n.name + "_sbuf", rb = n.name + "_rbuf";
      decls << "static char *" << sb << ", *" << rb << ";\nstatic long " << sb << "_cap, " << rb
            << "_cap;\n";
      const std::string ds = F("dsize", "", "1"), rds = F("rdsize", "", ds);
      const std::string many = gathers ? " * size" : "";
      emit("char *sbuf = grow(&" + sb + ", &" + sb + "_cap, (long)" + cnt + " * " + ds + many +
           ");");
      emit("char *rbuf = grow(&" + rb + ", &" + rb + "_cap, (long)" + rcnt + " * " + rds + many +
           ");");
    };
    auto links = [&](const std::string& use) {
      const CellSeqs* cs = field(n, "links");
      if (!cs) fail(i, "a completion without request links");
      emit("{");
      ++depth;
      emit("const int *lk = " + list_fn(i, n.name + "_links", *cs) + "(" + k + ");");
      emit("const int nr = list_len(lk);");
      emit("MPI_Request r[LIST_WIDTH];");
      emit("take_requests(lk, nr, r);");
      emit(use);
      emit("give_requests(lk, nr, r);");
      --depth;
      emit("}");
    };
    if (o == "MPI_Init" || o == "MPI_Init_thread") return;  // main's first statement
    if (o == "MPI_Finalize") {
      emit("report_times();");
      emit("MPI_Finalize();");
      return;
    }
    emit("{");
    ++depth;
    if (o == "MPI_Send" || o == "MPI_Ssend" || o == "MPI_Rsend") {
      buffers();
      emit("(void)rbuf;");
      emit(o + "(sbuf, " + cnt + ", " + dt + ", " + peer + ", " + tag + ", " + C + ");");
    } else if (o == "MPI_Isend" || o == "MPI_Issend" || o == "MPI_Irsend") {
      buffers();
      emit("(void)rbuf;");
      emit(o + "(sbuf, " + cnt + ", " + dt + ", " + peer + ", " + tag + ", " + C +
           ", new_request());");
    } else if (o == "MPI_Recv" || o == "MPI_Irecv") {
      buffers();
      emit("(void)sbuf;");
      emit(o + "(rbuf, " + cnt + ", " + dt + ", " + peer + ", " + tag + ", " + C +
           (o == "MPI_Recv" ? ", MPI_STATUS_IGNORE);" : ", new_request());"));
    } else if (o == "MPI_Sendrecv") {
      buffers();
      emit(o + "(sbuf, " + cnt + ", " + dt + ", " + peer + ", " + tag + ", rbuf, " + rcnt + ", " +
           rdt + ", " + F("rpeer", "val", "MPI_PROC_NULL") + ", " + F("rtag", "tag_of", "0") +
           ", " + C + ", MPI_STATUS_IGNORE);");
    } else if (o == "MPI_Wait") {
      links("MPI_Wait(&r[0], MPI_STATUS_IGNORE);");
    } else if (o == "MPI_Waitall") {
      links("MPI_Waitall(nr, r, statuses_ignore);");
    } else if (o == "MPI_Barrier") {
      emit("MPI_Barrier(" + C + ");");
    } else if (o == "MPI_Bcast") {
      buffers();
      emit("(void)rbuf;");
      emit("MPI_Bcast(sbuf, " + cnt + ", " + dt + ", " + root + ", " + C + ");");
    } else if (o == "MPI_Reduce") {
      buffers();
      emit("MPI_Reduce(sbuf, rbuf, " + cnt + ", " + dt + ", " + op + ", " + root + ", " + C + ");");
    } else if (o == "MPI_Allreduce") {
      buffers();
      emit("MPI_Allreduce(sbuf, rbuf, " + cnt + ", " + dt + ", " + op + ", " + C + ");");
    } else if (o == "MPI_Allgather" || o == "MPI_Alltoall") {
      buffers();
      emit(o + "(sbuf, " + cnt + ", " + dt + ", rbuf, " + rcnt + ", " + rdt + ", " + C + ");");
    } else if (o == "MPI_Gather" || o == "MPI_Scatter") {
      buffers();
      emit(o + "(sbuf, " + cnt + ", " + dt + ", rbuf, " + rcnt + ", " + rdt + ", " + root + ", " +
           C + ");");
    } else {
      fail(i, o + " is not supported by --parametric yet");
    }
    --depth;
    emit("}");
  }

  std::size_t end_of(std::size_t h, std::size_t l) const {
    const PNode& n = m.nodes[h];
    return l < n.members.size() ? h + static_cast<std::size_t>(n.members[l]) - 1 : h;
  }

  void node(std::size_t h) {
    const PNode& n = m.nodes[h];
    body << line() << "/* " << n.comment << " */\n";
    const std::string reach = n.name + "_reach", counter = n.name + "_n";
    decls << "static long " << reach << ", " << counter << ";\n";
    body << line() << "if (" << value_fn(n.name + "_runs", n.count) << "(" << reach
         << "++) > 0) {\n";
    ++depth;
    if (!n.compute.empty() || !n.compute_after.empty()) {
      std::string e;
      for (const auto& [pred, c] : n.compute_after)
        e += "after == " + (pred == kStartPred ? "AFTER_START" : m.nodes[pred].after) + " ? " + c +
             " : ";
      e += n.compute.empty() ? "0" : n.compute;
      char scale[32];
      std::snprintf(scale, sizeof scale, "%.6g", opt.scale);
      body << line() << "spin_ns(" << (opt.scale == 1 ? e : "(" + e + ") * " + scale) << ");\n";
    }
    call(h, counter);
    if (!n.after.empty()) body << line() << "after = " << n.after << ";\n";
    body << line() << "++" << counter << ";\n";
    --depth;
    body << line() << "}\n";
  }

  void head(std::size_t h, std::size_t l) {
    const PNode& n = m.nodes[h];
    if (l >= n.members.size()) return node(h);
    if (end_of(h, l) >= m.nodes.size())
      throw bench::BenchError(n.label + ": loop past the last node");
    const std::string entered = n.name + "_loop" + std::to_string(l);
    decls << "static long " << entered << ";\n";
    const std::string trips = value_fn(n.name + "_trips" + std::to_string(l), n.iters[l]);
    const std::string var = "i" + std::to_string(++loop_vars);
    const bool phase = l == 0 && depth == 1;
    if (phase) {
      body << line() << "phase_start = now(); /* phase " << phases.size() << " */\n";
      phases.push_back(n.name);
    }
    body << line() << "const long " << var << "_end = " << trips << "(" << entered << "++);\n";
    body << line() << "for (long " << var << " = 0; " << var << " < " << var << "_end; ++" << var
         << ") {\n";
    ++depth;
    head(h, l + 1);
    range(end_of(h, l + 1) + 1, end_of(h, l));
    --depth;
    body << line() << "}\n";
    if (phase)
      body << line() << "phase_time[" << phases.size() - 1 << "] += now() - phase_start;\n";
  }

  void range(std::size_t a, std::size_t b) {
    for (std::size_t p = a; p <= b && p < m.nodes.size();) {
      head(p, 0);
      p = end_of(p, 0) + 1;
    }
  }

  std::string grid_setup() const {
    std::ostringstream s;
    const int d = m.dims;
    auto refuse = [&](const std::string& text, const std::string& args) {
      s << "      if (rank == 0) fprintf(stderr, \"bench: " << text << "\\n\"" << args
        << ");\n      MPI_Finalize();\n      return 1;\n";
    };
    // The user may name the grid (sizes slowest first, as MPI_Dims_create
    // and MPI_Cart_create take them), as in the seed; otherwise the inputs' rule.
    s << "  if (argc > 1) {\n    long ranks = 1;\n";
    s << "    if (argc != " << d + 1 << ") {\n";
    refuse("give the grid as " + std::to_string(d) +
               " sizes, slowest first, or nothing for the rule of the traces",
           "");
    s << "    }\n";
    for (int i = 0; i < d; ++i)
      s << "    S" << i + 1 << " = atol(argv[" << d - i << "]);\n    ranks *= S" << i + 1 << ";\n";
    s << "    if (";
    for (int i = 0; i < d; ++i) s << "S" << i + 1 << " < 2 || ";
    s << "ranks != size) {\n";
    refuse("the grid given holds %ld ranks (each side must be at least 2), run with %d",
           ", ranks, size");
    s << "    }\n  } else {\n";
    if (m.equal_sides) {
      static const char* const kWhat[] = {"at least 2 ranks", "a square number of ranks",
                                          "a cube number of ranks"};
      s << "    long side = 1;\n    while (";
      for (int i = 0; i < d; ++i) s << (i ? " * " : "") << "(side + 1)";
      s << " <= size) ++side;\n";
      for (int i = 0; i < d; ++i) s << "    S" << i + 1 << " = side;\n";
      s << "    if (side < 2 || ";
      for (int i = 0; i < d; ++i) s << (i ? " * " : "") << "side";
      s << " != size) {\n";
      refuse(std::string("needs ") + kWhat[d - 1] +
                 (d > 1 ? " (a " + std::to_string(d) + "-D grid of equal sides, at least 2 each)"
                        : "") +
                 ", got %d, or a grid given as arguments",
             ", size");
      s << "    }\n";
    } else {
      s << "    int dims[" << d << "] = {0};\n    PMPI_Dims_create(size, " << d << ", dims);\n";
      for (int i = 0; i < d; ++i) s << "    S" << i + 1 << " = dims[" << d - 1 - i << "];\n";
      s << "    if (";
      for (int i = 0; i < d; ++i) s << (i ? " || " : "") << "S" << i + 1 << " < 2";
      s << ") {\n";
      refuse("needs a rank count that MPI_Dims_create splits into a " + std::to_string(d) +
                 "-D grid with every side at least 2, got %d, or a grid given as arguments",
             ", size");
      s << "    }\n";
    }
    s << "  }\n";
    s << "  x1 = rank % S1;\n  x2 = rank / S1 % S2;\n  x3 = rank / (S1 * S2) % S3;\n";
    std::vector<int> unknown;
    for (std::size_t c = 0; c < m.known_cells.size(); ++c)
      if (!m.known_cells[c]) unknown.push_back(static_cast<int>(c));
    if (!unknown.empty())
      s << "  if (" << cells_predicate(unknown, d)
        << ") {\n    fprintf(stderr, \"bench: rank %d lies in a part of the grid that no input "
           "trace "
           "had\\n\", rank);\n    PMPI_Abort(MPI_COMM_WORLD, 1);\n  }\n";
    return s.str();
  }

  std::string program() {
    if (!m.nodes.empty()) range(0, m.nodes.size() - 1);
    for (const PNode& n : m.nodes) far = std::max(far, n.max_link);
    int64_t ring = 1;
    while (ring <= far) ring *= 2;
    std::ostringstream out;
    out << "/* Generated by tracefold bench --parametric from traces of the same program at\n";
    for (const auto& in : m.inputs) out << "   " << in << "\n";
    out << "   It runs at any rank count its " << m.dims << "-D grid admits ("
        << (m.equal_sides ? "equal sides" : "MPI_Dims_create's sizes")
        << "); ranks, peers, counts and\n   times are functions of the grid sizes S1 (fastest) .. S"
        << m.dims << ". Build: mpicc -std=c11 -O2 bench.c -o bench */\n";
    out << prelude() << named_tables(false);
    out << "\n#define RING " << ring << "\n#define LIST_WIDTH " << list_width << R"(
static MPI_Request ring[RING];
static long nreq;
HELPER MPI_Request *new_request(void) {
  MPI_Request *s = &ring[++nreq % RING];
  *s = MPI_REQUEST_NULL;
  return s;
}
/* A completion names its requests by how many request-making calls back
   they were made. */
HELPER MPI_Request *slot(long d) {
  return d > 0 && d <= nreq && d <= RING ? &ring[(nreq - d + 1) % RING] : NULL;
}
HELPER void take_requests(const int *lk, int n, MPI_Request *r) {
  for (int j = 0; j < n; ++j) r[j] = slot(lk[j]) ? *slot(lk[j]) : MPI_REQUEST_NULL;
}
HELPER void give_requests(const int *lk, int n, const MPI_Request *r) {
  for (int j = 0; j < n; ++j)
    if (slot(lk[j])) *slot(lk[j]) = r[j];
}
HELPER char *grow(char **buf, long *cap, long bytes) {
  if (bytes > *cap) {
    free(*buf);
    *buf = alloc_buffer(bytes);
    *cap = bytes;
  }
  return *buf;
}

/* The grid: sizes, fastest first, and this rank's coordinates. */
static long S1 = 1, S2 = 1, S3 = 1, x1, x2, x3;
HELPER int peer_at(long d1, long d2, long d3) {
  const long c1 = ((x1 + d1) % S1 + S1) % S1, c2 = ((x2 + d2) % S2 + S2) % S2,
             c3 = ((x3 + d3) % S3 + S3) % S3;
  return (int)(c1 + S1 * (c2 + S2 * c3));
}
HELPER int peer_rel(long offset) {
  return (int)(((rank + offset) % size + size) % size);
}
)";
    static const char* const kGrid[] = {"%ld", "%ldx%ld", "%ldx%ldx%ld"};
    static const char* const kSizes[] = {"S1,", "S2, S1,", "S3, S2, S1,"};
    out << "\n#define GRID \"" << kGrid[m.dims - 1] << "\"\n#define GRID_SIZES "
        << kSizes[m.dims - 1];
    out << "\n#define PHASES " << phases.size() + 1
        << "\nstatic const char *const phase_names[PHASES] = {";
    for (const auto& p : phases) out << "\"" << p << "\", ";
    out << R"("" };
static double phase_time[PHASES], phase_start, start_time;
static void report_times(void) {
  double mine[PHASES + 1], most[PHASES + 1];
  for (int k = 0; k + 1 < PHASES; ++k) mine[k] = phase_time[k];
  mine[PHASES] = now() - start_time;
  PMPI_Reduce(mine, most, PHASES + 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  printf("bench: %d ranks (grid " GRID "), wall time %.6f s\n", size, GRID_SIZES most[PHASES]);
  for (int k = 0; k + 1 < PHASES; ++k) printf("bench: phase %d (%s) %.6f s\n", k, phase_names[k], most[k]);
  fflush(stdout);
}

/* Values per call, by the rank's part of the grid. */
)" << decls.str();
    if (!m.after_names.empty()) {
      out << "\n/* The call each rank made last (compute times depend on it). */\nenum after_call "
             "{ ";
      for (const auto& a : m.after_names) out << a << ", ";
      out << "};\nstatic enum after_call after = AFTER_START;\n";
    }
    const bool thread = !m.nodes.empty() && m.nodes[0].op == "MPI_Init_thread";
    out << "\nint main(int argc, char **argv) {\n"
        << (thread ? "  int provided;\n  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, "
                     "&provided);\n"
                   : "  MPI_Init(&argc, &argv);\n");
    // The prelude's statuses_ignore (MPICH's (MPI_Status *)1 and GCC).
    out << "  statuses_ignore = MPI_STATUSES_IGNORE;\n";
    out << "  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);\n  PMPI_Comm_size(MPI_COMM_WORLD, &size);\n";
    out << grid_setup();
    out << "  srand48(" << opt.seed
        << " + (long)rank);\n  calibrate();\n  PMPI_Barrier(MPI_COMM_WORLD);\n  start_time = "
           "now();\n\n";
    out << body.str() << "  return 0;\n}\n";
    return out.str();
  }
};

}  // namespace

std::string emit_c(const Model& model, const bench::Options& options) {
  if (options.compute == bench::ComputeMode::kSample)
    throw bench::BenchError(
        "--parametric writes each call's modelled mean time; --compute sample is not supported "
        "with it");
  Emitter e(model, options);
  return e.program();
}

}  // namespace tracefold::benchgen::param
