// The keys under which the recorder counts, and replay orders, the
// point-to-point calls of a rank's threads (thread_order.hpp).
#include "tracefold/thread_order.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace tracefold {
namespace {

Event call(const char* op, std::initializer_list<std::pair<const char*, int64_t>> fields) {
  const auto id = OpTable::find(op);
  if (!id) throw std::invalid_argument(std::string("unknown op ") + op);
  Event ev;
  ev.op = *id;
  for (const auto& [name, value] : fields)
    ev.set(FieldTable::intern(name, FieldKind::kScalar), value);
  return ev;
}

using Key = std::optional<OrderKey>;
constexpr std::nullopt_t kNoKey = std::nullopt;

void expect_keys(const Event& ev, const Key& send, const Key& recv, bool sendrecv) {
  const OrderKeys k = order_keys(ev);
  EXPECT_EQ(k.send, send);
  EXPECT_EQ(k.recv, recv);
  EXPECT_EQ(k.sendrecv, sendrecv);
  EXPECT_EQ(k.recv_field(), sendrecv ? rothers_field() : others_field());
}

TEST(ThreadOrder, SendsKeyOnCommunicatorPeerAndTag) {
  expect_keys(call("MPI_Send", {{"peer", 3}, {"tag", 7}, {"count", 4}, {"dtype", 1}, {"comm", 2}}),
              OrderKey{0, 2, 3, 7}, kNoKey, false);
  // No communicator field: the world's key, -1.
  expect_keys(call("MPI_Isend", {{"peer", 1}, {"tag", 0}}), OrderKey{0, -1, 1, 0}, kNoKey, false);
  expect_keys(call("MPI_Send", {{"peer", kNull}, {"tag", 7}, {"comm", 0}}), kNoKey, kNoKey, false);
}

TEST(ThreadOrder, ReceivesKeyOnWhatTheyMatched) {
  expect_keys(call("MPI_Recv", {{"peer", 2}, {"tag", 5}, {"comm", 0}}), kNoKey,
              OrderKey{1, 0, 2, 5}, false);
  // Wildcards by their status: src and mtag.
  expect_keys(
      call("MPI_Recv", {{"peer", kAny}, {"src", 4}, {"tag", kAny}, {"mtag", 9}, {"comm", 1}}),
      kNoKey, OrderKey{1, 1, 4, 9}, false);
  expect_keys(call("MPI_Recv", {{"peer", 6}, {"tag", kAny}, {"mtag", 8}, {"comm", 1}}), kNoKey,
              OrderKey{1, 1, 6, 8}, false);
  // An Irecv from MPI_ANY_SOURCE matches only at its completion.
  expect_keys(call("MPI_Irecv", {{"peer", kAny}, {"tag", 3}, {"comm", 0}}), kNoKey, kNoKey, false);
}

TEST(ThreadOrder, SendrecvKeysBothPartsFromTheirOwnFields) {
  expect_keys(
      call("MPI_Sendrecv",
           {{"peer", 1}, {"rpeer", 3}, {"tag", 0}, {"comm", 0}, {"rtag", 11}, {"count", 2}}),
      OrderKey{0, 0, 1, 0}, OrderKey{1, 0, 3, 11}, true);
  expect_keys(call("MPI_Sendrecv", {{"peer", 1},
                                    {"src", 2},
                                    {"rpeer", kAny},
                                    {"tag", 4},
                                    {"mtag", 6},
                                    {"comm", 5},
                                    {"rtag", kAny}}),
              OrderKey{0, 5, 1, 4}, OrderKey{1, 5, 2, 6}, true);
  expect_keys(call("MPI_Sendrecv", {{"peer", kNull}, {"rpeer", 3}, {"tag", 0}, {"rtag", 1}}),
              kNoKey, OrderKey{1, -1, 3, 1}, true);
  // Fields registered after rtag do not hide it or count as it.
  order_keys(Event{});  // registers rtag, if nothing did yet
  const char* later = "thread_order_test_later";
  expect_keys(call("MPI_Sendrecv",
                   {{"peer", 1}, {"rpeer", 2}, {"tag", 0}, {"rtag", 3}, {later, 9}, {"comm", 0}}),
              OrderKey{0, 0, 1, 0}, OrderKey{1, 0, 2, 3}, true);
  expect_keys(call("MPI_Sendrecv", {{"peer", 1}, {"rpeer", 2}, {"tag", 0}, {later, 9}}),
              OrderKey{0, -1, 1, 0}, kNoKey, true);
}

TEST(ThreadOrder, OtherCallsHaveNoKeys) {
  for (const char* op : {"MPI_Bcast", "MPI_Barrier", "MPI_Send_init", "MPI_Recv_init", "MPI_Probe",
                         "MPI_Iprobe", "MPI_Wait", "MPI_Start"})
    expect_keys(call(op, {{"peer", 1}, {"tag", 0}, {"comm", 0}}), kNoKey, kNoKey, false);
  Event unknown = call("MPI_Send", {{"peer", 1}, {"tag", 0}});
  unknown.op = static_cast<OpId>(OpTable::size());
  expect_keys(unknown, kNoKey, kNoKey, false);
}

}  // namespace
}  // namespace tracefold
