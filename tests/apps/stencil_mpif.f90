! 2D 5-point stencil in Fortran with include 'mpif.h'. Periodic process
! grid from MPI_Dims_create; halo receives are posted with MPI_Irecv, the
! halos go out with blocking MPI_Send, MPI_Waitall completes the receives;
! an MPI_Allreduce of the residual every 10 steps.
! usage: app_stencil_mpif STEPS
program stencil_mpif
  implicit none
  include 'mpif.h'
  integer, parameter :: nx = 16, ny = 12
  double precision :: u(0:nx+1, 0:ny+1), v(0:nx+1, 0:ny+1)
  double precision :: sbuf(max(nx, ny), 4), rbuf(max(nx, ny), 4)
  double precision :: local, resid, total, lsum
  integer :: ierr, rank, nprocs, steps, s, i, j, d, row, col, n
  integer :: dims(2), nb(4), lens(4), reqs(4), stats(MPI_STATUS_SIZE, 4)
  integer, parameter :: opposite(4) = (/ 2, 1, 4, 3 /)
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  steps = 50
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) steps
  end if
  dims = 0
  call MPI_Dims_create(nprocs, 2, dims, ierr)
  row = rank / dims(2)
  col = mod(rank, dims(2))
  nb(1) = mod(row + dims(1) - 1, dims(1)) * dims(2) + col   ! north
  nb(2) = mod(row + 1, dims(1)) * dims(2) + col             ! south
  nb(3) = row * dims(2) + mod(col + dims(2) - 1, dims(2))   ! west
  nb(4) = row * dims(2) + mod(col + 1, dims(2))             ! east
  lens = (/ nx, nx, ny, ny /)
  u = 0d0
  do j = 1, ny
    do i = 1, nx
      u(i, j) = dble(mod(rank * 17 + i * 5 + j, 9))
    end do
  end do
  resid = 0d0
  do s = 1, steps
    do d = 1, 4
      call MPI_Irecv(rbuf(1, d), lens(d), MPI_DOUBLE_PRECISION, nb(d), opposite(d), &
                     MPI_COMM_WORLD, reqs(d), ierr)
    end do
    sbuf(1:nx, 1) = u(1:nx, 1)
    sbuf(1:nx, 2) = u(1:nx, ny)
    sbuf(1:ny, 3) = u(1, 1:ny)
    sbuf(1:ny, 4) = u(nx, 1:ny)
    do d = 1, 4
      call MPI_Send(sbuf(1, d), lens(d), MPI_DOUBLE_PRECISION, nb(d), d, MPI_COMM_WORLD, ierr)
    end do
    call MPI_Waitall(4, reqs, stats, ierr)
    u(1:nx, 0) = rbuf(1:nx, 1)
    u(1:nx, ny+1) = rbuf(1:nx, 2)
    u(0, 1:ny) = rbuf(1:ny, 3)
    u(nx+1, 1:ny) = rbuf(1:ny, 4)
    local = 0d0
    do j = 1, ny
      do i = 1, nx
        v(i, j) = 0.25d0 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))
        local = local + (v(i, j) - u(i, j))**2
      end do
    end do
    u(1:nx, 1:ny) = v(1:nx, 1:ny)
    if (mod(s, 10) == 0) then
      call MPI_Allreduce(local, resid, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    end if
  end do
  lsum = sum(u(1:nx, 1:ny))
  call MPI_Allreduce(lsum, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  n = steps
  if (rank == 0) write (*, '(a,i0,a,i0,a,es16.9,a,es13.6)') 'stencil_mpif: ', nprocs, ' ranks, ', n, &
      ' steps, checksum ', total, ' resid ', resid
  call MPI_Finalize(ierr)
end program stencil_mpif
