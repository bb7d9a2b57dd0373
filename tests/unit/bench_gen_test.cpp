// The C benchmark generator on traces built in memory: the folded
// structure stays folded, and what it cannot express stops it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "tracefold/bench.hpp"

using namespace tracefold;

namespace {

Elastic all(int64_t v, int32_t world, uint64_t n = 1) {
  Elastic e;
  e.entries().push_back({ValueSeq::repeated(v, n), Ranklist::range(0, world)});
  return e;
}

Node node(const char* op, SiteId site, int32_t world, uint64_t runs = 1) {
  Node n;
  n.key = {*OpTable::find(op), site};
  n.ranks = Ranklist::range(0, world);
  n.count = all(1, world, runs);
  return n;
}

void field(Node& n, const char* name, int64_t v, int32_t world, uint64_t runs) {
  n.fields.emplace_back(FieldTable::intern(name, FieldKind::kScalar), all(v, world, runs));
  std::sort(n.fields.begin(), n.fields.end(), [](const auto& a, const auto& b) {
    return FieldTable::print_before(a.first, b.first);
  });
}

// A ring: `steps` steps of Send to the right and Recv from the left, on
// `world` ranks; peers are stored as offsets, as the recorder does.
Trace ring(int32_t world, uint64_t steps = 100) {
  Trace t;
  t.world_size = world;
  t.comms.define_world(world);
  for (uint64_t s = 0; s < 4; ++s) t.sites.intern(CallSite{{Frame{"app", 0x100 * (s + 1)}}});
  t.nodes.push_back(node("MPI_Init", 0, world));
  Node send = node("MPI_Send", 1, world, steps);
  send.loops.push_back({all(2, world), all(static_cast<int64_t>(steps), world)});
  Node recv = node("MPI_Recv", 2, world, steps);
  for (Node* n : {&send, &recv}) {
    field(*n, "count", 8, world, steps);
    field(*n, "dtype", 14, world, steps);
    field(*n, "tag", 7, world, steps);
    field(*n, "comm", 0, world, steps);
  }
  field(send, "peer", 1, world, steps);
  field(recv, "peer", world - 1, world, steps);
  t.nodes.push_back(send);
  t.nodes.push_back(recv);
  t.nodes.push_back(node("MPI_Finalize", 3, world));
  return t;
}

}  // namespace

TEST(BenchGen, LoopsAndRelativePeersStayFolded) {
  const std::string c = bench::generate_c(ring(4));
  EXPECT_NE(c.find("const long i1_end = 100;"), std::string::npos) << c;
  EXPECT_NE(c.find("MPI_Send(send_buf, 8, MPI_DOUBLE, (rank + 1) % size, 7, MPI_COMM_WORLD);"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find("(rank + size - 1) % size"), std::string::npos) << c;
  // The program does not grow with the ranks: only the rank count differs.
  const std::string big = bench::generate_c(ring(1024));
  EXPECT_LT(big.size(), c.size() + 16);
  EXPECT_NE(big.find("if (size != 1024)"), std::string::npos);
}

TEST(BenchGen, RankGroupsBecomePredicates) {
  Trace t = ring(8);
  // A call only the odd ranks make, before the loop.
  Node odd = node("MPI_Pcontrol", 3, 8);
  odd.ranks = Ranklist::parse("<1 1 4 2>");
  odd.count.entries()[0].ranks = odd.ranks;
  t.nodes.insert(t.nodes.begin() + 1, odd);
  const std::string c = bench::generate_c(t);
  EXPECT_NE(c.find("if (rank % 2 == 1) {"), std::string::npos) << c;
}

TEST(BenchGen, RefusesWhatItCannotExpress) {
  Trace t = ring(4);
  // A constructor whose new type the trace does not name cannot be
  // referred to by the calls that use it.
  Node vec = node("MPI_Type_vector", 3, 4);
  t.nodes.insert(t.nodes.begin() + 1, vec);
  try {
    bench::generate_c(t);
    FAIL() << "generated a program with an unnamed derived datatype";
  } catch (const bench::BenchError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("node #1 (MPI_Type_vector at ", 0), 0u) << e.what();
  }
  // Nothing is written when generation fails.
  const auto dir = std::filesystem::temp_directory_path() / "tracefold-bench-gen-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  EXPECT_THROW(bench::write_c(t, {}, (dir / "b.c").string()), bench::BenchError);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  bench::write_c(ring(4), {}, (dir / "b.c").string());
  EXPECT_TRUE(std::filesystem::exists(dir / "b.c"));
  std::filesystem::remove_all(dir);
}

// A trace lossy without histograms (a count model's, a filter's) is
// refused too, and the refusal says what --lossy-ok would do with it.
TEST(BenchGen, RefusesLossyTraces) {
  Trace t = ring(4);
  t.lossy = "statistical count model (10.00 % of events modelled)";
  try {
    bench::generate_c(t);
    FAIL() << "generated from a lossy trace without --lossy-ok";
  } catch (const bench::BenchError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("(statistical count model (10.00 % of events modelled)): the benchmark "
                     "needs exact values (--lossy-ok generates it from the values the trace "
                     "holds"),
              std::string::npos)
        << m;
    EXPECT_EQ(m.find("histogram"), std::string::npos) << m;
  }
}

// A vector type made, committed, sent and freed: the program makes it with
// the recorded count and block length, and the send uses it by its id.
TEST(BenchGen, DerivedDatatypesAreMadeAndUsed) {
  Trace t = ring(4);
  Node vec = node("MPI_Type_vector", 4, 4);
  field(vec, "count", 3, 4, 1);
  field(vec, "blocklen", 2, 4, 1);
  field(vec, "dtype", 14, 4, 1);
  field(vec, "newtype", 1000, 4, 1);
  field(vec, "newsize", 48, 4, 1);
  Node commit = node("MPI_Type_commit", 5, 4);
  field(commit, "dtype", 1000, 4, 1);
  Node free = node("MPI_Type_free", 6, 4);
  field(free, "dtype", 1000, 4, 1);
  for (Node* n : {&t.nodes[1], &t.nodes[2]}) {
    for (auto& [f, e] : n->fields)
      if (FieldTable::name(f) == "dtype") e = all(1000, 4, 100);
  }
  t.nodes.insert(t.nodes.begin() + 1, commit);
  t.nodes.insert(t.nodes.begin() + 1, vec);
  t.nodes.insert(t.nodes.end() - 1, free);
  const std::string c = bench::generate_c(t);
  EXPECT_NE(c.find("MPI_Type_vector(3, 2, 2, MPI_DOUBLE, &nt);"), std::string::npos) << c;
  EXPECT_NE(c.find("type_made(1000, nt);"), std::string::npos) << c;
  EXPECT_NE(c.find("type_commit(1000);"), std::string::npos) << c;
  EXPECT_NE(c.find("type_free(1000);"), std::string::npos) << c;
  EXPECT_NE(c.find("MPI_Send(send_buf, 8, derived_type(1000),"), std::string::npos) << c;
  EXPECT_NE(c.find("#define TYPE_IDS 1\n"), std::string::npos) << c;
}

// A reduction with a user-defined operation (id 100 up) gets an operation
// of the program's own, made on first use.
TEST(BenchGen, UserOperationsAreCreated) {
  Trace t = ring(4);
  Node red = node("MPI_Allreduce", 4, 4);
  field(red, "count", 1, 4, 1);
  field(red, "dtype", 7, 4, 1);
  field(red, "redop", 101, 4, 1);
  t.nodes.insert(t.nodes.end() - 1, red);
  const std::string c = bench::generate_c(t);
  EXPECT_NE(c.find("MPI_INT, user_op(101), MPI_COMM_WORLD);"), std::string::npos) << c;
  EXPECT_NE(c.find("#define USER_OPS 2\n"), std::string::npos) << c;
  EXPECT_NE(c.find("PMPI_Op_create(user_op_fn, 1,"), std::string::npos) << c;
}

// A 4-rank ring whose send counts are the histogram of `values`, as a
// lossy fold leaves them.
Trace lossy_ring_counts(ValueSeq values) {
  Trace t = ring(4);
  t.lossy = "histogram threshold=1";
  values.make_histogram();
  for (auto& [f, e] : t.nodes[1].fields)
    if (FieldTable::name(f) == "count") {
      e = Elastic();
      e.entries().push_back({values, Ranklist::range(0, 4)});
    }
  return t;
}

// A lossy trace generates only when asked; its histogram becomes a table
// holding the recorded values, in an order fixed by the seed.
TEST(BenchGen, LossyTracesNeedLossyOkAndDrawReproducibly) {
  ValueSeq v;
  for (int k = 0; k < 100; ++k) v.push_back(k % 7 + 1);
  Trace t = lossy_ring_counts(v);
  try {
    bench::generate_c(t);
    FAIL() << "generated from a lossy trace without --lossy-ok";
  } catch (const bench::BenchError& e) {
    EXPECT_NE(std::string(e.what()).find("--lossy-ok draws them from the histograms"),
              std::string::npos)
        << e.what();
  }
  bench::Options o;
  o.lossy_ok = true;
  const std::string a = bench::generate_c(t, o), b = bench::generate_c(t, o);
  EXPECT_EQ(a, b);
  const auto at = a.find("MPI_Send_site1_count[100] = {");
  ASSERT_NE(at, std::string::npos) << a;
  // The table holds each value as often as the histogram says.
  const std::string table = a.substr(at, a.find('}', at) - at);
  for (int v = 1; v <= 7; ++v) {
    std::size_t n = 0;
    for (std::size_t p = table.find('{'); p != std::string::npos;
         p = table.find_first_of(",{", p + 1)) {
      std::size_t q = table.find_first_not_of(" \n", p + 1);
      if (std::atoi(table.c_str() + q) == v) ++n;
    }
    EXPECT_EQ(n, v <= 2 ? 15u : 14u) << v << " in " << table;
  }
  o.seed = 2;
  EXPECT_NE(bench::generate_c(t, o), a);
}

// A histogram of more than 65,536 values (a modelled poll loop's probes
// under an MPI whose waiting ranks spin) becomes a table of about 65,536
// values in the same proportions, read cyclically; a rare value keeps an
// entry.
TEST(BenchGen, LargeHistogramsBecomeScaledTables) {
  ValueSeq v;
  for (int k = 0; k < 300000; ++k) v.push_back(k % 3 ? 1 : 2);
  v.push_back(9);  // once in 300,001
  Trace t = lossy_ring_counts(v);
  bench::Options o;
  o.lossy_ok = true;
  const std::string a = bench::generate_c(t, o);
  const auto at = a.find("MPI_Send_site1_count[");
  ASSERT_NE(at, std::string::npos) << a.substr(0, 2000);
  const std::size_t size = std::strtoul(a.c_str() + at + 21, nullptr, 10);
  EXPECT_GE(size, 65536u);
  EXPECT_LE(size, 65538u);
  const std::string table = a.substr(at, a.find('}', at) - at);
  std::size_t counts[10] = {};
  for (std::size_t p = table.find('{'); p != std::string::npos;
       p = table.find_first_of(",{", p + 1)) {
    const std::size_t q = table.find_first_not_of(" \n", p + 1);
    const int v = std::atoi(table.c_str() + q);
    if (v >= 0 && v < 10) ++counts[v];
  }
  EXPECT_EQ(counts[1] + counts[2] + counts[9], size);
  EXPECT_NEAR(double(counts[1]) / double(counts[2]), 2.0, 0.01);
  EXPECT_EQ(counts[9], 1u);
  EXPECT_NE(a.find(" % " + std::to_string(size) + "]"), std::string::npos);
}

// MPI_Comm_create: the group comes from the members the trace records for
// the new communicator (each even and odd half a group of its own), and
// the communicator is then used by name.
TEST(BenchGen, CommCreateUsesTheRecordedMembers) {
  Trace t = ring(4);
  const int64_t id = 1234567890;
  t.comms.define(id, CommGroup{{0, 2}});
  t.comms.define(id, CommGroup{{1, 3}});
  Node create = node("MPI_Comm_create", 4, 4);
  field(create, "newcomm", id, 4, 1);
  Node bar = node("MPI_Barrier", 5, 4);
  field(bar, "comm", id, 4, 1);
  t.nodes.insert(t.nodes.end() - 1, create);
  t.nodes.insert(t.nodes.end() - 1, bar);
  const std::string c = bench::generate_c(t);
  EXPECT_NE(c.find("MPI_Comm_create_site4_groups[] = {2, 2, 0, 2, 2, 1, 3};"), std::string::npos)
      << c;
  EXPECT_NE(c.find("comm_create(MPI_COMM_WORLD, MPI_Comm_create_site4_groups, 0, 0, "
                   "&comm_create_comm1234567890);"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find("MPI_Barrier(comm_create_comm1234567890);"), std::string::npos) << c;
}

namespace {

// The numbers between `{` and `}` after `name` in the C text.
std::vector<int64_t> numbers_after(const std::string& c, const std::string& name) {
  std::vector<int64_t> out;
  auto at = c.find(name);
  if (at == std::string::npos) return out;
  at = c.find('{', at);
  const auto end = c.find("};", at);
  for (std::size_t p = at; p < end;) {
    if (std::isdigit(static_cast<unsigned char>(c[p]))) {
      std::size_t used = 0;
      out.push_back(std::stoll(c.substr(p), &used));
      p += used;
    } else {
      ++p;
    }
  }
  return out;
}

}  // namespace

// A long irregular value sequence (a polling loop's: a tag that changes now
// and then over 200,000 calls) is written as the trace's runs, not value
// by value: the file stays small, and reading the runs as the generated
// run_value() does gives back every value.
TEST(BenchGen, LongIrregularSequencesAreWrittenAsRuns) {
  const uint64_t steps = 200000;
  Trace t = ring(4, steps);
  ValueSeq tags;
  for (uint64_t k = 0; k < steps; ++k) tags.push_back(k % 9973 == 0 || k % 31337 < 3 ? 101 : 100);
  for (std::size_t i : {1, 2})
    for (auto& [id, e] : t.nodes[i].fields)
      if (FieldTable::name(id) == std::string("tag")) e.entries()[0].values = tags;
  const std::string c = bench::generate_c(t);
  EXPECT_LT(c.size(), 40000u);
  EXPECT_NE(c.find("tag_of(run_value(MPI_Send_site1_tag_runs, "), std::string::npos) << c;
  const std::vector<int64_t> values = numbers_after(c, "MPI_Send_site1_tag[");
  const std::vector<int64_t> runs = numbers_after(c, "MPI_Send_site1_tag_runs[");
  ASSERT_FALSE(runs.empty());
  ASSERT_EQ(runs.size() % 3, 0u);
  // run_value(): the first run whose end lies past k, then its pattern.
  const std::vector<int64_t> want = tags.to_vector();
  for (uint64_t k = 0; k < steps; ++k) {
    std::size_t j = 0;
    while (runs[3 * j] <= static_cast<int64_t>(k)) ++j;
    const int64_t start = j ? runs[3 * j - 3] : 0;
    const int64_t v = values[static_cast<std::size_t>(
        runs[3 * j + 1] + (static_cast<int64_t>(k) - start) % runs[3 * j + 2])];
    ASSERT_EQ(v, want[k]) << "value " << k;
  }
  EXPECT_EQ(runs[runs.size() - 3], static_cast<int64_t>(steps));

  // Runs that are still too many numbers stop generation, naming the node.
  ValueSeq distinct;
  for (uint64_t k = 0; k < steps; ++k) distinct.push_back(static_cast<int64_t>(k));
  for (std::size_t i : {1, 2})
    for (auto& [id, e] : t.nodes[i].fields)
      if (FieldTable::name(id) == std::string("tag")) e.entries()[0].values = distinct;
  try {
    bench::generate_c(t);
    FAIL() << "wrote 200,000 distinct tags";
  } catch (const bench::BenchError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("node #1 (MPI_Send at ", 0), 0u) << what;
    EXPECT_NE(what.find("): tag has runs of more than 65536"), std::string::npos) << what;
  }
}
