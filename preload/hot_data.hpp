// Declares one of the globals every recorded call reads, defined together in
// preload/hot_data.cpp. Hidden, as the library's own definitions are
// (-fvisibility=hidden reaches definitions only): the hot path then loads it
// from its address, not through the GOT.
#pragma once

#define MPIOR_HOT_EXTERN extern __attribute__((visibility("hidden")))
