! Collectives in Fortran with 'use mpi': every step MPI_Bcast of parameters
! from a rotating root, MPI_Alltoall of a block per rank, MPI_Allreduce of
! a local sum, MPI_Reduce to rank 0, and an MPI_Barrier every 5th step.
! usage: app_collectives_usempi STEPS
program collectives_usempi
  use mpi
  implicit none
  integer, parameter :: blk = 4
  integer :: ierr, rank, nprocs, steps, s, i, root
  integer :: params(3)
  integer, allocatable :: sbuf(:), rbuf(:)
  integer :: lsum, gsum, red, acc, total
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  steps = 20
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) steps
  end if
  allocate (sbuf(blk * nprocs), rbuf(blk * nprocs))
  do i = 1, blk * nprocs
    sbuf(i) = mod(rank * 31 + i, 101)
  end do
  acc = 0
  red = 0
  do s = 1, steps
    root = mod(s, nprocs)
    params = (/ s, rank, 7 /)
    call MPI_Bcast(params, 3, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call MPI_Alltoall(sbuf, blk, MPI_INTEGER, rbuf, blk, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    lsum = mod(sum(rbuf) + params(2) + params(1), 10007)
    call MPI_Allreduce(lsum, gsum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Reduce(lsum, red, 1, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
    if (mod(s, 5) == 0) call MPI_Barrier(MPI_COMM_WORLD, ierr)
    do i = 1, blk * nprocs
      sbuf(i) = mod(rbuf(i) * 3 + gsum + i, 1009)
    end do
    acc = mod(acc + gsum, 100003)
  end do
  call MPI_Allreduce(acc, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(a,i0,a,i0,a,i0,a,i0)') 'collectives_usempi: ', nprocs, ' ranks, ', steps, &
      ' steps, checksum ', total, ' max ', red
  deallocate (sbuf, rbuf)
  call MPI_Finalize(ierr)
end program collectives_usempi
