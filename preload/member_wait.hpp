// A pruned member's wait for its root (all to one: Gather, Reduce, their v
// forms). The thesis' rule keeps a rooted collective on the root and on the
// members that had I/O since they last met it: information flows up, so a
// member with none is pruned and its call's time passes as computation. But
// a member's call waits for the root where the transfer is a rendezvous
// (MPICH above its eager limit), and the root is late by its I/O: that I/O's
// traced pace, replayed as the member's computation on any target, would set
// the predicted time, whatever the target's file system. The
// replay never makes a member wait for its root; the root's own record
// reproduces its pace. So only a pruned member call's cost stays in the
// computation: its call site's shortest call (the transfer when the root was
// there first), or the call's own time within 1.5 times that; the rest is
// left out of the gap as the tracer's own time is.
// Known limit: where no call of a site ever came after its root, the
// shortest still holds some waiting.
#pragma once

#include "preload/call.hpp"

namespace mpior::preload::mpi {

// After c.stop(), before c is pruned: leaves out what c's duration holds
// above its call site's floor. Returns the ticks left out.
int64_t leave_out_member_wait(Call& c) noexcept;

}  // namespace mpior::preload::mpi
