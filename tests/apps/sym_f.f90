! Symbolization test program in Fortran (tests/mpi/symbolize.sh): a module
! procedure makes the MPI call; the marker comment gives its line.
module symf
  use mpi
  implicit none
contains
  subroutine global_total(v, total)
    double precision, intent(in) :: v
    double precision, intent(out) :: total
    integer :: ierr
    call MPI_Allreduce(v, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr) ! SYM:f_allreduce
  end subroutine global_total
end module symf

program sym_f
  use mpi
  use symf
  implicit none
  integer :: ierr, rank, nprocs, s, steps
  double precision :: v, total, acc
  character(len=16) :: arg
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  steps = 5
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) steps
  end if
  acc = 0
  do s = 1, steps
    v = rank + s
    call global_total(v, total)
    acc = acc + total
  end do
  if (rank == 0) print '(a,i0,a,i0,a,f0.1)', 'sym_f: ', nprocs, ' ranks, ', steps, ' steps, checksum ', acc
  call MPI_Finalize(ierr)
end program sym_f
