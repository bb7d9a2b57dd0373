// Expressions of parametric benchmarks (src/benchgen/parametric.hpp): the
// models as C, their values, and the predicates on grid coordinates.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>

#include "parametric.hpp"
#include "tracefold/extrap/topology.hpp"
#include "tracefold/trace_io.hpp"

using namespace tracefold::benchgen::param;

namespace {

// Evaluates the predicates cells_predicate writes (x1..x3, S1..S3,
// integers, -, ==, <, >, &&, ||, parentheses) at one point: the tests
// check what a predicate means, not only how it is spelled.
struct Eval {
  const std::string& s;
  long x[3], S[3];
  std::size_t i = 0;
  void ws() {
    while (i < s.size() && s[i] == ' ') ++i;
  }
  bool eat(const char* t) {
    ws();
    if (s.compare(i, std::strlen(t), t) != 0) return false;
    i += std::strlen(t);
    return true;
  }
  long atom() {
    ws();
    if (eat("(")) {
      const long v = disj();
      EXPECT_TRUE(eat(")")) << s;
      return v;
    }
    if (eat("x")) return x[s[i++] - '1'];
    if (eat("S")) return S[s[i++] - '1'];
    long v = 0;
    EXPECT_TRUE(i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) << s << " at " << i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
      v = v * 10 + (s[i++] - '0');
    return v;
  }
  long sum() {
    long v = atom();
    while (eat("-")) v -= atom();
    return v;
  }
  long cmp() {
    const long a = sum();
    if (eat("==")) return a == sum();
    if (eat("<")) return a < sum();
    if (eat(">")) return a > sum();
    return a;
  }
  long conj() {
    long v = cmp();
    while (eat("&&")) v = cmp() && v;
    return v;
  }
  long disj() {
    long v = conj();
    while (eat("||")) v = conj() || v;
    return v;
  }
};

bool holds(const std::string& pred, const std::vector<long>& sizes, long rank) {
  Eval e{pred, {0, 0, 0}, {1, 1, 1}};
  long r = rank;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    e.S[d] = sizes[d];
    e.x[d] = r % sizes[d];
    r /= sizes[d];
  }
  const long v = e.disj();
  EXPECT_EQ(e.i, pred.size()) << "unread text in " << pred;
  return v != 0;
}

}  // namespace

TEST(BenchParametric, FormulasBecomeExactC) {
  EXPECT_EQ(to_c(parse_formula("24")), "24L");
  EXPECT_EQ(to_c(parse_formula("0")), "0");
  EXPECT_EQ(to_c(parse_formula("S1*S2 - S1")), "(S1*S2 - S1)");
  EXPECT_EQ(to_c(parse_formula("-1 + S1")), "(-1L + S1)");
  // A fractional coefficient: one division, exact where the model is integral.
  EXPECT_EQ(to_c(parse_formula("3/2*S1 + 1")), "((3*S1 + 2L) / 2)");
  EXPECT_EQ(to_c(parse_formula("4608/S1")), "(4608L / (S1))");
  EXPECT_EQ(to_c(parse_formula("96/(S1*S2)")), "(96L / (S1*S2))");
  EXPECT_THROW(parse_formula("S1 +"), std::invalid_argument);
  EXPECT_THROW(parse_formula("S4"), std::invalid_argument);
  EXPECT_THROW(parse_formula("2*x"), std::invalid_argument);
}

TEST(BenchParametric, FormulasEvaluateAsFitted) {
  EXPECT_EQ(evaluate(parse_formula("S1*S2 - S1"), {4, 3}, 0), 8);
  EXPECT_EQ(evaluate(parse_formula("3/2*S1 + 1"), {4, 4}, 0), 7);
  EXPECT_EQ(evaluate(parse_formula("3/2*S1 + 1"), {3, 3}, 0), std::nullopt);  // 5.5
  EXPECT_EQ(evaluate(parse_formula("4608/S1"), {6, 6}, 0), 768);
  EXPECT_EQ(evaluate(parse_formula("96/(S1*S2)"), {4, 3}, 0), 8);
  EXPECT_EQ(evaluate(parse_formula("96/(S1*S2)"), {5, 5}, 0), std::nullopt);
}

TEST(BenchParametric, PeersByCoordinateOffsetWrapAround) {
  Expr north;
  north.kind = Expr::Kind::kPeerAt;
  north.offset = {0, -1, 0};
  EXPECT_EQ(to_c(north), "peer_at(0, -1, 0)");
  EXPECT_EQ(evaluate(north, {4, 4}, 5), 1);
  EXPECT_EQ(evaluate(north, {4, 4}, 1), 13);  // wraps to the last row
  EXPECT_EQ(evaluate(north, {5, 3}, 2), 12);
  Expr east = north;
  east.offset = {1, 0, 0};
  EXPECT_EQ(evaluate(east, {4, 4}, 7), 4);  // end of a row: its first rank
  Expr rel;
  rel.kind = Expr::Kind::kPeerRel;
  rel.terms = parse_formula("-1 + S1").terms;
  EXPECT_EQ(to_c(rel), "peer_rel((-1L + S1))");
  EXPECT_EQ(evaluate(rel, {4, 4}, 14), 1);  // (14 + 3) mod 16
  EXPECT_EQ(to_c(Expr::constant(tracefold::kNull)), "TF_NULL");
}

TEST(BenchParametric, CellPredicatesSpelled) {
  EXPECT_EQ(cells_predicate({0}, 2), "x1 == 0 && x2 == 0");
  EXPECT_EQ(cells_predicate({4}, 2), "x1 > 0 && x1 < S1 - 1 && x2 > 0 && x2 < S2 - 1");
  EXPECT_EQ(cells_predicate({0, 2, 6, 8}, 2),
            "(x1 == 0 || x1 == S1 - 1) && (x2 == 0 || x2 == S2 - 1)");
  EXPECT_EQ(cells_predicate({0, 1, 2, 3, 4, 5, 6, 7, 8}, 2), "1");
  EXPECT_EQ(cells_predicate({}, 2), "0");
  EXPECT_EQ(cells_predicate({1, 2}, 1), "x1 > 0");
  EXPECT_EQ(cells_predicate({3, 4, 5}, 2), "x2 > 0 && x2 < S2 - 1");
}

// Every set of cells of a 2-D grid, at sizes with and without an interior:
// the predicate holds exactly on the ranks of those cells.
TEST(BenchParametric, CellPredicatesMeanTheirCells) {
  for (unsigned set = 0; set < 512; set += 7) {
    std::vector<int> cells;
    for (int c = 0; c < 9; ++c)
      if (set >> c & 1) cells.push_back(c);
    const std::string p = cells_predicate(cells, 2);
    for (const auto& sizes : std::vector<std::vector<long>>{{2, 2}, {3, 3}, {5, 4}, {2, 6}}) {
      const tracefold::extrap::Topology topo{{sizes[0], sizes[1]}, {false, false}};
      for (long r = 0; r < sizes[0] * sizes[1]; ++r) {
        const bool want = set >> tracefold::extrap::cell_of(topo, r) & 1;
        ASSERT_EQ(holds(p, sizes, r), want)
            << p << " at rank " << r << " of " << sizes[0] << "x" << sizes[1];
      }
    }
  }
  // Three dimensions: the interior box alone.
  const std::string p = cells_predicate({13}, 3);
  const tracefold::extrap::Topology topo{{3, 4, 3}, {false, false, false}};
  for (long r = 0; r < 36; ++r)
    EXPECT_EQ(holds(p, {3, 4, 3}, r), tracefold::extrap::cell_of(topo, r) == 13) << r;
}

TEST(BenchParametric, TooFewInputsRefused) {
  std::vector<tracefold::bench::TraceAtScale> one(1);
  one[0].name = "a.tf";
  EXPECT_THROW(tracefold::bench::generate_parametric_c(one), tracefold::bench::BenchError);
}

namespace {

// A ring program's trace at `p` ranks in the text form: every rank sends
// `count` items to its right neighbour and receives from its left one.
tracefold::bench::TraceAtScale ring(int p, int count, const std::string& send_timing = "") {
  const std::string n = std::to_string(p), c = std::to_string(count);
  const std::string text = "tracefold-trace 2\nworld " + n +
                           "\nlossy -\nsites 2\nsite 0 app+0x10\nsite 1 app+0x20\ncomms 1\n"
                           "comm 0 members *\nnodes 2\n"
                           "node 0 MPI_Isend site=0 ranks=*\n  count 1 @ *\n  field peer 1 @ *\n"
                           "  field tag 7 @ *\n  field count " +
                           c + " @ *\n  field dtype 9 @ *\n  field dsize 8 @ *\n" + send_timing +
                           "node 1 MPI_Recv site=1 ranks=*\n  count 1 @ *\n  field peer " +
                           std::to_string(p - 1) + " @ *\n  field tag 7 @ *\n  field count " + c +
                           " @ *\n  field dtype 9 @ *\n  field dsize 8 @ *\nend\n";
  return {"ring-" + n + ".tf", tracefold::parse_trace(text, "ring-" + n + ".tf")};
}

}  // namespace

// A whole model: peers become grid offsets, a strong-scaling count a share.
TEST(BenchParametric, RingModelWritten) {
  const std::string c =
      tracefold::bench::generate_parametric_c({ring(3, 20), ring(4, 15), ring(5, 12)});
  EXPECT_NE(c.find("peer_at(1, 0, 0)"), std::string::npos);
  EXPECT_NE(c.find("peer_at(-1, 0, 0)"), std::string::npos);
  EXPECT_NE(c.find("(60L / (S1))"), std::string::npos);
  EXPECT_NE(c.find("MPI_Recv(rbuf"), std::string::npos);
}

// Values no model explains stop generation, naming the node and field.
TEST(BenchParametric, InconsistentValuesNamed) {
  try {
    tracefold::bench::generate_parametric_c({ring(3, 5), ring(4, 7), ring(5, 20)});
    FAIL() << "generated from values no model fits";
  } catch (const tracefold::bench::BenchError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node #0 (MPI_Isend at "), std::string::npos) << what;
    EXPECT_NE(what.find("field count"), std::string::npos) << what;
    EXPECT_NE(what.find("5 at 3, 7 at 4, 20 at 5"), std::string::npos) << what;
  }
}

// The send's time depends on what came before it: 1 ms of work before the
// first send (after the start), 1 us between the later ones. The overall
// mean (100.9 us) fits neither; each predecessor gets its own case, and
// every call records itself as the last one.
TEST(BenchParametric, TimeByPredecessor) {
  const std::string timing =
      "  time pred=MPI_Recv/1\n    compute n=9 sum=9000 min=1000@0 max=1000@0 "
      "bins=9:9:1000:1000:9000\n    comm n=9 sum=90 min=10@0 max=10@0 bins=3:9:10:10:90\n"
      "  time pred=start\n    compute n=1 sum=1000000 min=1000000@0 max=1000000@0 "
      "bins=19:1:1000000:1000000:1000000\n    comm n=1 sum=10 min=10@0 max=10@0 "
      "bins=3:1:10:10:10\n";
  const std::string c = tracefold::bench::generate_parametric_c(
      {ring(3, 20, timing), ring(4, 15, timing), ring(5, 12, timing)});
  EXPECT_NE(c.find("enum after_call { AFTER_START, AFTER_Isend_n0, AFTER_Recv_n1, };"),
            std::string::npos)
      << c;
  EXPECT_NE(
      c.find("spin_ns(after == AFTER_Recv_n1 ? 1000 : after == AFTER_START ? 1e+06 : 100900);"),
      std::string::npos)
      << c;
  EXPECT_NE(c.find("after = AFTER_Isend_n0;"), std::string::npos) << c;
  EXPECT_NE(c.find("after = AFTER_Recv_n1;"), std::string::npos) << c;
  // Without the predecessors' blocks, one time for every send.
  const std::string plain =
      tracefold::bench::generate_parametric_c({ring(3, 20), ring(4, 15), ring(5, 12)});
  EXPECT_EQ(plain.find("after_call"), std::string::npos);
}
