#include "match.hpp"

#include <cstdint>
#include <type_traits>
#include <vector>

#include "mpi_common.hpp"
#include "tracefold/diagnose.hpp"

namespace tracefold::diagnose_parallel {

namespace {

// A contiguous MPI type of T's bytes: counts of descriptors and messages,
// not of bytes, stay within an int far longer.
template <class T>
struct Bytes {
  static_assert(std::is_trivially_copyable_v<T>);
  MPI_Datatype type = MPI_DATATYPE_NULL;
  Bytes() {
    MPI_Type_contiguous(int(sizeof(T)), MPI_BYTE, &type);
    MPI_Type_commit(&type);
  }
  ~Bytes() { MPI_Type_free(&type); }
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;
};

int as_count(std::size_t n) {
  if (n > std::size_t(INT32_MAX))
    throw DiagnoseError("tracefold-diagnose: more than 2^31 messages in one analysis rank's share");
  return int(n);
}

}  // namespace

MatchResult exchange_and_match(const Trace& trace, waits_detail::BlockMessages&& mine, int me,
                               int np) {
  using waits_detail::SendDescriptor;
  // Which analysis rank's share holds each recorded rank.
  std::vector<int> owner(std::size_t(trace.world_size), 0);
  for (int q = 0; q < np; ++q) {
    const auto [first, last] = mpi_common::rank_share(trace.world_size, q, np);
    for (int32_t r = first; r < last; ++r) owner[std::size_t(r)] = q;
  }
  // The sends by destination share, each share's in rank and event order.
  std::vector<int> out_counts(std::size_t(np), 0), out_at(std::size_t(np), 0);
  for (const SendDescriptor& s : mine.sends)
    ++out_counts[std::size_t(owner[std::size_t(s.receiver)])];
  for (int q = 1; q < np; ++q)
    out_at[std::size_t(q)] = out_at[std::size_t(q - 1)] + out_counts[std::size_t(q - 1)];
  std::vector<SendDescriptor> out(mine.sends.size());
  {
    std::vector<int> at = out_at;
    for (const SendDescriptor& s : mine.sends)
      out[std::size_t(at[std::size_t(owner[std::size_t(s.receiver)])]++)] = s;
  }
  as_count(out.size());
  std::vector<SendDescriptor>().swap(mine.sends);
  std::vector<int> in_counts(std::size_t(np), 0), in_at(std::size_t(np), 0);
  MPI_Alltoall(out_counts.data(), 1, MPI_INT, in_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::size_t total = 0;
  for (int q = 0; q < np; ++q) {
    in_at[std::size_t(q)] = int(total);
    total += std::size_t(in_counts[std::size_t(q)]);
  }
  as_count(total);
  std::vector<SendDescriptor> in(total);
  const Bytes<SendDescriptor> sd;
  MPI_Alltoallv(out.data(), out_counts.data(), out_at.data(), sd.type, in.data(), in_counts.data(),
                in_at.data(), sd.type, MPI_COMM_WORLD);
  std::vector<SendDescriptor>().swap(out);
  MatchResult mine_matched =
      waits_detail::match_block(std::move(in), std::move(mine.recvs), mine.unmatched_recvs);
  // Rank 0 learns every share's count first, so that its vector of
  // messages is allocated once at its final size.
  const uint64_t head[3] = {uint64_t(mine_matched.messages.size()), mine_matched.unmatched_sends,
                            mine_matched.unmatched_recvs};
  std::vector<uint64_t> heads(me == 0 ? std::size_t(3 * np) : 0);
  MPI_Gather(head, 3, MPI_UINT64_T, heads.data(), 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  const Bytes<Message> msg;
  if (me != 0) {
    MPI_Send(mine_matched.messages.data(), as_count(mine_matched.messages.size()), msg.type, 0, 0,
             MPI_COMM_WORLD);
    return {};
  }
  MatchResult all;
  std::size_t n = 0;
  for (int q = 0; q < np; ++q) {
    n += heads[std::size_t(3 * q)];
    all.unmatched_sends += heads[std::size_t(3 * q + 1)];
    all.unmatched_recvs += heads[std::size_t(3 * q + 2)];
  }
  all.messages = std::move(mine_matched.messages);
  all.messages.reserve(n);
  for (int q = 1; q < np; ++q) {
    const std::size_t at = all.messages.size(), k = heads[std::size_t(3 * q)];
    all.messages.resize(at + k);
    MPI_Recv(all.messages.data() + at, as_count(k), msg.type, q, 0, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
  }
  return all;
}

}  // namespace tracefold::diagnose_parallel
