// MPI plumbing the parallel analyses share (src/analysis/waits/parallel,
// src/analysis/diagnose/parallel). Not a public header.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tracefold::mpi_common {

/// Collective over `comm`: -1 when `err` is empty on every rank, else the
/// lowest rank whose `err` is not. The caller throws (its own error type)
/// on that rank and reports a peer's failure on the others.
int first_failing(MPI_Comm comm, const std::string& err);

/// Processor time (user and system, every thread) this process has used.
double cpu_seconds();

/// The recorded ranks [first, last) analysis rank `me` of `np` digests:
/// contiguous blocks in rank order, sizes differing by at most one.
std::pair<int32_t, int32_t> rank_share(int32_t recorded, int me, int np);

/// Collective over `comm`: every rank's `mine`, concatenated in rank order
/// on rank 0 (empty elsewhere), each prefixed by its length as 8 bytes
/// (split_gathered takes them apart). Along a binary tree: in round s a rank
/// whose number is an odd multiple of 2^s sends what it holds to the rank
/// 2^s below and is done, so rank 0 has everything after ceil(log2 np)
/// rounds and no rank receives more than log2 np messages.
std::string tree_gather(MPI_Comm comm, const std::string& mine);

/// Collective over `comm`: every rank's `mine` combined on rank 0 (empty
/// elsewhere), along tree_gather's binary tree: a rank combines what it
/// holds with what the rank 2^s above it sends (the combination of the
/// ranks after its own), `combine(held, later)`, so each piece only ever
/// meets its right neighbour's and the result is in rank order.
std::string tree_reduce(MPI_Comm comm, std::string mine,
                        const std::function<void(std::string& held, std::string&& later)>& combine);

/// Collective over `comm`: every rank's `mine`, on every rank, in rank
/// order. For small pieces (the total must fit an MPI count).
std::vector<std::string> all_gather(MPI_Comm comm, const std::string& mine);

/// Collective over `comm`: rank 0's `pieces[q]` (one per rank) arrives on
/// rank q, which gets it back; the other ranks' `pieces` are not read.
/// Point to point from rank 0, each piece in parts of at most 1 GiB.
std::string scatter(MPI_Comm comm, std::vector<std::string>&& pieces);
/// The same with rank 0's pieces made one at a time by `piece(q)` (called
/// on rank 0 only, for q = 1, ..., np - 1, then 0), each freed once sent:
/// rank 0 never holds more than one other rank's piece.
std::string scatter(MPI_Comm comm, const std::function<std::string(int)>& piece);

/// tree_gather's result, one string per rank.
std::vector<std::string> split_gathered(const std::string& all);

}  // namespace tracefold::mpi_common
