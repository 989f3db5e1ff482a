/* Preprocessed per MPI at build time (preload/<mpi>/meson.build): what its
 * mpi.h declares decides which wrappers that build of the tracer has. */
#include <mpi.h>
