// 2D 5-point stencil written in C++: a Grid class owns the local block and
// its halo and exchanges it with its four periodic neighbours
// (MPI_Irecv/MPI_Isend/MPI_Waitall through the C API), an Allreduce of the
// residual every 10 steps. usage: app_stencil_cxx STEPS
#include <mpi.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

class Grid {
 public:
  Grid(MPI_Comm comm, int nx, int ny)
      : comm_(comm), nx_(nx), ny_(ny), u_((nx + 2) * (ny + 2)), v_(u_.size()) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
    MPI_Dims_create(size_, 2, dims_.data());
    const int row = rank_ / dims_[1], col = rank_ % dims_[1];
    nb_[0] = ((row + dims_[0] - 1) % dims_[0]) * dims_[1] + col;  // north
    nb_[1] = ((row + 1) % dims_[0]) * dims_[1] + col;             // south
    nb_[2] = row * dims_[1] + (col + dims_[1] - 1) % dims_[1];    // west
    nb_[3] = row * dims_[1] + (col + 1) % dims_[1];               // east
    for (int i = 1; i <= ny_; ++i)
      for (int j = 1; j <= nx_; ++j) at(i, j) = static_cast<double>((rank_ * 13 + i * 3 + j) % 10);
    for (int d = 0; d < 4; ++d) {
      send_[d].resize(d < 2 ? nx_ : ny_);
      recv_[d].resize(d < 2 ? nx_ : ny_);
    }
  }

  void exchange() {
    static constexpr std::array<int, 4> kOpposite{1, 0, 3, 2};
    std::array<MPI_Request, 8> reqs;
    for (int d = 0; d < 4; ++d)
      MPI_Irecv(recv_[d].data(), static_cast<int>(recv_[d].size()), MPI_DOUBLE, nb_[d],
                kOpposite[d], comm_, &reqs[d]);
    for (int k = 0; k < nx_; ++k) {
      send_[0][k] = at(1, k + 1);
      send_[1][k] = at(ny_, k + 1);
    }
    for (int k = 0; k < ny_; ++k) {
      send_[2][k] = at(k + 1, 1);
      send_[3][k] = at(k + 1, nx_);
    }
    for (int d = 0; d < 4; ++d)
      MPI_Isend(send_[d].data(), static_cast<int>(send_[d].size()), MPI_DOUBLE, nb_[d], d, comm_,
                &reqs[4 + d]);
    MPI_Waitall(8, reqs.data(), MPI_STATUSES_IGNORE);
    for (int k = 0; k < nx_; ++k) {
      at(0, k + 1) = recv_[0][k];
      at(ny_ + 1, k + 1) = recv_[1][k];
    }
    for (int k = 0; k < ny_; ++k) {
      at(k + 1, 0) = recv_[2][k];
      at(k + 1, nx_ + 1) = recv_[3][k];
    }
  }

  double relax() {
    double local = 0.0;
    for (int i = 1; i <= ny_; ++i)
      for (int j = 1; j <= nx_; ++j) {
        const double nv = 0.25 * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1));
        local += (nv - at(i, j)) * (nv - at(i, j));
        v_[idx(i, j)] = nv;
      }
    for (int i = 1; i <= ny_; ++i)
      for (int j = 1; j <= nx_; ++j) at(i, j) = v_[idx(i, j)];
    return local;
  }

  double global_sum(double x) const {
    double out = 0.0;
    MPI_Allreduce(&x, &out, 1, MPI_DOUBLE, MPI_SUM, comm_);
    return out;
  }

  double local_sum() const {
    double s = 0.0;
    for (int i = 1; i <= ny_; ++i)
      for (int j = 1; j <= nx_; ++j) s += u_[idx(i, j)];
    return s;
  }

  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  std::size_t idx(int i, int j) const { return static_cast<std::size_t>(i * (nx_ + 2) + j); }
  double& at(int i, int j) { return u_[idx(i, j)]; }

  MPI_Comm comm_;
  int nx_, ny_, rank_ = 0, size_ = 1;
  std::array<int, 2> dims_{0, 0};
  std::array<int, 4> nb_{};
  std::vector<double> u_, v_;
  std::array<std::vector<double>, 4> send_, recv_;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int steps = argc > 1 ? std::atoi(argv[1]) : 100;
  double resid = 0.0, checksum = 0.0;
  int size = 0, rank = 0;
  {
    Grid g(MPI_COMM_WORLD, 20, 16);
    for (int s = 0; s < steps; ++s) {
      g.exchange();
      const double local = g.relax();
      if (s % 10 == 9) resid = g.global_sum(local);
    }
    checksum = g.global_sum(g.local_sum());
    rank = g.rank();
    size = g.size();
  }
  if (rank == 0)
    std::printf("stencil_cxx: %d ranks, %d steps, checksum %.9e resid %.6e\n", size, steps,
                checksum, resid);
  MPI_Finalize();
  return 0;
}
