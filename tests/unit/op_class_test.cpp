// The shared operation classification (op_class.hpp, from ops.def).
#include "tracefold/op_class.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

namespace tracefold {
namespace {

const OpTraits& of(const char* name) {
  auto id = OpTable::find(name);
  if (!id) throw std::invalid_argument(std::string("unknown op ") + name);
  return op_traits(*id);
}

TEST(OpClass, EveryKnownOperationIsClassified) {
  ASSERT_GT(OpTable::size(), 180u);
  for (std::size_t i = 0; i < OpTable::size(); ++i) {
    const auto id = static_cast<OpId>(i);
    const std::string& n = OpTable::name(id);
    const OpTraits& t = op_traits(id);
    SCOPED_TRACE(n);
    // Only the three markers are markers; every MPI call has a real class.
    EXPECT_EQ(t.family == OpFamily::kMarker, n.rfind("MPI_", 0) != 0);
    EXPECT_EQ(t.category == OpCategory::kMarker, t.family == OpFamily::kMarker);
    EXPECT_EQ(t.category == OpCategory::kCollective,
              t.collective() && t.category != OpCategory::kCommManagement &&
                  t.category != OpCategory::kTopology);
    EXPECT_NE(to_string(t.category), "");
    EXPECT_NE(to_string(t.shape), "");
  }
  EXPECT_THROW(op_traits(static_cast<OpId>(OpTable::size())), std::out_of_range);
}

TEST(OpClass, CollectiveShapes) {
  const std::pair<const char*, CollectiveShape> cases[] = {
      {"MPI_Bcast", CollectiveShape::kOneToN},
      {"MPI_Scatter", CollectiveShape::kOneToN},
      {"MPI_Iscatterv", CollectiveShape::kOneToN},
      {"MPI_Reduce", CollectiveShape::kNToOne},
      {"MPI_Gather", CollectiveShape::kNToOne},
      {"MPI_Igatherv", CollectiveShape::kNToOne},
      {"MPI_Allreduce", CollectiveShape::kNToN},
      {"MPI_Alltoallv", CollectiveShape::kNToN},
      {"MPI_Allgather", CollectiveShape::kNToN},
      {"MPI_Reduce_scatter", CollectiveShape::kNToN},
      {"MPI_Comm_split", CollectiveShape::kNToN},
      {"MPI_Barrier", CollectiveShape::kBarrier},
      {"MPI_Ibarrier", CollectiveShape::kBarrier},
      {"MPI_Scan", CollectiveShape::kScan},
      {"MPI_Iexscan", CollectiveShape::kScan},
      {"MPI_Neighbor_alltoall", CollectiveShape::kNeighbor},
      {"MPI_Send", CollectiveShape::kNone},
      {"MPI_Waitall", CollectiveShape::kNone},
      {"MPI_Comm_group", CollectiveShape::kNone},
      {"MPI_File_read_all", CollectiveShape::kNone},
  };
  for (const auto& [name, shape] : cases) EXPECT_EQ(of(name).shape, shape) << name;
  EXPECT_EQ(to_string(of("MPI_Bcast").shape), "1-to-N");
  EXPECT_EQ(to_string(of("MPI_Gather").shape), "N-to-1");
}

TEST(OpClass, KindsBlockingAndVariants) {
  EXPECT_EQ(of("MPI_Isend").category, OpCategory::kSend);
  EXPECT_TRUE(of("MPI_Isend").nonblocking);
  EXPECT_FALSE(of("MPI_Send").nonblocking);
  EXPECT_EQ(of("MPI_Issend").variant, OpVariant::kSynchronous);
  EXPECT_EQ(of("MPI_Bsend").variant, OpVariant::kBuffered);
  EXPECT_EQ(of("MPI_Irecv").family, OpFamily::kRecv);
  EXPECT_EQ(of("MPI_Sendrecv_replace").category, OpCategory::kSendrecv);
  EXPECT_EQ(of("MPI_Iprobe").category, OpCategory::kProbe);
  EXPECT_TRUE(of("MPI_Iprobe").nonblocking);
  EXPECT_EQ(of("MPI_Waitsome").variant, OpVariant::kWaitsome);
  EXPECT_EQ(of("MPI_Testany").category, OpCategory::kCompletion);
  EXPECT_EQ(of("MPI_Send_init").category, OpCategory::kPersistent);
  EXPECT_EQ(of("MPI_Comm_dup").category, OpCategory::kCommManagement);
  EXPECT_TRUE(of("MPI_Comm_idup").nonblocking);
  EXPECT_EQ(of("MPI_Cart_shift").category, OpCategory::kTopology);
  EXPECT_EQ(of("MPI_Type_vector").category, OpCategory::kDatatype);
  EXPECT_EQ(of("MPI_Type_hvector").variant, OpVariant::kLegacy);
  EXPECT_EQ(of("MPI_Rput").category, OpCategory::kOneSided);
  EXPECT_TRUE(of("MPI_Rput").nonblocking);
  EXPECT_EQ(of("MPI_File_write_all").variant, OpVariant::kCollective);
  EXPECT_EQ(of("MPI_Finalize").category, OpCategory::kEnvironment);
}

// Blocking and nonblocking forms of a collective share family and shape;
// only the mode differs.
TEST(OpClass, NonblockingCollectivesMirrorBlockingOnes) {
  int pairs = 0;
  for (std::size_t i = 0; i < OpTable::size(); ++i) {
    const std::string& n = OpTable::name(static_cast<OpId>(i));
    if (n.rfind("MPI_I", 0) != 0 || n.size() < 6) continue;
    const std::string blocking = "MPI_" + std::string(1, char(n[5] - 'a' + 'A')) + n.substr(6);
    auto b = OpTable::find(blocking);
    if (!b || !op_traits(*b).collective()) continue;
    const OpTraits& t = op_traits(static_cast<OpId>(i));
    const OpTraits& bt = op_traits(*b);
    EXPECT_EQ(t.family, bt.family) << n;
    EXPECT_EQ(t.shape, bt.shape) << n;
    EXPECT_TRUE(t.nonblocking) << n;
    EXPECT_FALSE(bt.nonblocking) << blocking;
    ++pairs;
  }
  EXPECT_EQ(pairs, 17 + 5);  // 17 collectives, 5 neighbourhood ones
}

}  // namespace
}  // namespace tracefold
