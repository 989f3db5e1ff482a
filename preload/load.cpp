// The library's entry point: runs when libmpior.so is loaded, before the
// program's own constructors (only in the shared library, so unit tests that
// link the tracer's code do not trace themselves).
#include "session.hpp"

__attribute__((constructor(101))) static void mpior_load() { mpior::preload::session::on_load(); }
