// From the folded node list to main's statements (gen.hpp): the trace's
// loops become `for` loops, nodes some ranks skip are guarded by a rank
// predicate, and ranks whose loops differ get their own branch.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <tuple>

#include "compute_time.hpp"
#include "gen.hpp"
#include "tracefold/trace_query.hpp"

namespace tracefold::benchgen {

namespace {

// A loop headed by `head` at `level` ending at node `end` (inclusive), as
// one rank sees it.
using LoopSpan = std::tuple<std::size_t, std::size_t, std::size_t>;

// The walker of a rank group's table: a number >= 0 runs that node; -1,
// loop, phase, length opens a loop of loop_trips(loop) iterations over the
// next `length` entries (timed as `phase` when >= 0); -2 closes it.
std::string walk_c(int deepest, const std::string& suffix) {
  const std::string d = std::to_string(std::max(deepest, 1));
  return "static void walk" + suffix +
         "(const int *w, long n) {\n"
         "  long from[" +
         d + "] = {0}, left[" + d +
         "] = {0};\n"
         "  int timed[" +
         d +
         "] = {0}, top = -1;\n"
         "  for (long pc = 0; pc < n;) {\n"
         "    if (w[pc] >= 0) {\n"
         "      run_node" +
         suffix +
         "(w[pc++]);\n"
         "    } else if (w[pc] == -1) {\n"
         "      if (w[pc + 2] >= 0) phase_start = now();\n"
         "      const long trips = loop_trips" +
         suffix +
         "(w[pc + 1]);\n"
         "      if (trips > 0) {\n"
         "        ++top;\n"
         "        from[top] = pc + 4;\n"
         "        left[top] = trips;\n"
         "        timed[top] = w[pc + 2];\n"
         "        pc += 4;\n"
         "      } else {\n"
         "        if (w[pc + 2] >= 0) phase_time[w[pc + 2]] += now() - phase_start;\n"
         "        pc += 5 + w[pc + 3];\n"
         "      }\n"
         "    } else if (--left[top] > 0) {\n"
         "      pc = from[top];\n"
         "    } else {\n"
         "      if (timed[top] >= 0) phase_time[timed[top]] += now() - phase_start;\n"
         "      --top;\n"
         "      ++pc;\n"
         "    }\n"
         "  }\n"
         "}\n";
}

}  // namespace

Gen::Gen(const Trace& trace, const bench::Options& options)
    : t(trace),
      opt(options),
      peer(FieldTable::peer()),
      rpeer(scalar_field("rpeer")),
      tag(scalar_field("tag")),
      rtag(scalar_field("rtag")),
      count(scalar_field("count")),
      rcount(scalar_field("rcount")),
      dtype(scalar_field("dtype")),
      rdtype(scalar_field("rdtype")),
      dsize(scalar_field("dsize")),
      rdsize(scalar_field("rdsize")),
      root(scalar_field("root")),
      redop(scalar_field("redop")),
      comm(FieldTable::comm()),
      newcomm(scalar_field("newcomm")),
      freecomm(scalar_field("freecomm")),
      color(scalar_field("color")),
      key(scalar_field("key")),
      links(FieldTable::links()),
      counts(list_field("counts")),
      rcounts(list_field("rcounts")),
      ndims(scalar_field("ndims")),
      high(scalar_field("high")),
      pcomm(scalar_field("pcomm")),
      rleader(scalar_field("rleader")) {
  for (const Node& n : trace.nodes) ++site_nodes[n.key.site];
}

void Gen::fail(std::size_t node, const std::string& what) const {
  throw bench::BenchError((label ? label(node) : node_label(t, node)) + ": " + what);
}

std::string Gen::fresh(const std::string& base) {
  std::string name = base;
  for (int k = 2; names.count(name); ++k) name = base + "_" + std::to_string(k);
  names.insert(name);
  return name;
}

namespace {

const SourceFrame* user_frame(const Trace& t, SiteId site) {
  if (site >= t.sites.size()) return nullptr;
  for (const Frame& f : t.sites.at(site).frames) {
    const SourceFrames* s = t.symtab.symbols_of(f);
    if (!s || s->empty()) continue;
    const SourceFrame& sf = s->back();  // the outermost inlined frame: the caller's function
    const std::string& fn = sf.function;
    if (fn.empty() || fn.rfind("MPI_", 0) == 0 || fn.rfind("PMPI_", 0) == 0 ||
        fn.rfind("mpi_", 0) == 0 || fn.find("tracefold") != std::string::npos)
      continue;
    return &sf;
  }
  return nullptr;
}

std::string identifier(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '(' || c == '<') break;  // C++ signatures: the name only
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    out += ok ? c : '_';
  }
  const auto colon = out.rfind("__");
  if (colon != std::string::npos && colon + 2 < out.size()) out = out.substr(colon + 2);
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "f" + out;
  return out;
}

}  // namespace

std::string Gen::site_name(std::size_t i) const {
  const Node& n = t.nodes[i];
  const SourceFrame* f = user_frame(t, n.key.site);
  std::string base = f ? identifier(f->function) : OpTable::name(n.key.op);
  // Nodes of one call site (the site reached on different paths) keep
  // their own counters and tables.
  const bool shared = site_nodes.count(n.key.site) && site_nodes.at(n.key.site) > 1;
  return base + "_site" + std::to_string(n.key.site) + (shared ? "_node" + std::to_string(i) : "");
}

std::string Gen::site_comment(std::size_t i) const {
  const SourceFrame* f = user_frame(t, t.nodes[i].key.site);
  if (!f) return "";
  std::string file = f->file;
  const auto slash = file.rfind('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);
  return f->function + (file.empty() ? "" : " (" + file + ":" + std::to_string(f->line) + ")");
}

std::string Gen::after_name(EventKey k) {
  auto it = after_names.find(k);
  if (it != after_names.end()) return it->second;
  const std::string name = k == kStartKey
                               ? "AFTER_START"
                               : "AFTER_" + OpTable::name(k.op) + "_" + std::to_string(k.site);
  return after_names[k] = name;
}

namespace {

// Whether identifier `id` occurs in C text `c` as a whole word.
bool names_in(const std::string& c, const std::string& id) {
  auto word = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (auto at = c.find(id); at != std::string::npos; at = c.find(id, at + 1))
    if ((at == 0 || !word(c[at - 1])) && (at + id.size() == c.size() || !word(c[at + id.size()])))
      return true;
  return false;
}

std::string ns_text(double ns) {
  return std::to_string(std::llround(ns));
}

}  // namespace

std::string Gen::compute(std::size_t i) {
  const Node& n = t.nodes[i];
  const bench::ComputeClock clock = opt.clock;
  Histogram all;
  for (const Timing& tm : n.timings) all.merge(compute_histogram(tm, clock));
  if (all.empty() || all.mean() * opt.scale < 1) return "";
  // The processor clock leaves out the time a rank waited for a core.
  const std::string spin = clock == bench::ComputeClock::kCpu ? "spin_cpu_ns(" : "spin_ns(";
  char scale[32];
  std::snprintf(scale, sizeof scale, "%.6g", opt.scale);
  if (opt.compute != bench::ComputeMode::kSample) {
    const ComputeByPred c = compute_by_pred(n, opt.compute, clock);
    if (by_pred && !c.cases.empty()) {
      std::string e;
      for (const auto& [k, v] : c.cases)
        e += "after == " + after_name(k) + " ? " + ns_text(v * opt.scale) + " : ";
      return spin + e + ns_text(c.otherwise * opt.scale) + ");";
    }
    const double ns = compute_ns(n, opt.compute, clock) * opt.scale;
    return ns < 1 ? "" : spin + ns_text(ns) + ");";
  }
  auto table = [&](const Histogram& h) {
    const std::string name = fresh(site_name(i) + "_compute");
    decls << "static const struct bin " << name << "[] = {";
    for (const auto& b : h.bins())
      decls << "{" << b.count << ", " << b.min << ", " << b.max << ", " << b.sum << "}, ";
    decls << "};\n";
    return "draw_ns(" + name + ", " + std::to_string(h.bins().size()) + ")";
  };
  // Each predecessor draws from its own block; the others from all.
  std::string e;
  const Histogram* otherwise = &all;
  if (by_pred && n.timings.size() > 1)
    for (const Timing& tm : n.timings) {
      const Histogram& h = compute_histogram(tm, clock);
      if (h.empty()) continue;
      if (tm.pred == kOtherKey)
        otherwise = &h;
      else
        e += "after == " + after_name(tm.pred) + " ? " + table(h) + " : ";
    }
  e += table(*otherwise);
  return spin + "(" + e + ") * " + scale + ");";
}

void Gen::leaf(std::size_t h, const Ranklist& U) {
  const int32_t world = t.world_size;
  const Node& n = t.nodes[h];
  const std::string cmt = site_comment(h);
  body << line() << "/* " << OpTable::name(n.key.op) << (cmt.empty() ? "" : " in " + cmt)
       << " */\n";
  const std::string pred = rank_predicate(n.ranks, U, world);
  std::string guard = pred == "1" ? "" : pred;
  const std::string name = site_name(h);
  // Executions skipped in some iterations (count 0).
  std::string reach_expr;
  bool always = true;
  for (const ElasticEntry& en : n.count.entries())
    if (en.ranks.intersects(U) &&
        !(en.values.runs().size() == 1 && en.values.runs()[0].pattern == std::vector<int64_t>{1}))
      always = false;
  if (!always) {
    const std::string reach = name + "_reach";
    if (!names.count(reach)) {
      names.insert(reach);
      decls << "static long " << reach << ";\n";
    }
    reach_expr = elastic(h, n.count, "count", Kind::kInt, U, reach + "++");
    guard = guard.empty() ? reach_expr : "(" + guard + ") && " + reach_expr;
  }
  if (!guard.empty()) {
    body << line() << "if (" << guard << ") {\n";
    ++depth;
  }
  const std::string counter = name + "_n";
  names.insert(counter);
  const std::string spin = compute(h);
  if (!spin.empty()) body << line() << spin << "\n";
  if (threads) thread_before(h);
  const std::size_t from = body.str().size();
  pending_buffers.clear();
  call(h, U, counter);
  const std::string written = body.str().substr(from);
  if (threads) thread_after(h, written);
  for (const auto& [buf, bytes] : pending_buffers) {
    if (!names_in(written, buf)) continue;
    if (buf == "send_buf" || buf == "recv_buf") {
      int64_t& most = shared_buffers[buf];
      most = std::max(most, bytes);
      continue;
    }
    decls << "static char *" << buf << "; /* " << bytes << " bytes */\n";
    setup << "  " << buf << " = alloc_buffer(" << bytes << ");\n";
  }
  pending_buffers.clear();
  // The counter only where a table of the call reads it: a constant call
  // needs none, and an unread counter was some 60 bytes of every node.
  if (names_in(written, counter)) {
    if (counters.insert(counter).second) decls << "static long " << counter << ";\n";
    body << line() << "++" << counter << ";\n";
  }
  if (by_pred) body << line() << "after = " << after_name(n.key) << ";\n";
  if (!guard.empty()) {
    --depth;
    body << line() << "}\n";
  }
}

void Gen::structure(std::size_t from, std::size_t to, const std::string& suffix) {
  const std::size_t nn = to;
  const int32_t world = t.world_size;
  const bench::ComputeMode by =
      opt.compute == bench::ComputeMode::kSample ? bench::ComputeMode::kTrimmed : opt.compute;
  for (const Node& n : t.nodes)
    if (!compute_by_pred(n, by, opt.clock).cases.empty()) by_pred = true;
  // Each rank's nodes, and each node's position in them.
  std::vector<std::vector<std::size_t>> sub(static_cast<std::size_t>(world));
  for (std::size_t i = from; i < nn; ++i) {
    t.nodes[i].ranks.for_each([&](int32_t r) {
      if (r < world) sub[static_cast<std::size_t>(r)].push_back(i);
    });
  }
  // Each rank's loops as node spans; ranks with equal spans share code.
  std::vector<std::vector<LoopSpan>> spans(static_cast<std::size_t>(world));
  for (int32_t r = 0; r < world; ++r) {
    const auto& mine = sub[static_cast<std::size_t>(r)];
    for (std::size_t p = 0; p < mine.size(); ++p) {
      const Node& n = t.nodes[mine[p]];
      for (std::size_t l = 0; l < n.loops.size(); ++l) {
        const ValueSeq* m = n.loops[l].members.for_rank(r);
        if (!m || !n.loops[l].iters.for_rank(r)) break;
        const auto runs = m->runs();
        if (runs.size() != 1 || runs[0].pattern.size() != 1)
          fail(mine[p], "loop level " + std::to_string(l) +
                            " spans a different number of calls on different entries (rank " +
                            std::to_string(r) + ")");
        const int64_t members = runs[0].pattern[0];
        if (members < 1 || p + static_cast<std::size_t>(members) > mine.size())
          fail(mine[p], "loop level " + std::to_string(l) + " has an impossible size on rank " +
                            std::to_string(r));
        spans[static_cast<std::size_t>(r)].emplace_back(
            mine[p], l, mine[p + static_cast<std::size_t>(members) - 1]);
      }
    }
  }
  std::map<std::vector<LoopSpan>, Ranklist> classes;
  for (int32_t r = 0; r < world; ++r)
    if (!sub[static_cast<std::size_t>(r)].empty())
      classes[spans[static_cast<std::size_t>(r)]].insert(r);
  std::vector<std::pair<Ranklist, const std::vector<LoopSpan>*>> ordered;
  for (const auto& [s, ranks] : classes) ordered.emplace_back(ranks, &s);
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.first.first() < b.first.first(); });

  // One rank group writes its loops and calls inline. Several write each
  // call once, in run_node()'s switch, and each group's loops as a table of
  // node numbers and loop markers that walk() follows (walk_tables()):
  // copying the calls into every group's branch made the file grow with
  // the groups times the nodes (an irregular code's ranks each fold their
  // own loops).
  const bool shared = ordered.size() > 1;
  // The ranks whose walks run each node: its guards and tables need only
  // tell those apart (a node one group walks needs no guard at all).
  std::vector<Ranklist> walkers(nn);
  std::ostringstream trips_cases;
  int loop_ids = 0, deepest = 0;
  Ranklist left = Ranklist::range(0, world);
  for (std::size_t c = 0; c < ordered.size(); ++c) {
    const Ranklist& U = ordered[c].first;
    std::map<std::size_t, std::vector<std::size_t>> ends;  // head -> end per level
    for (const auto& [h, l, e] : *ordered[c].second) {
      auto& v = ends[h];
      if (v.size() <= l) v.resize(l + 1, h);
      v[l] = e;
    }
    if (shared) {
      const std::string p = c + 1 < ordered.size() ? rank_predicate(U, left, world) : "";
      body << line() << (c ? "} else " : "") << (p.empty() ? "{" : "if (" + p + ") {") << "\n";
      ++depth;
      Ranklist rest;
      left.for_each([&](int32_t r) {
        if (!U.contains(r)) rest.insert(r);
      });
      left = rest;
    }
    top_depth = depth;
    std::vector<int64_t> walk;  // this group's table (shared mode)
    int nest = 0;
    // emit_head(h, l): nodes h .. end(h, l), level l and the ones inside it.
    auto end_of = [&](std::size_t h, std::size_t l) {
      auto it = ends.find(h);
      return it == ends.end() || l >= it->second.size() ? h : it->second[l];
    };
    std::function<void(std::size_t, std::size_t)> range;
    std::function<void(std::size_t, std::size_t)> head = [&](std::size_t h, std::size_t l) {
      auto it = ends.find(h);
      if (it == ends.end() || l >= it->second.size()) {
        if (!shared) {
          leaf(h, U);
          return;
        }
        walk.push_back(static_cast<int64_t>(h));
        U.for_each([&](int32_t r) { walkers[h].insert(r); });
        return;
      }
      const Node& n = t.nodes[h];
      const std::string entered = site_name(h) + "_loop" + std::to_string(l);
      // The entry counter is read once and stepped in the same expression.
      const std::string trips =
          elastic(h, n.loops[l].iters, "trips" + std::to_string(l), Kind::kInt, U, entered + "++");
      const std::string var = "i" + std::to_string(++loop_vars);
      const bool counted = trips.find(entered) != std::string::npos;
      if (counted && !names.count(entered)) {
        names.insert(entered);
        decls << "static long " << entered << ";\n";
      }
      const bool phase = l == 0 && (shared ? nest == 0 : depth == top_depth);
      if (phase) {
        if (!shared) body << line() << "phase_start = now(); /* phase " << phases.size() << " */\n";
        phases.push_back(site_name(h));
      }
      const std::size_t phase_no = phases.size() - 1;
      if (shared) {
        // {-1, loop id, phase or -1, body length} body... {-2}
        trips_cases << "    case " << loop_ids << ":\n      return " << trips << ";\n";
        walk.insert(walk.end(), {-1, loop_ids++, phase ? static_cast<int64_t>(phase_no) : -1, 0});
        const std::size_t at = walk.size();
        deepest = std::max(deepest, ++nest);
        head(h, l + 1);
        range(end_of(h, l + 1) + 1, end_of(h, l));
        --nest;
        walk[at - 1] = static_cast<int64_t>(walk.size() - at);
        walk.push_back(-2);
        return;
      }
      body << line() << "const long " << var << "_end = " << trips << ";\n";
      body << line() << "for (long " << var << " = 0; " << var << " < " << var << "_end; ++" << var
           << ") {\n";
      ++depth;
      head(h, l + 1);
      range(end_of(h, l + 1) + 1, end_of(h, l));
      --depth;
      body << line() << "}\n";
      if (phase) body << line() << "phase_time[" << phase_no << "] += now() - phase_start;\n";
    };
    range = [&](std::size_t a, std::size_t b) {
      for (std::size_t p = a; p <= b && p < nn;) {
        if (!t.nodes[p].ranks.intersects(U)) {
          ++p;
          continue;
        }
        head(p, 0);
        p = end_of(p, 0) + 1;
      }
    };
    if (nn > from) range(from, nn - 1);
    if (shared) {
      const std::string name = fresh("walk" + std::to_string(c));
      decls << "static const int " << name << "[" << std::max<std::size_t>(walk.size(), 1)
            << "] = {";
      for (std::size_t k = 0; k < walk.size(); ++k)
        decls << (k ? (k % 20 ? ", " : ",\n    ") : "") << walk[k];
      decls << "};\n";
      body << line() << "walk" << suffix << "(" << name << ", " << walk.size() << ");\n";
      --depth;
    }
  }
  if (!shared) return;
  body << line() << "}\n";
  // Every call once, for every rank that makes it (its guard and tables
  // cover all ranks that walk it), then the loops' trip counts and the walker.
  const std::string saved = body.str();
  const int was = depth;
  // Each case is written into an empty body (leaf() reads back what it
  // wrote: with the cases before it still there, that was quadratic).
  std::ostringstream cases_out;
  for (std::size_t h = from; h < nn; ++h) {
    if (walkers[h].empty()) continue;
    // Braces only around a case that declares something at its own level
    // (two cases may declare the same name): they were 20 bytes of every
    // case of an irregular trace's benchmark.
    body.str("");
    depth = 3;
    leaf(h, walkers[h]);
    const std::string text = body.str();
    bool braces = false;
    std::istringstream lines(text);
    for (std::string l; !braces && std::getline(lines, l);) {
      if (l.size() < 7 || l.compare(0, 6, "      ") != 0 || l[6] == ' ') continue;
      for (const char* type : {"const ", "static ", "int ", "long ", "double ", "char ",
                               "unsigned ", "MPI_Request ", "MPI_Datatype ", "MPI_Comm ",
                               "MPI_Group ", "MPI_Op ", "MPI_Aint ", "MPI_Status ", "MPI_Info "})
        if (l.compare(6, std::strlen(type), type) == 0) braces = true;
    }
    cases_out << "    case " << h << (braces ? ": {\n" : ":\n") << text
              << (braces ? "      break;\n    }\n" : "      break;\n");
  }
  const std::string cases = cases_out.str();
  body.str("");
  body << saved;
  depth = was;
  funcs << "\n/* Each call of the trace, by node number (shared by the rank groups). */\n"
        << "static void run_node" << suffix << "(int node) {\n  switch (node) {\n"
        << cases << "    default:\n      break;\n  }\n}\n"
        << "/* Trip count of a loop at this entry. */\nstatic long loop_trips" << suffix
        << "(int loop) {\n"
        << "  switch (loop) {\n"
        << trips_cases.str() << "    default:\n      return 0;\n  }\n}\n"
        << walk_c(deepest, suffix);
}

}  // namespace tracefold::benchgen
