! A Fortran MPI program: every rank writes its own formatted file, the ranks
! meet in a barrier and an allreduce, rank 0 prints the total.
! usage: fortran_mpi [lines=20]
program fortran_mpi
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, i, lines, total, unit_no
  character(len=32) :: name, arg
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  lines = 20
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) lines
  end if
  write (name, '(a,i0,a)') 'fortran.', rank, '.txt'
  open (newunit=unit_no, file=trim(name), status='replace', action='write')
  do i = 1, lines
    write (unit_no, '(a,i6,a,i6)') 'rank ', rank, ' line ', i
  end do
  close (unit_no)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(lines, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0)', 'fortran ranks=', nprocs, ' lines=', total
  call MPI_Finalize(ierr)
end program fortran_mpi
