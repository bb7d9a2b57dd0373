// Elastic values as C expressions (gen.hpp): a constant where all ranks
// and executions agree, a small table indexed by a counter where they
// vary, a predicate on the rank where rank groups differ.
#include <algorithm>
#include <cmath>

#include "gen.hpp"

namespace tracefold::benchgen {

namespace {

// Named datatypes and reduction operations by trace id (from 1), in the
// order the recorder numbers them (src/common/mpi_ids.hpp).
const char* const kDtypeNames[] = {"MPI_CHAR",
                                   "MPI_SIGNED_CHAR",
                                   "MPI_UNSIGNED_CHAR",
                                   "MPI_BYTE",
                                   "MPI_SHORT",
                                   "MPI_UNSIGNED_SHORT",
                                   "MPI_INT",
                                   "MPI_UNSIGNED",
                                   "MPI_LONG",
                                   "MPI_UNSIGNED_LONG",
                                   "MPI_LONG_LONG",
                                   "MPI_UNSIGNED_LONG_LONG",
                                   "MPI_FLOAT",
                                   "MPI_DOUBLE",
                                   "MPI_LONG_DOUBLE",
                                   "MPI_C_BOOL",
                                   "MPI_INT8_T",
                                   "MPI_INT16_T",
                                   "MPI_INT32_T",
                                   "MPI_INT64_T",
                                   "MPI_UINT8_T",
                                   "MPI_UINT16_T",
                                   "MPI_UINT32_T",
                                   "MPI_UINT64_T",
                                   "MPI_C_DOUBLE_COMPLEX",
                                   "MPI_PACKED",
                                   "MPI_FLOAT_INT",
                                   "MPI_DOUBLE_INT",
                                   "MPI_2INT",
                                   "MPI_INTEGER",
                                   "MPI_REAL",
                                   "MPI_DOUBLE_PRECISION",
                                   "MPI_LOGICAL",
                                   "MPI_CHARACTER",
                                   "MPI_COMPLEX",
                                   "MPI_DOUBLE_COMPLEX",
                                   "MPI_2DOUBLE_PRECISION",
                                   "MPI_2INTEGER",
                                   "MPI_2REAL"};
const char* const kOpNames[] = {"MPI_MAX",    "MPI_MIN",    "MPI_SUM",     "MPI_PROD", "MPI_LAND",
                                "MPI_BAND",   "MPI_LOR",    "MPI_BOR",     "MPI_LXOR", "MPI_BXOR",
                                "MPI_MAXLOC", "MPI_MINLOC", "MPI_REPLACE", "MPI_NO_OP"};
constexpr std::size_t kDtypes = sizeof(kDtypeNames) / sizeof(kDtypeNames[0]);
constexpr std::size_t kOps = sizeof(kOpNames) / sizeof(kOpNames[0]);

// Most numbers the generator writes for one value sequence; a longer,
// irregular one is refused rather than filling the file.
constexpr uint64_t kMaxTable = 1 << 16;
// Longest sequence written value by value (and only when that takes no
// more numbers than its runs: `0*502 2 1` is three runs, not 504 numbers).
// A longer one is written as the trace folded it, runs of a repeated pattern (a polling loop's
// values: `0*18746 1 0 1 0*35909`): its size follows the number of irregular events, not the number
// of polls, which depends on the load.
constexpr uint64_t kFlatMax = 1 << 10;

int64_t code_of(int64_t v) {
  if (v == kAny) return kCodeAny;
  if (v == kNull) return kCodeNull;
  if (v == kUndefined) return kCodeUndef;
  if (v == kAbsent) return kCodeAbsent;
  return v;
}

std::string code_text(int64_t v) {
  switch (v) {
    case kCodeAny:
      return "TF_ANY";
    case kCodeNull:
      return "TF_NULL";
    case kCodeUndef:
      return "TF_UNDEF";
    case kCodeAbsent:
      return "TF_ABSENT";
    default:
      return std::to_string(v);
  }
}

std::string table_text(const std::vector<int64_t>& values) {
  std::string out;
  for (std::size_t k = 0; k < values.size(); ++k) {
    out += (k ? (k % 16 ? ", " : ",\n    ") : "") + code_text(code_of(values[k]));
  }
  return out;
}

// Numbers a sequence takes written as runs: each run's pattern and its
// {end, at, len}.
uint64_t runs_numbers(const ValueSeq& seq) {
  uint64_t numbers = 0;
  for (const auto& r : seq.runs()) numbers += r.pattern.size() + 3;
  return numbers;
}

// The table one rank group reads, and how it reads it: the repeated
// pattern (counter modulo its length) when the sequence is one pattern
// repeated; every value when there are few; else the patterns of the
// trace's runs one after the other, with `runs` saying where each run ends
// in the sequence. Empty when that is still more than kMaxTable numbers.
struct Table {
  std::vector<int64_t> values;
  std::vector<ValueSeq::Run> runs;  // empty unless written as runs
  bool cyclic = false;
};

Table table_of(const ValueSeq& seq) {
  Table tab;
  auto runs = seq.runs();
  tab.cyclic = runs.size() == 1 && runs[0].pattern.size() <= kMaxTable;
  const uint64_t numbers = runs_numbers(seq);
  if (tab.cyclic) {
    tab.values = runs[0].pattern;
  } else if (seq.size() <= kFlatMax && seq.size() <= numbers) {
    tab.values = seq.to_vector();
  } else {
    if (numbers > kMaxTable) return {};
    for (const auto& r : runs)
      tab.values.insert(tab.values.end(), r.pattern.begin(), r.pattern.end());
    tab.runs = std::move(runs);
  }
  return tab;
}

// `{end, at, len}` of each run: how many values the sequence has up to the
// run's end, where its pattern starts among the values, its length.
std::string runs_text(const std::vector<ValueSeq::Run>& runs) {
  std::string out;
  uint64_t end = 0, at = 0;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    end += runs[k].pattern.size() * runs[k].reps;
    out += (k ? (k % 4 ? ", " : ",\n    ") : "") + std::string("{") + std::to_string(end) + ", " +
           std::to_string(at) + ", " + std::to_string(runs[k].pattern.size()) + "}";
    at += runs[k].pattern.size();
  }
  return out;
}

// FNV-1a: a hash that is the same on every platform, so a draw is too.
uint64_t stable_hash(const std::string& s, uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<int64_t> Gen::drawn(std::size_t i, const std::string& what, const ValueSeq& hist) {
  std::vector<int64_t> v;
  if (hist.size() <= kMaxTable) {
    v = hist.to_vector();
  } else {
    // A modelled poll loop under a spinning MPI makes millions of probes:
    // the table keeps their distribution, scaled to kMaxTable values and
    // read cyclically like every drawn table. A value that occurs keeps at
    // least one entry, so no outcome (a probe that finds a message) is lost.
    const double scale = static_cast<double>(kMaxTable) / static_cast<double>(hist.size());
    for (const ValueSeq::Run& r : hist.runs())
      for (int64_t value : r.pattern) {
        const auto n = std::max<uint64_t>(
            1, static_cast<uint64_t>(std::llround(static_cast<double>(r.reps) * scale)));
        v.insert(v.end(), n, value);
      }
  }
  // Fisher-Yates with a generator keyed by seed, node and field only: every
  // rank group of the node draws the same permutation of its values.
  uint64_t state = stable_hash(what, 1469598103934665603ULL ^ (opt.seed * 0x100000001b3ULL)) ^
                   (static_cast<uint64_t>(i) << 20);
  for (std::size_t k = v.size(); k > 1; --k) std::swap(v[k - 1], v[splitmix(state) % k]);
  return v;
}

std::string named_tables(bool derived) {
  // Derived types and user operations are made at run time
  // (Gen::types_prelude, later in the file); without them an id beyond the
  // named ones cannot occur (the generator refused it).
  std::string out =
      std::string(derived ? "static MPI_Datatype derived_type(long id);\n"
                            "static MPI_Op user_op(long id);\n"
                          : "") +
      "HELPER MPI_Datatype dtype_of(long id) {\n  static const MPI_Datatype named[] = {";
  for (std::size_t k = 0; k < kDtypes; ++k)
    out += std::string(k ? "," : "") + (k % 4 ? " " : "\n      ") + kDtypeNames[k];
  out += "};\n  return id >= 1 && id <= " + std::to_string(kDtypes) +
         " ? named[id - 1] : " + (derived ? "derived_type(id)" : "MPI_DATATYPE_NULL") + ";\n}\n";
  out += "HELPER MPI_Op op_of(long id) {\n  static const MPI_Op named[] = {";
  for (std::size_t k = 0; k < kOps; ++k)
    out += std::string(k ? "," : "") + (k % 5 ? " " : "\n      ") + kOpNames[k];
  out += "};\n  return id >= 1 && id <= " + std::to_string(kOps) +
         " ? named[id - 1] : " + (derived ? "user_op(id)" : "MPI_OP_NULL") + ";\n}\n";
  return out;
}

std::string Gen::literal(int64_t v, Kind kind, const std::string& comm_c) const {
  switch (kind) {
    case Kind::kTag:
      if (v == kAny) return "MPI_ANY_TAG";
      break;
    case Kind::kPeer:
      if (v == kAny) return "MPI_ANY_SOURCE";
      if (v == kNull) return "MPI_PROC_NULL";
      if (is_sentinel(v)) break;
      if (comm_c == "MPI_COMM_WORLD") return peer_expression(v, t.world_size);
      return peer_expression(v, 0, {}, "rank_in(" + comm_c + ")", "size_of(" + comm_c + ")");
    case Kind::kDtype:
      if (v >= 1 && static_cast<std::size_t>(v) <= kDtypes) return kDtypeNames[v - 1];
      if (v >= kFirstDerivedType) return "derived_type(" + std::to_string(v) + ")";
      return "";
    case Kind::kRedop:
      if (v >= 1 && static_cast<std::size_t>(v) <= kOps) return kOpNames[v - 1];
      if (v >= kFirstUserOp) return "user_op(" + std::to_string(v) + ")";
      return "";
    case Kind::kComm:
      return v == kNull ? "MPI_COMM_NULL" : comm_var(v);
    case Kind::kInt:
      break;
  }
  if (v == kAny) return "MPI_ANY_SOURCE";
  if (v == kNull) return "MPI_PROC_NULL";
  if (v == kUndefined) return "MPI_UNDEFINED";
  return std::to_string(v);
}

std::string Gen::shared_table(const std::string& type, const std::string& base,
                              const std::vector<int64_t>& values) {
  // Tables are constant: calls whose values are the same read one table,
  // each with its own counter or cursor.
  const std::string text = table_text(values);
  const std::string key = type + " " + std::to_string(values.size()) + " " + text;
  auto it = shared_tables.find(key);
  if (it != shared_tables.end()) return it->second;
  const std::string name = fresh(base);
  decls << "static const " << type << " " << name << "[" << values.size() << "] = {" << text
        << "};\n";
  return shared_tables[key] = name;
}

std::string Gen::comm_var(int64_t id) const {
  if (id == CommTable::kWorld) return "MPI_COMM_WORLD";
  if (auto it = comm_names.find(id); it != comm_names.end()) return it->second;
  auto it = predefined_comms.find(id);
  return it == predefined_comms.end() ? "" : it->second;
}

std::string Gen::elastic(std::size_t i, const Elastic& e, const std::string& what, Kind kind,
                         const Ranklist& universe, const std::string& counter,
                         const std::string& comm_c) {
  struct Alt {
    Ranklist ranks;
    std::string expr;
  };
  std::vector<Alt> alts;
  for (const ElasticEntry& en : e.entries()) {
    if (!en.ranks.intersects(universe)) continue;
    if (en.values.is_histogram() && !opt.lossy_ok)
      fail(i, what + " is a histogram (lossy trace): the benchmark needs exact values");
    if (en.values.empty()) continue;
    Table tab;
    if (en.values.is_histogram()) {
      tab.values = drawn(i, what, en.values);
      // A rank may read more values than a histogram holds (a modelled
      // poll loop's drawn trip counts decide how often its probe runs): it
      // starts over, as expansion does.
      tab.cyclic = true;
    } else
      tab = table_of(en.values);
    const std::vector<int64_t>& values = tab.values;
    if (values.empty()) fail(i, what + " has runs of more than 65536 irregular values");
    std::string expr;
    const bool constant =
        std::all_of(values.begin(), values.end(), [&](int64_t v) { return v == values[0]; });
    if (constant) {
      expr = literal(values[0], kind, comm_c);
      if (expr.empty()) fail(i, what + " " + format_value(values[0]) + " cannot be named in C");
    } else {
      for (int64_t v : values)
        if (literal(v, kind, comm_c).empty())
          fail(i, what + " " + format_value(v) + " cannot be named in C");
      const std::string name = tab.runs.empty()
                                   ? shared_table("long", site_name(i) + "_" + what, values)
                                   : fresh(site_name(i) + "_" + what);
      if (!tab.runs.empty())
        decls << "static const long " << name << "[" << values.size() << "] = {"
              << table_text(values) << "};\n";
      std::string at =
          name + "[" + counter + (tab.cyclic ? " % " + std::to_string(values.size()) : "") + "]";
      if (!tab.runs.empty()) {
        decls << "static const struct run " << name << "_runs[" << tab.runs.size() << "] = {"
              << runs_text(tab.runs) << "};\n";
        at = "run_value(" + name + "_runs, " + std::to_string(tab.runs.size()) + ", " + name +
             ", " + counter + ")";
      }
      switch (kind) {
        case Kind::kInt:
          expr = "val(" + at + ")";
          break;
        case Kind::kTag:
          expr = "tag_of(" + at + ")";
          break;
        case Kind::kPeer:
          expr = "peer_of(" + comm_c + ", " + at + ")";
          break;
        case Kind::kDtype:
          expr = "dtype_of(" + at + ")";
          break;
        case Kind::kRedop:
          expr = "op_of(" + at + ")";
          break;
        case Kind::kComm:
          expr = "comm_of(" + at + ")";
          break;
      }
    }
    // Rank groups with the same expression are one alternative.
    auto same_expr =
        std::find_if(alts.begin(), alts.end(), [&](const Alt& a) { return a.expr == expr; });
    if (same_expr != alts.end())
      en.ranks.for_each([&](int32_t r) { same_expr->ranks.insert(r); });
    else
      alts.push_back({en.ranks, expr});
  }
  if (alts.empty()) return "";
  bool same =
      std::all_of(alts.begin(), alts.end(), [&](const Alt& a) { return a.expr == alts[0].expr; });
  if (same) return alts[0].expr;
  // Rank groups disagree: one predicate per group, each decided among the
  // ranks no earlier group took.
  std::string out = "(";
  Ranklist left = universe;
  for (std::size_t k = 0; k + 1 < alts.size(); ++k) {
    out += "(" + rank_predicate(alts[k].ranks, left, t.world_size) + ") ? " + alts[k].expr + " : ";
    Ranklist rest;
    left.for_each([&](int32_t r) {
      if (!alts[k].ranks.contains(r)) rest.insert(r);
    });
    left = rest;
  }
  return out + alts.back().expr + ")";
}

std::string Gen::scalar(std::size_t i, FieldId f, Kind kind, const Ranklist& universe,
                        const std::string& counter, const std::string& comm_c) {
  const Elastic* e = t.nodes[i].field(f);
  if (!e) return "";
  return elastic(i, *e, FieldTable::name(f), kind, universe, counter, comm_c);
}

std::string Gen::list(std::size_t i, FieldId f, const Ranklist& universe) {
  const Elastic* e = t.nodes[i].field(f);
  if (!e) return "";
  const std::string what = FieldTable::name(f);
  // Per rank group: "table, length" of a table of whole lists, or (written
  // as runs) the whole read.
  struct Alt {
    Ranklist ranks;
    std::string text;
    bool read;
  };
  std::vector<Alt> alts;
  std::string cursor;
  for (const ElasticEntry& en : e->entries()) {
    if (!en.ranks.intersects(universe) || en.values.empty()) continue;
    if (en.values.is_histogram()) fail(i, what + " is a histogram (lossy trace)");
    Table tab = table_of(en.values);
    if (tab.values.empty()) fail(i, what + " has runs of more than 65536 irregular values");
    // A pattern that is not whole lists (a list split across repetitions)
    // is written out in full, or as its one run.
    if (tab.cyclic) {
      // A few copies of the pattern may be whole lists where one is not
      // (`1` repeated is the list {1} again and again: `1, 1`); read
      // cyclically, they give the same sequence.
      const std::vector<int64_t> once = tab.values;
      auto whole = [](const std::vector<int64_t>& v) {
        std::size_t p = 0;
        while (p < v.size() && v[p] >= 0) p += 1 + static_cast<std::size_t>(v[p]);
        return p == v.size();
      };
      for (int copies = 2; !whole(tab.values) && copies <= 8; ++copies)
        tab.values.insert(tab.values.end(), once.begin(), once.end());
      if (!whole(tab.values)) {
        tab.values = once;
        tab.cyclic = false;
        if (en.values.size() <= kFlatMax && en.values.size() <= runs_numbers(en.values))
          tab.values = en.values.to_vector();
        else
          tab.runs = en.values.runs();
      }
    }
    for (int64_t v : tab.values)
      if (v == kAbsent) fail(i, what + " is absent on some calls");
    if (cursor.empty()) cursor = fresh(site_name(i) + "_" + what + "_at");
    if (tab.runs.empty()) {
      const std::string name = shared_table("int", site_name(i) + "_" + what, tab.values);
      alts.push_back({en.ranks, name + ", " + std::to_string(tab.values.size()), false});
      continue;
    }
    const std::string name = fresh(site_name(i) + "_" + what);
    // Runs: the values are read one by one into a buffer as long as the
    // longest list, and the list handed out from there.
    int64_t longest = 0;
    for (auto c = en.values.cursor(); !c.done();) {
      const int64_t len = c.next();
      longest = std::max(longest, len);
      for (int64_t k = 0; k < len && !c.done(); ++k) c.next();
    }
    decls << "static const long " << name << "[" << tab.values.size() << "] = {"
          << table_text(tab.values) << "};\n"
          << "static const struct run " << name << "_runs[" << tab.runs.size() << "] = {"
          << runs_text(tab.runs) << "};\n"
          << "static int " << name << "_buf[" << longest + 1 << "];\n";
    alts.push_back({en.ranks,
                    "next_run_list(" + name + "_runs, " + std::to_string(tab.runs.size()) + ", " +
                        name + ", &" + cursor + ", " + name + "_buf)",
                    true});
  }
  if (alts.empty()) return "";
  // Declared only when read: a rank group without the list (a non-root of
  // MPI_Gatherv) must not leave an unused variable behind.
  decls << "static long " << cursor << ";\n";
  std::string read;
  if (std::none_of(alts.begin(), alts.end(), [](const Alt& a) { return a.read; })) {
    std::string arg = alts.back().text;
    for (std::size_t k = alts.size() - 1; k-- > 0;) {
      const std::string p = rank_predicate(alts[k].ranks, universe, t.world_size);
      const auto comma = alts[k].text.find(',');
      const auto comma2 = arg.rfind(',');
      arg = "(" + p + ") ? " + alts[k].text.substr(0, comma) + " : " + arg.substr(0, comma2) +
            ", (" + p + ") ? " + alts[k].text.substr(comma + 2) + " : " + arg.substr(comma2 + 2);
    }
    read = "next_list(" + arg + ", &" + cursor + ")";
  } else {
    auto whole = [&](const Alt& a) {
      return a.read ? a.text : "next_list(" + a.text + ", &" + cursor + ")";
    };
    read = whole(alts.back());
    for (std::size_t k = alts.size() - 1; k-- > 0;)
      read = "(" + rank_predicate(alts[k].ranks, universe, t.world_size) + ") ? " + whole(alts[k]) +
             " : " + read;
    if (alts.size() > 1) read = "(" + read + ")";
  }
  // Ranks of the universe that have no list (non-roots of MPI_Gatherv)
  // pass NULL, as the program did.
  Ranklist covered;
  bool partial = false;
  universe.for_each([&](int32_t r) {
    bool in = false;
    for (const auto& a : alts) in = in || a.ranks.contains(r);
    if (in)
      covered.insert(r);
    else
      partial = true;
  });
  if (!partial) return read;
  return "((" + rank_predicate(covered, universe, t.world_size) + ") ? " + read + " : NULL)";
}

bool Gen::has(std::size_t i, FieldId f) const {
  const Elastic* e = t.nodes[i].field(f);
  if (!e) return false;
  for (const ElasticEntry& en : e->entries())
    for (auto c = en.values.cursor(); !c.done();)
      if (c.next() != kAbsent) return true;
  return false;
}

int64_t Gen::max_of(std::size_t i, FieldId f, bool list_sum) const {
  const Elastic* e = t.nodes[i].field(f);
  int64_t best = 0;
  if (!e) return 0;
  for (const ElasticEntry& en : e->entries()) {
    for (auto c = en.values.cursor(); !c.done();) {
      int64_t v = c.next();
      if (list_sum && v != kAbsent) {
        int64_t sum = 0;
        for (int64_t n = 0; n < v && !c.done(); ++n) {
          const int64_t x = c.next();
          if (!is_sentinel(x) && x > 0) sum += x;
        }
        v = sum;
      }
      if (!is_sentinel(v)) best = std::max(best, v);
    }
  }
  return best;
}

}  // namespace tracefold::benchgen
