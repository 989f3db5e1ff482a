// The records of a rooted collective request on an intercommunicator (icoll,
// pinit, start and completion records with req_kind kReqColl): peer holds the
// root's place in the members list (kProcNull for the root's group's other
// members), slot 7 the remote group's size (> 0), and flag::remote_first says
// the remote group is listed first (otherwise it follows the local group).
#pragma once

#include <cstdint>

namespace mpior::trace {

namespace arg {
inline constexpr int coll_remote_size = 7;
}  // namespace arg
namespace flag {
inline constexpr uint8_t remote_first = 16;
}  // namespace flag

// Where such a request's remote group starts in a members list of n.
inline int64_t coll_remote_begin(uint8_t flags, int64_t remote_size, int64_t n) {
  return (flags & flag::remote_first) ? 0 : n - remote_size;
}

}  // namespace mpior::trace
