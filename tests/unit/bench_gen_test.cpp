// The C benchmark generator on traces built in memory: the folded
// structure stays folded, and what it cannot express stops it.
#include <gtest/gtest.h>

#include <algorithm>
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

// A ring: 100 steps of Send to the right and Recv from the left, on
// `world` ranks; peers are stored as offsets, as the recorder does.
Trace ring(int32_t world) {
  Trace t;
  t.world_size = world;
  t.comms.define_world(world);
  for (uint64_t s = 0; s < 4; ++s) t.sites.intern(CallSite{{Frame{"app", 0x100 * (s + 1)}}});
  t.nodes.push_back(node("MPI_Init", 0, world));
  Node send = node("MPI_Send", 1, world, 100);
  send.loops.push_back({all(2, world), all(100, world)});
  Node recv = node("MPI_Recv", 2, world, 100);
  for (Node* n : {&send, &recv}) {
    field(*n, "count", 8, world, 100);
    field(*n, "dtype", 14, world, 100);
    field(*n, "tag", 7, world, 100);
    field(*n, "comm", 0, world, 100);
  }
  field(send, "peer", 1, world, 100);
  field(recv, "peer", world - 1, world, 100);
  t.nodes.push_back(send);
  t.nodes.push_back(recv);
  t.nodes.push_back(node("MPI_Finalize", 3, world));
  return t;
}

}  // namespace

TEST(BenchGen, LoopsAndRelativePeersStayFolded) {
  const std::string c = bench::generate_c(ring(4));
  EXPECT_NE(c.find("const long i1_end = 100;"), std::string::npos) << c;
  EXPECT_NE(
      c.find("MPI_Send(MPI_Send_site1_sbuf, 8, MPI_DOUBLE, (rank + 1) % size, 7, MPI_COMM_WORLD);"),
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
  Node vec = node("MPI_Type_vector", 3, 4);
  t.nodes.insert(t.nodes.begin() + 1, vec);
  try {
    bench::generate_c(t);
    FAIL() << "generated a program with a derived datatype";
  } catch (const bench::BenchError& e) {
    EXPECT_NE(std::string(e.what()).find("node 1 (MPI_Type_vector)"), std::string::npos)
        << e.what();
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

TEST(BenchGen, RefusesLossyTraces) {
  Trace t = ring(4);
  t.lossy = "hist";
  EXPECT_THROW(bench::generate_c(t), bench::BenchError);
}
