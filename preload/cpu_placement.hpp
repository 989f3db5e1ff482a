// Where this rank may run, read once at trace start (trace::CpuPlacement).
#pragma once

#include <string_view>

#include "trace/model.hpp"

namespace mpior::preload {

// The CPUs in a kernel CPU list ("0-3,8,10-11": 7); -1 when it is not one.
int count_cpu_list(std::string_view list);

// The calling thread's affinity mask against the CPUs the processes of its
// cgroup may use (cpuset v2 or v1; else the node's online CPUs): a container
// given 4 of a node's 64 CPUs runs unbound ranks on all 4, not bound ones.
trace::CpuPlacement current_placement();

}  // namespace mpior::preload
