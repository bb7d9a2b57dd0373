! Wildcard receives completed by MPI_WAITALL from Fortran (mpif.h): every
! step rank 0 posts one MPI_ANY_SOURCE/MPI_ANY_TAG receive per other rank
! and completes them with MPI_WAITALL, once with a status array and once
! with MPI_STATUSES_IGNORE. The other ranks send one after another
! (MPI_SSEND, passing a token along; the order alternates) so the k-th
! receive matches the k-th sender, and a barrier ends every round.
! Rank 0 prints the sources and tags its receives matched, in request
! order: from the statuses, or from the payloads (sender * 1000 + tag).
! usage: app_wild_statuses_f STEPS
program wild_statuses_f
  implicit none
  include 'mpif.h'
  integer, parameter :: maxr = 16
  integer :: ierr, rank, nprocs, steps, s, round, i, n, tag, token
  integer :: first, last, before, after
  integer :: reqs(maxr), payload(maxr), srcs(maxr), tags(maxr)
  integer :: statuses(MPI_STATUS_SIZE, maxr)
  integer :: checksum
  character(len=32) :: arg

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  steps = 2
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) steps
  end if
  n = nprocs - 1
  checksum = 0
  do s = 1, steps
    do round = 0, 1
      if (rank == 0) then
        do i = 1, n
          call MPI_IRECV(payload(i), 1, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, &
                         MPI_COMM_WORLD, reqs(i), ierr)
        end do
        if (round == 0) then
          call MPI_WAITALL(n, reqs, statuses, ierr)
          do i = 1, n
            srcs(i) = statuses(MPI_SOURCE, i)
            tags(i) = statuses(MPI_TAG, i)
            if (payload(i) /= srcs(i) * 1000 + tags(i)) call MPI_ABORT(MPI_COMM_WORLD, 3, ierr)
          end do
        else
          call MPI_WAITALL(n, reqs, MPI_STATUSES_IGNORE, ierr)
          do i = 1, n
            srcs(i) = payload(i) / 1000
            tags(i) = mod(payload(i), 1000)
          end do
        end if
        do i = 1, n
          checksum = checksum + payload(i)
        end do
        write (*, '(a,i0,a,a,*(i0,:,","))', advance='no') 'wild step ', s - 1, &
          trim(merge(' MPI_Waitall       ', ' MPI_Waitall ignore', round == 0))//' ', &
          'srcs=[', (srcs(i), i = 1, n)
        write (*, '(a,*(i0,:,","))', advance='no') '] mtags=[', (tags(i), i = 1, n)
        write (*, '(a)') ']'
      else
        if (mod(s + round, 2) == 0) then
          first = 1
          last = nprocs - 1
          before = rank - 1
          after = rank + 1
        else
          first = nprocs - 1
          last = 1
          before = rank + 1
          after = rank - 1
        end if
        token = 0
        if (rank /= first) call MPI_RECV(token, 1, MPI_INTEGER, before, 1, MPI_COMM_WORLD, &
                                         MPI_STATUS_IGNORE, ierr)
        tag = 100 + 10 * round + rank
        payload(1) = rank * 1000 + tag
        call MPI_SSEND(payload(1), 1, MPI_INTEGER, 0, tag, MPI_COMM_WORLD, ierr)
        if (rank /= last) call MPI_SEND(token, 1, MPI_INTEGER, after, 1, MPI_COMM_WORLD, ierr)
      end if
      call MPI_BARRIER(MPI_COMM_WORLD, ierr)
    end do
  end do
  if (rank == 0) write (*, '(a,i0,a,i0,a,i0)') 'wild_statuses_f: ', nprocs, ' ranks, ', &
    steps, ' steps, checksum ', checksum
  call MPI_FINALIZE(ierr)
end program wild_statuses_f
