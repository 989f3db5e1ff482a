// The tracer's side of the typed argument views (arg_views.hpp): the same
// fields, generated from the same @view lines of trace/api/*.list into
// trace/arg_setters.inc, to fill a record: file_args_mut(ev).offset() = off.
// No check of the record's kind: the store is on the intercepted call's
// path, each handler fills the records of the kinds it handles, and what it
// wrote is checked where it is read (file_args(ev) throws for a record of
// another family). A setter compiles to the raw store.
#pragma once

#include <cstdint>

#include "trace/event.hpp"
#include "trace/inter_request.hpp"  // arg:: constants of the MPI view

namespace mpior::trace {

// A record's slots, or a slot array itself (the slots of a record to come).
template <class E>
int64_t* slots_of(E& e) {
  if constexpr (requires { e.args; })
    return e.args.data();
  else
    return e.data();
}

#include "trace/arg_setters.inc"

}  // namespace mpior::trace
