// MPI plumbing shared by the parallel analyses (mpi_common.hpp).
#include "mpi_common.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace tracefold::mpi_common {

namespace {

// MPI counts are ints: large buffers go in pieces of this many bytes.
constexpr uint64_t kPiece = 1u << 30;

void send_bytes(MPI_Comm comm, int to, const std::string& s) {
  const uint64_t n = s.size();
  MPI_Send(&n, 1, MPI_UINT64_T, to, 0, comm);
  for (uint64_t at = 0; at < n; at += kPiece)
    MPI_Send(s.data() + at, int(std::min(kPiece, n - at)), MPI_BYTE, to, 1, comm);
}

void append_received(MPI_Comm comm, int from, std::string& out) {
  uint64_t n = 0;
  MPI_Recv(&n, 1, MPI_UINT64_T, from, 0, comm, MPI_STATUS_IGNORE);
  const std::size_t base = out.size();
  out.resize(base + n);
  for (uint64_t at = 0; at < n; at += kPiece)
    MPI_Recv(out.data() + base + at, int(std::min(kPiece, n - at)), MPI_BYTE, from, 1, comm,
             MPI_STATUS_IGNORE);
}

}  // namespace

int first_failing(MPI_Comm comm, const std::string& err) {
  int me = 0, size = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &size);
  int mine = err.empty() ? size : me, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  return first == size ? -1 : first;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

std::pair<int32_t, int32_t> rank_share(int32_t recorded, int me, int np) {
  auto at = [&](int64_t i) { return int32_t(int64_t(recorded) * i / np); };
  return {at(me), at(me + 1)};
}

std::string tree_gather(MPI_Comm comm, const std::string& mine) {
  int me = 0, np = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &np);
  // What this rank holds: its own piece, then those of the ranks above it
  // that it received, which keeps rank order.
  std::string held(8, '\0');
  const uint64_t n = mine.size();
  std::memcpy(held.data(), &n, 8);
  held += mine;
  for (int step = 1; step < np; step *= 2) {
    if (me % (2 * step) == step) {
      send_bytes(comm, me - step, held);
      return {};
    }
    if (me + step < np) append_received(comm, me + step, held);
  }
  return held;
}

std::string tree_reduce(MPI_Comm comm, std::string mine,
                        const std::function<void(std::string&, std::string&&)>& combine) {
  int me = 0, np = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &np);
  for (int step = 1; step < np; step *= 2) {
    if (me % (2 * step) == step) {
      send_bytes(comm, me - step, mine);
      return {};
    }
    if (me + step < np) {
      std::string later;
      append_received(comm, me + step, later);
      combine(mine, std::move(later));
    }
  }
  return mine;
}

std::vector<std::string> all_gather(MPI_Comm comm, const std::string& mine) {
  int np = 0;
  MPI_Comm_size(comm, &np);
  const uint64_t n = mine.size();
  std::vector<uint64_t> sizes(std::size_t(np), 0);
  MPI_Allgather(&n, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, comm);
  std::vector<int> counts(static_cast<std::size_t>(np)), displs(static_cast<std::size_t>(np));
  uint64_t total = 0;
  for (int i = 0; i < np; ++i) {
    displs[std::size_t(i)] = int(total);
    counts[std::size_t(i)] = int(sizes[std::size_t(i)]);
    total += sizes[std::size_t(i)];
    if (total > uint64_t(std::numeric_limits<int>::max()))
      throw std::runtime_error("all_gather: more than 2 GiB in all");
  }
  std::string all(total, '\0');
  MPI_Allgatherv(mine.data(), int(n), MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE,
                 comm);
  std::vector<std::string> out;
  for (int i = 0; i < np; ++i)
    out.push_back(all.substr(std::size_t(displs[std::size_t(i)]), sizes[std::size_t(i)]));
  return out;
}

std::string scatter(MPI_Comm comm, std::vector<std::string>&& pieces) {
  int me = 0, np = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &np);
  if (me == 0 && pieces.size() != std::size_t(np))
    throw std::runtime_error("scatter: one piece per rank");
  return scatter(comm, [&](int q) { return std::move(pieces[std::size_t(q)]); });
}

std::string scatter(MPI_Comm comm, const std::function<std::string(int)>& piece) {
  int me = 0, np = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &np);
  std::string mine;
  if (me != 0) {
    append_received(comm, 0, mine);
    return mine;
  }
  for (int q = 1; q < np; ++q) send_bytes(comm, q, piece(q));
  return piece(0);
}

std::vector<std::string> split_gathered(const std::string& all) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < all.size();) {
    uint64_t n = 0;
    if (all.size() - at < 8) throw std::runtime_error("gathered data cut short");
    std::memcpy(&n, all.data() + at, 8);
    at += 8;
    if (all.size() - at < n) throw std::runtime_error("gathered data cut short");
    out.push_back(all.substr(at, n));
    at += n;
  }
  return out;
}

}  // namespace tracefold::mpi_common
