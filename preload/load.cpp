// The library's entry point: runs when libmpior.so is loaded, before the
// program's own constructors (only in the shared library, so unit tests that
// link the tracer's code do not trace themselves). glibc passes constructors
// the program's arguments and environment.
#include "preload/mpi_pairing.hpp"
#include "preload/session.hpp"

__attribute__((constructor(101))) static void mpior_load(int, char** argv, char** envp) {
  if (mpior::preload::mpi::other_mpi_loaded()) mpior::preload::mpi::run_untraced(argv, envp);
  mpior::preload::session::on_load();
}
