#include "trace/kind.hpp"

#include <array>

namespace mpior::trace {
namespace {

constexpr std::array<std::string_view, size_t(kLastOpClass) + 1> kOpNames = {
    "open",       "close",       "read",       "write",      "seek",       "tell",       "sync",        "truncate",
    "dup",        "unlink",      "rename",     "mkdir",      "rmdir",      "stat",       "access",      "fopen",
    "fclose",     "allocate",    "copy",       "link",       "opendir",    "readdir",    "closedir",    "advise",
    "asubmit",    "alist",       "atest",      "await",      "acancel",    "adone",      "map",         "unmap",
    "msync",      "remap",       "init",       "finalize",   "send",       "isend",      "recv",        "irecv",
    "sendrecv",   "wait",        "test",       "barrier",    "allcoll",    "bcast",      "scatter",     "reduce",
    "gather",     "comm_create", "comm_free",  "complete",   "member",     "mpiio_open", "mpiio_close", "mpiio_delete",
    "mpiio_read", "mpiio_write", "mpiio_view", "mpiio_seek", "mpiio_size", "mpiio_sync", "mpiio_other", "mpiio_block",
    "pinit",      "start",       "icoll",      "probe",      "cancel",     "request",    "comm_local",  "process",
    "topology"};

}  // namespace

std::string_view name(OpClass op) { return kOpNames[size_t(op)]; }

std::optional<Kind> kind_from_name(std::string_view n) {
  for (size_t i = 0; i < kNumKinds; ++i)
    if (kKindInfos[i].name == n) return Kind(i);
  return std::nullopt;
}

}  // namespace mpior::trace
