! Derived datatypes and empty completions from Fortran ('use mpi'): a
! column of a 2-D array (MPI_TYPE_VECTOR) and a record of an INTEGER and
! two DOUBLE PRECISIONs (MPI_TYPE_CREATE_STRUCT, MPI_TYPE_CREATE_RESIZED)
! go round a ring; the record type is decoded (MPI_TYPE_GET_ENVELOPE,
! MPI_TYPE_GET_CONTENTS, MPI_TYPE_SIZE) and a copy of it (MPI_TYPE_DUP) is
! made and freed every step. Receives complete with MPI_WAITSOME, and the
! last rank, which has no right neighbour for a second exchange, calls
! MPI_WAITALL with a count of 0.
! usage: app_dtypes_usempi STEPS
program dtypes_usempi
  use mpi
  implicit none
  integer, parameter :: n = 5
  double precision :: a(n, n), col(n)
  integer :: ierr, rank, nprocs, steps, s, i, right, left, done, outcount
  integer :: column, rec, raw, copy, tsize, ni, na, nd, combiner
  integer :: blens(2), types(2), reqs(2), idx(2), got(2)
  integer :: ints(1), inner(1)
  integer(kind=MPI_ADDRESS_KIND) :: disps(2), lb, extent, addrs(2)
  integer :: recin(4), recout(4)
  double precision :: total, lsum
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  steps = 10
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) steps
  end if
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  ! a row of a: n elements n apart
  call MPI_Type_vector(n, 1, n, MPI_DOUBLE_PRECISION, column, ierr)
  call MPI_Type_commit(column, ierr)
  ! an INTEGER and two DOUBLE PRECISIONs, stored in 4 default integers
  blens = (/ 1, 2 /)
  types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
  disps = (/ 0_MPI_ADDRESS_KIND, 4_MPI_ADDRESS_KIND /)
  call MPI_Type_create_struct(2, blens, disps, types, raw, ierr)
  call MPI_Type_create_resized(raw, 0_MPI_ADDRESS_KIND, 20_MPI_ADDRESS_KIND, rec, ierr)
  call MPI_Type_free(raw, ierr)
  call MPI_Type_commit(rec, ierr)
  do i = 1, n
    a(i, :) = rank + i
  end do
  lsum = 0
  do s = 1, steps
    call MPI_Irecv(col, n, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(recin, 1, rec, left, 2, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Send(a(mod(s, n) + 1, 1), 1, column, right, 1, MPI_COMM_WORLD, ierr)
    recout = (/ rank + s, 0, 0, 0 /)
    call MPI_Send(recout, 1, rec, right, 2, MPI_COMM_WORLD, ierr)
    done = 0
    do while (done < 2)
      call MPI_Waitsome(2, reqs, outcount, idx, MPI_STATUSES_IGNORE, ierr)
      done = done + outcount
    end do
    lsum = lsum + sum(col) + recin(1)
    if (rank == nprocs - 1) then
      call MPI_Waitall(0, reqs, MPI_STATUSES_IGNORE, ierr)
    else
      call MPI_Irecv(got, 1, MPI_INTEGER, rank + 1, 3, MPI_COMM_WORLD, reqs(1), ierr)
      call MPI_Waitall(1, reqs, MPI_STATUSES_IGNORE, ierr)
      lsum = lsum + got(1)
    end if
    if (rank > 0) call MPI_Send(s, 1, MPI_INTEGER, rank - 1, 3, MPI_COMM_WORLD, ierr)
    call MPI_Type_dup(rec, copy, ierr)
    call MPI_Type_size(copy, tsize, ierr)
    call MPI_Type_get_extent(copy, lb, extent, ierr)
    call MPI_Type_get_envelope(rec, ni, na, nd, combiner, ierr)
    if (combiner == MPI_COMBINER_RESIZED .and. nd == 1) then
      call MPI_Type_get_contents(rec, 1, 2, 1, ints, addrs, inner, ierr)
      call MPI_Type_size(inner(1), tsize, ierr)
      call MPI_Type_free(inner(1), ierr)
    end if
    call MPI_Type_free(copy, ierr)
    lsum = lsum + tsize + extent
  end do
  call MPI_Type_free(column, ierr)
  call MPI_Type_free(rec, ierr)
  call MPI_Allreduce(lsum, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a, i0, a, f0.1)', 'dtypes_usempi: ', nprocs, ' ranks, ', &
    steps, ' steps, checksum ', total
  call MPI_Finalize(ierr)
end program dtypes_usempi
