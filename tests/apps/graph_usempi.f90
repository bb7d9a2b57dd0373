! Topology calls from Fortran with 'use mpi': a ring as a distributed graph
! (MPI_Dist_graph_create_adjacent, MPI_UNWEIGHTED), STEPS rounds of
! MPI_Neighbor_allgather on it, MPI_Comm_free, and MPI_Pcontrol, whose
! Fortran binding has no IERROR argument.
! usage: app_graph_usempi STEPS
program graph_usempi
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, steps, s, ring, left, right, acc, total
  integer :: srcs(1), dsts(1), nbr(1), mine
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  steps = 10
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) steps
  end if
  left = mod(rank + nprocs - 1, nprocs)
  right = mod(rank + 1, nprocs)
  srcs(1) = left
  dsts(1) = right
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, srcs, MPI_UNWEIGHTED, 1, dsts, &
      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., ring, ierr)
  call MPI_Pcontrol(1)
  acc = 0
  do s = 1, steps
    mine = rank * 100 + s
    nbr = -1
    call MPI_Neighbor_allgather(mine, 1, MPI_INTEGER, nbr, 1, MPI_INTEGER, ring, ierr)
    if (nbr(1) /= left * 100 + s) then
      write (*, '(a,i0,a,i0,a,i0)') 'graph_usempi: rank ', rank, ' got ', nbr(1), &
          ' from its graph neighbour, expected ', left * 100 + s
      call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
    end if
    acc = mod(acc + nbr(1), 100003)
  end do
  call MPI_Pcontrol(0)
  call MPI_Comm_free(ring, ierr)
  call MPI_Allreduce(acc, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(a,i0,a,i0,a,i0)') 'graph_usempi: ', nprocs, ' ranks, ', steps, &
      ' steps, checksum ', total
  call MPI_Finalize(ierr)
end program graph_usempi
