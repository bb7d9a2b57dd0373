// The coNCePTuaL that emit_conceptual() writes is checked against the
// language's grammar: a recursive-descent parser for the subset tracefold
// emits, written from the coNCePTuaL user guide (chapter 4, "Grammar":
// task descriptions, SENDS/RECEIVES/MULTICASTS/REDUCES/SYNCHRONIZES,
// AWAITS COMPLETION, COMPUTES FOR, FOR ... REPETITIONS, FOR EACH, IF,
// `{ }` grouping, statements joined by THEN; keywords are case-blind and
// their singular and plural forms interchangeable). No coNCePTuaL
// compiler runs on Debian 12, so this stands in for `ncptl --lint`.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "source_dir.hpp"
#include "stencil.hpp"
#include "test_util.hpp"
#include "tracefold/bench_conceptual.hpp"
#include "tracefold/bench_passes.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

struct Token {
  enum Kind { kWord, kNumber, kString, kPunct, kEnd } kind = kEnd;
  std::string text;  // words upper-cased and made singular
  int line = 0;
};

// Keywords that come in a singular and a plural (or third-person) form.
const std::map<std::string, std::string>& plurals() {
  static const std::map<std::string, std::string> m = [] {
    std::map<std::string, std::string> p;
    for (const char* w :
         {"TASK",        "MESSAGE",    "REPETITION", "MICROSECOND", "MILLISECOND", "SECOND",
          "BYTE",        "HALFWORD",   "WORD",       "INTEGER",     "DOUBLEWORD",  "QUADWORD",
          "PAGE",        "COMPLETION", "SEND",       "RECEIVE",     "MULTICAST",   "REDUCE",
          "SYNCHRONIZE", "COMPUTE",    "AWAIT",      "REQUIRE",     "OUTPUT",      "SLEEP"})
      p[std::string(w) + "S"] = w;
    p["SYNCHRONIZES"] = "SYNCHRONIZE";
    return p;
  }();
  return m;
}

std::vector<Token> lex(const std::string& src) {
  std::vector<Token> out;
  int line = 1;
  for (std::size_t i = 0; i < src.size();) {
    const char c = src[i];
    if (c == '\n') {
      ++line, ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '#') {
      while (i < src.size() && src[i] != '\n') ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < src.size() && (std::isalnum(static_cast<unsigned char>(src[j])) || src[j] == '_'))
        ++j;
      std::string w = src.substr(i, j - i);
      std::string up;
      for (char ch : w) up += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      if (auto it = plurals().find(up); it != plurals().end()) up = it->second;
      out.push_back({Token::kWord, up, line});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
      out.push_back({Token::kNumber, src.substr(i, j - i), line});
      i = j;
    } else if (c == '"') {
      const std::size_t j = src.find('"', i + 1);
      if (j == std::string::npos) throw std::runtime_error("unterminated string");
      out.push_back({Token::kString, src.substr(i + 1, j - i - 1), line});
      i = j + 1;
    } else {
      static const char* multi[] = {"...", "/\\", "\\/", "<=", ">=", "<>", "<<", ">>"};
      std::string p(1, c);
      for (const char* m : multi)
        if (src.compare(i, std::strlen(m), m) == 0) {
          p = m;
          break;
        }
      if (std::string("{}(),.=<>+-*/").find(c) == std::string::npos && p.size() == 1)
        throw std::runtime_error("line " + std::to_string(line) + ": stray character '" + p + "'");
      out.push_back({Token::kPunct, p, line});
      i += p.size();
    }
  }
  out.push_back({Token::kEnd, "", line});
  return out;
}

// Parses a whole program; counts statements by their verb.
class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : t_(std::move(toks)) {}

  std::map<std::string, int> program() {
    if (is_word("REQUIRE")) {
      expect_word("REQUIRE"), expect_word("LANGUAGE"), expect_word("VERSION");
      if (t_[p_].kind != Token::kString) error("version string");
      ++p_;
      expect_punct(".");
    }
    stmt_list();
    if (is_punct(".")) ++p_;
    if (t_[p_].kind != Token::kEnd) error("end of program");
    return counts_;
  }

 private:
  [[noreturn]] void error(const std::string& want) {
    throw std::runtime_error("line " + std::to_string(t_[p_].line) + ": expected " + want +
                             ", got '" + t_[p_].text + "'");
  }
  bool is_word(const char* w) const { return t_[p_].kind == Token::kWord && t_[p_].text == w; }
  bool is_punct(const char* s) const { return t_[p_].kind == Token::kPunct && t_[p_].text == s; }
  void expect_word(const char* w) {
    if (!is_word(w)) error(w);
    ++p_;
  }
  void expect_punct(const char* s) {
    if (!is_punct(s)) error(std::string("'") + s + "'");
    ++p_;
  }
  bool accept_word(const char* w) {
    if (!is_word(w)) return false;
    ++p_;
    return true;
  }

  void stmt_list() {
    stmt();
    while (accept_word("THEN")) stmt();
  }

  void stmt() {
    if (accept_word("FOR")) {
      if (accept_word("EACH")) {
        ident();
        expect_word("IN");
        range();
        ++counts_["FOR EACH"];
        stmt();
        return;
      }
      expr();
      if (accept_word("REPETITION")) {
        ++counts_["FOR REPETITIONS"];
      } else {
        time_unit();
        ++counts_["FOR TIME"];
      }
      stmt();
      return;
    }
    if (accept_word("IF")) {
      rel();
      expect_word("THEN");
      stmt();
      if (accept_word("OTHERWISE")) stmt();
      ++counts_["IF"];
      return;
    }
    if (is_punct("{")) {
      ++p_;
      if (!is_punct("}")) stmt_list();
      expect_punct("}");
      return;
    }
    task_expr();
    action();
  }

  void action() {
    const bool async = accept_word("ASYNCHRONOUSLY");
    if (accept_word("SEND")) {
      message_spec();
      expect_word("TO");
      accept_word("UNSUSPECTING");
      task_expr();
      ++counts_[async ? "ASYNC SEND" : "SEND"];
    } else if (accept_word("RECEIVE")) {
      message_spec();
      expect_word("FROM");
      task_expr();
      ++counts_[async ? "ASYNC RECEIVE" : "RECEIVE"];
    } else if (!async && accept_word("MULTICAST")) {
      message_spec();
      expect_word("TO");
      task_expr();
      ++counts_["MULTICAST"];
    } else if (!async && accept_word("REDUCE")) {
      item_count();
      data_type();
      expect_word("TO");
      task_expr();
      ++counts_["REDUCE"];
    } else if (!async && accept_word("SYNCHRONIZE")) {
      ++counts_["SYNCHRONIZE"];
    } else if (!async && accept_word("AWAIT")) {
      expect_word("COMPLETION");
      ++counts_["AWAIT COMPLETION"];
    } else if (!async && accept_word("COMPUTE")) {
      expect_word("FOR");
      expr();
      time_unit();
      ++counts_["COMPUTE"];
    } else {
      error("a statement verb");
    }
  }

  // <source_task> / <target_tasks>: TASK expr, TASKS v SUCH THAT rel,
  // ALL TASKS [v], ALL OTHER TASKS.
  void task_expr() {
    if (accept_word("ALL")) {
      if (accept_word("OTHER")) {
        expect_word("TASK");
        return;
      }
      expect_word("TASK");
      if (t_[p_].kind == Token::kWord && !keyword(t_[p_].text)) ident();
      return;
    }
    expect_word("TASK");
    if (t_[p_].kind == Token::kWord && !keyword(t_[p_].text) && t_[p_ + 1].kind == Token::kWord &&
        t_[p_ + 1].text == "SUCH") {
      ident();
      expect_word("SUCH");
      expect_word("THAT");
      rel();
      return;
    }
    expr();
  }

  void message_spec() {
    item_count();
    // item_size: expr data_multiplier (absent: the default size)
    if (!is_word("MESSAGE")) {
      expr();
      data_type();
    }
    expect_word("MESSAGE");
    if (accept_word("USING")) {
      expect_word("TAG");
      expr();
    }
  }

  void item_count() {
    if (accept_word("A") || accept_word("AN")) return;
    expr();
  }

  void data_type() {
    for (const char* w : {"BYTE", "HALFWORD", "WORD", "INTEGER", "DOUBLEWORD", "QUADWORD", "PAGE",
                          "KILOBYTE", "MEGABYTE", "GIGABYTE"})
      if (accept_word(w)) return;
    error("a data type");
  }

  void time_unit() {
    for (const char* w : {"MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY"})
      if (accept_word(w)) return;
    error("a time unit");
  }

  void range() {
    expect_punct("{");
    expr();
    while (is_punct(",")) {
      ++p_;
      if (is_punct("...")) {
        ++p_;
        expect_punct(",");
        expr();
        break;
      }
      expr();
    }
    expect_punct("}");
  }

  // rel_expr: disjunctions of conjunctions of comparisons.
  void rel() {
    rel_and();
    while (is_punct("\\/")) ++p_, rel_and();
  }
  void rel_and() {
    rel_primary();
    while (is_punct("/\\")) ++p_, rel_primary();
  }
  void rel_primary() {
    if (is_punct("(")) {
      // Either a parenthesized relation or an expression that starts with
      // a parenthesis: try the first, fall back to the second.
      const std::size_t save = p_;
      try {
        ++p_;
        rel();
        expect_punct(")");
        return;
      } catch (const std::runtime_error&) {
        p_ = save;
      }
    }
    expr();
    if (accept_word("DIVIDES")) {
      expr();
      return;
    }
    if (accept_word("IS")) {
      if (!accept_word("EVEN") && !accept_word("ODD")) error("EVEN or ODD");
      return;
    }
    for (const char* op : {"=", "<>", "<=", ">=", "<", ">"})
      if (is_punct(op)) {
        ++p_;
        expr();
        return;
      }
    error("a comparison");
  }

  void expr() {
    mul();
    while (is_punct("+") || is_punct("-")) ++p_, mul();
  }
  void mul() {
    unary();
    while (is_punct("*") || is_punct("/") || is_word("MOD")) ++p_, unary();
  }
  void unary() {
    if (is_punct("-") || is_punct("+")) ++p_;
    if (t_[p_].kind == Token::kNumber) {
      ++p_;
    } else if (is_punct("(")) {
      ++p_;
      expr();
      expect_punct(")");
    } else {
      ident();
    }
  }
  void ident() {
    if (t_[p_].kind != Token::kWord || keyword(t_[p_].text)) error("an identifier");
    ++p_;
  }
  static bool keyword(const std::string& w) {
    static const char* words[] = {"A",       "ALL",         "AN",           "ASYNCHRONOUSLY",
                                  "AWAIT",   "BYTE",        "COMPLETION",   "COMPUTE",
                                  "DIVIDES", "EACH",        "FOR",          "FROM",
                                  "IF",      "IN",          "IS",           "MESSAGE",
                                  "MOD",     "MULTICAST",   "OTHER",        "OTHERWISE",
                                  "RECEIVE", "REDUCE",      "REPETITION",   "SEND",
                                  "SUCH",    "SYNCHRONIZE", "TASK",         "THAT",
                                  "THEN",    "TO",          "UNSUSPECTING", "USING",
                                  "TAG",     "MICROSECOND"};
    for (const char* k : words)
      if (w == k) return true;
    return false;
  }

  std::vector<Token> t_;
  std::size_t p_ = 0;
  std::map<std::string, int> counts_;
};

std::map<std::string, int> parse(const std::string& program) {
  return Parser(lex(program)).program();
}

// ------------------------------------------------------------- the parser

TEST(ConceptualGrammar, ParserAcceptsTheUserGuidesForms) {
  const auto c = parse(
      "Require language version \"1.5\".\n"
      "# a comment\n"
      "Task 0 sends a 4 byte message to task 1 then\n"
      "tasks src such that src is odd send a 8 byte message to unsuspecting task (src+1) mod "
      "num_tasks then\n"
      "for 3 repetitions { all tasks synchronize then task 1 receives a 4 byte message from "
      "task 0 } then\n"
      "for each r in {0, ..., num_tasks-1} all tasks reduce 2 doublewords to task r then\n"
      "all tasks t computes for 10 microseconds then all tasks await completion");
  EXPECT_EQ(c.at("SEND"), 2);
  EXPECT_EQ(c.at("RECEIVE"), 1);
  EXPECT_EQ(c.at("FOR REPETITIONS"), 1);
  EXPECT_EQ(c.at("FOR EACH"), 1);
  EXPECT_EQ(c.at("REDUCE"), 1);
  EXPECT_EQ(c.at("COMPUTE"), 1);
}

TEST(ConceptualGrammar, ParserRejectsWhatTheGrammarDoesNot) {
  EXPECT_THROW(parse("task 0 sends to task 1"), std::runtime_error);                // no message
  EXPECT_THROW(parse("task 0 sends a 4 byte message task 1"), std::runtime_error);  // no TO
  EXPECT_THROW(parse("all tasks synchronize all tasks synchronize"), std::runtime_error);  // THEN
  EXPECT_THROW(parse("for 3 repetitions { all tasks synchronize"), std::runtime_error);
  EXPECT_THROW(parse("tasks t such that t > 1 reduce a message to task 0"), std::runtime_error);
  EXPECT_THROW(parse("all tasks computes for 3"), std::runtime_error);  // no unit
}

// --------------------------------------------------- emitted programs parse

Trace load_data(const std::string& name) {
  return load_trace(std::string(TRACEFOLD_SOURCE_DIR) + "/tests/data/" + name);
}

TEST(ConceptualGrammar, RecordedRingParses) {
  const Trace t = load_data("compact-v4/ring.trace");
  const std::string prog = emit_conceptual(t);
  std::map<std::string, int> c;
  ASSERT_NO_THROW(c = parse(prog)) << prog;
  EXPECT_EQ(c["FOR REPETITIONS"], 2) << prog;  // the ring's two nested loops
  EXPECT_GE(c["ASYNC RECEIVE"], 1) << prog;
  EXPECT_GE(c["AWAIT COMPLETION"], 1) << prog;
}

TEST(ConceptualGrammar, StencilParses) {
  testing::Stencil s;
  s.side = 4;
  s.steps = 6;
  s.kind = testing::StencilKind::kPeriodicWorld;
  const Trace t = reduce_traces(s.fold_all());
  const std::string prog = emit_conceptual(t);
  std::map<std::string, int> c;
  ASSERT_NO_THROW(c = parse(prog)) << prog;
  EXPECT_EQ(c["FOR REPETITIONS"], 1) << prog;
  EXPECT_GE(c["ASYNC SEND"], 4) << prog;  // four directions, several groups
  EXPECT_EQ(c["REDUCE"], 1) << prog;      // the Allreduce
}

// Figure 4.4's program after alignment, with the collectives Table 4.1
// substitutes and a wildcard receive resolved first.
TEST(ConceptualGrammar, CollectivesAndPassesParse) {
  using testing::make_event;
  const int32_t n = 4;
  CommTable comms;
  comms.define_world(n);
  const SiteTable sites = testing::make_sites(12);
  Trace acc;
  for (int32_t r = 0; r < n; ++r) {
    Folder f(r);
    auto add = [&](Event e) {
      encode_relative(e, r, comms);
      f.append(e);
    };
    for (int step = 0; step < 3; ++step) {
      add(make_event("MPI_Bcast", 0, {{"count", 4}, {"dsize", 8}, {"root", 0}}));
      add(make_event("MPI_Allgather", 1,
                     {{"count", 2}, {"dsize", 4}, {"rcount", 2}, {"rdsize", 4}}));
      Event rs = make_event("MPI_Reduce_scatter", 2, {{"dsize", 8}});
      rs.set_list(FieldTable::intern("counts", FieldKind::kList), {1, 2, 3, 4});
      add(rs);
      // The same Barrier from two lines.
      add(make_event("MPI_Barrier", r == 0 ? 3 : 4));
    }
    if (r == 0)
      add(make_event("MPI_Recv", 5, {{"peer", kAny}, {"tag", 1}, {"count", 1}, {"dsize", 8}}));
    if (r == 2)
      add(make_event("MPI_Send", 6, {{"peer", 0}, {"tag", 1}, {"count", 1}, {"dsize", 8}}));
    Trace t = f.finish(n, sites, comms);
    acc = r == 0 ? std::move(t) : merge_traces(acc, t);
  }
  EXPECT_THROW(emit_conceptual(acc), ConceptualError);  // wildcards and split barriers
  resolve_wildcards(acc);
  align_collectives(acc);
  const std::string prog = emit_conceptual(acc);
  std::map<std::string, int> c;
  ASSERT_NO_THROW(c = parse(prog)) << prog;
  EXPECT_EQ(c["SYNCHRONIZE"], 1) << prog;  // one Barrier statement
  EXPECT_EQ(c["MULTICAST"], 2) << prog;    // Bcast, Allgather's second half
  EXPECT_EQ(c["REDUCE"], 2) << prog;       // Allgather's first half, Reduce_scatter
  EXPECT_EQ(c["FOR EACH"], 1) << prog;     // Reduce_scatter: one REDUCE per root
  EXPECT_EQ(c["RECEIVE"], 1) << prog;      // rank 0's wildcard receive, resolved
  EXPECT_NE(prog.find("RECEIVES A 8 BYTE MESSAGE USING TAG 1 FROM TASK (t + 2) mod num_tasks"),
            std::string::npos)
      << prog;
}

TEST(ConceptualGrammar, UnsupportedOperationNamesTheNode) {
  Trace t = load_data("compact-v4/ring.trace");
  // A communicator other than the world is outside the subset.
  for (auto& [f, el] : t.nodes[1].fields)
    if (f == FieldTable::comm())
      for (auto& e : el.entries()) e.values = ValueSeq::repeated(5, e.values.size());
  try {
    emit_conceptual(t);
    FAIL() << "no error";
  } catch (const ConceptualError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("node #1 (MPI_Irecv at ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace tracefold
