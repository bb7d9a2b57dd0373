! 1-D periodic halo exchange in Fortran with `use mpi_f08`: every step the
! two halos (width 2) are received with MPI_Irecv (the left one from
! MPI_ANY_SOURCE, so the recorder has to read the matched source out of the
! f08 status) and sent with MPI_Isend, MPI_Waitall completes the four
! requests; ranks then pass a token around a communicator from
! MPI_Comm_split (even / odd ranks) with MPI_Sendrecv, again from
! MPI_ANY_SOURCE; MPI_Allreduce of the local sum every 5 steps. Some calls
! leave out the optional ierror (the library sees a null pointer).
! usage: app_halo_f08 STEPS
program halo_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 24, h = 2
  double precision :: u(1-h:n+h), v(1:n)
  double precision :: local, total, acc
  type(MPI_Comm) :: half
  type(MPI_Request) :: reqs(4)
  type(MPI_Status) :: stats(4), st
  integer :: ierr, rank, nprocs, hrank, hsize, left, right, steps, s, i
  integer :: token, got, seen
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  steps = 40
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) steps
  end if
  left = mod(rank + nprocs - 1, nprocs)
  right = mod(rank + 1, nprocs)
  ! Even and odd ranks, in reverse rank order, so the split's key matters.
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), nprocs - rank, half, ierr)
  call MPI_Comm_rank(half, hrank)
  call MPI_Comm_size(half, hsize)

  do i = 1, n
    u(i) = dble(mod(rank * 13 + i * 7, 11))
  end do
  acc = 0d0
  seen = 0
  token = rank
  do s = 1, steps
    call MPI_Irecv(u(1-h), h, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, reqs(1))
    call MPI_Irecv(u(n+1), h, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Isend(u(n-h+1), h, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, reqs(3))
    call MPI_Isend(u(1), h, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, reqs(4), ierr)
    if (mod(s, 2) == 0) then
      call MPI_Waitall(4, reqs, stats, ierr)
      if (stats(1)%MPI_SOURCE /= left) then
        write (*, '(a,i0,a,i0)') 'halo_f08: rank ', rank, ' left halo from ', stats(1)%MPI_SOURCE
        call MPI_Abort(MPI_COMM_WORLD, 3)
      end if
    else
      ! Statuses ignored (mpi_f08's own marker object under MPICH): the
      ! trace still holds what the wildcard receive matched.
      call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE, ierr)
    end if
    do i = 1, n
      v(i) = (u(i-2) + 2d0 * u(i-1) + 4d0 * u(i) + 2d0 * u(i+1) + u(i+2)) / 10d0
    end do
    u(1:n) = v
    call MPI_Sendrecv(token, 1, MPI_INTEGER, mod(hrank + 1, hsize), 7, got, 1, MPI_INTEGER, &
                      MPI_ANY_SOURCE, 7, half, st)
    token = got
    seen = seen + st%MPI_SOURCE
    if (mod(s, 5) == 0) then
      local = sum(u(1:n))
      call MPI_Allreduce(local, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
      acc = acc + total
    end if
  end do
  local = sum(u(1:n)) + dble(token + seen)
  call MPI_Allreduce(local, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) write (*, '(a,i0,a,i0,a,es16.9,a,es16.9)') 'halo_f08: ', nprocs, ' ranks, ', steps, &
      ' steps, checksum ', total, ' acc ', acc
  call MPI_Comm_free(half)
  call MPI_Finalize()
end program halo_f08
