# Helpers of tests/mpi/bench_mpich*.sh (not a test itself): the programs of
# bench_lib.bash's lists, built with MPICH's wrappers and run under
# mpiexec.mpich. Sourced after mpi_test_lib.bash and bench_lib.bash.
#   mpich_setup            fails the test when MPICH or its recorder is missing
#   mpich_bench_one ENTRY  an entry of BENCH_KERNELS/FEATURES/OTHERS: build,
#       record, generate, compile with MPICH's mpicc -std=c11 -Wall -Wextra
#       -Werror, record the benchmark, diff as bench_one does
#   mpich_refused_one ENTRY  an entry of BENCH_REFUSED, as refused_one
MCC=mpicc.mpich MCXX=mpicxx.mpich MFC=mpif90.mpich MRUN=mpiexec.mpich

mpich_setup() {
  local tool libdir
  for tool in $MCC $MCXX $MFC $MRUN; do
    command -v "$tool" >/dev/null ||
      { bad "$tool not found: install MPICH (scripts/install-deps.sh: libmpich-dev mpich)"; finish; }
  done
  libdir=$(cd "$(dirname "$TF")/../record" && pwd)
  if ! readelf -d "$libdir/libtracefold.so" | grep -q 'NEEDED.*libmpich' &&
    [[ ! -e $libdir/libtracefold-mpich.so ]]; then
    bad "no recorder for MPICH next to $libdir/libtracefold.so (TRACEFOLD_MPI_FLAVOURS must name mpich)"
    finish
  fi
}

# Sources and definitions of app_NAME (tests/apps/CMakeLists.txt builds the
# same programs for the project's MPI).
mpich_sources() {
  case $1 in
    stencil2d_periodic) echo "stencil2d.c -DPERIODIC=1" ;;
    stencil2d_nonperiodic) echo "stencil2d.c -DPERIODIC=0" ;;
    halo26_periodic) echo "halo26.c -DPERIODIC=1" ;;
    halo26) echo "halo26.c -DPERIODIC=0" ;;
    sym_cxx) echo "sym_cxx.cpp sym_cxx_lib.cpp" ;;
    # The diagnosis example doubles as a test program.
    diag_problems) echo "../../examples/diagnose/diag_problems.c" ;;
    # OpenMP programs (tests/apps/CMakeLists.txt links OpenMP::OpenMP_C).
    omp_halo | omp_stencil) echo "$1.c -fopenmp" ;;
    *)
      local f
      for f in "$SRC/tests/apps/$1".{c,cpp,f90,F90}; do
        [[ -e $f ]] && { echo "${f##*/}"; return; }
      done
      ;;
  esac
}

# Builds app_NAME for MPICH into $2; 1 (and a failure) when it cannot.
mpich_build() {
  local name=$1 out=$2 srcs cc args=() s
  srcs=$(mpich_sources "$name")
  if [[ -z $srcs ]]; then
    bad "$name: no source in tests/apps"
    return 1
  fi
  for s in $srcs; do
    if [[ $s == -* ]]; then args+=("$s"); else args+=("$SRC/tests/apps/$s"); fi
  done
  case ${srcs%% *} in
    *.c) cc=$MCC; args+=(-pthread) ;;
    *.cpp) cc=$MCXX; args+=(-pthread -DMPICH_SKIP_MPICXX=1) ;;
    *) cc=$MFC ;;
  esac
  if ! $cc -O1 -g -I"$SRC/tests/apps" "${args[@]}" -o "$out" -lm 2>"$out.err"; then
    bad "$name: $cc could not build the program: $(head -c 400 "$out.err")"
    return 1
  fi
}

mpich_bench_one() {
  local name=$1 np=$2 steps=$3
  shift 3
  bench_parse_gen "$@"
  shift "$BENCH_GEN_SHIFT"
  local what="$name under MPICH at $np ranks" d="$WORK/mpich-$name-np$np" t0=$SECONDS
  mpich_record "$name" "$np" "$steps" "$what" "$d" || return 0
  # Dynamic scope: bench_generate_run_diff sees MPICH's compiler and launcher.
  local BENCH_CC=$MCC
  local -a BENCH_RUN=("$MRUN" -n)
  bench_generate_run_diff "$what" "$d" "$np" "$t0" "$@"
}

mpich_refused_one() {
  local name=$1 np=$2 steps=$3 what="$1 under MPICH at $2 ranks" d="$WORK/mpich-$1-np$2"
  mpich_record "$name" "$np" "$steps" "$what" "$d" || return 0
  shift 3
  bench_refusal "$what" "$d" "$@"
}

# mpich_record NAME NP STEPS WHAT DIR: the program built with MPICH's
# wrappers and recorded under mpiexec.mpich into DIR/t.tf (counted as a
# check; a failure is reported and returns 1).
mpich_record() {
  local name=$1 np=$2 steps=$3 what=$4 d=$5
  CHECKS=$((CHECKS + 1))
  mkdir -p "$d"
  mpich_build "$name" "$d/app" || return 1
  limited "$d/out.txt" "$d/err.txt" "$TF" record -o "$d/t.tf" -- "$MRUN" -n "$np" "$d/app" "$steps"
  if [[ $LRC -ne 0 || ! -s $d/t.tf ]]; then
    bad "$what: recording the program failed ($LRC)"
    show_run "$d/out.txt" "$d/err.txt"
    return 1
  fi
}

# mpich_part LIST FIRST [COUNT]: entries FIRST .. FIRST+COUNT-1 of the named
# list (bench_lib.bash), to its end without COUNT, so that a program added
# to a list is run by the list's last part. Every program runs under MPICH
# too: amg_like and wild_statuses poll far more often under MPICH on a
# loaded machine (600,000 MPI_Iprobe, 160,000 MPI_Testsome calls seen at 3
# steps), and the generator writes such a poll's values as the trace's runs,
# whose number follows the messages, not the polls.
mpich_part() {
  local -n part_list=$1
  local p
  local slice=("${part_list[@]:$2}")
  [[ -n ${3:-} ]] && slice=("${part_list[@]:$2:$3}")
  for p in "${slice[@]}"; do
    # shellcheck disable=SC2086
    mpich_bench_one $p
  done
}
