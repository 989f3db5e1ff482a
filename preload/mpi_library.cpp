#include "preload/mpi_library.hpp"

#include <mpi.h>

#include <atomic>

#include "preload/mpi_state.hpp"

namespace mpior::preload::mpi {

namespace {
std::atomic<bool> g_ompio_opened{false};
}  // namespace

std::string library_version() {
  if (!pmpi::Get_library_version) pmpi::resolve();
  if (!pmpi::Get_library_version) return "";
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (pmpi::Get_library_version(text, &len) != MPI_SUCCESS) return "";
  std::string out(text, size_t(len > 0 ? len : 0));
  if (size_t nl = out.find('\n'); nl != std::string::npos) out.resize(nl);
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t' || out.back() == '\0')) out.pop_back();
  return out;
}

const char* io_layer() noexcept {
#if defined(OPEN_MPI)
  return g_ompio_opened.load(std::memory_order_relaxed) ? "ompio" : "";
#else
  return "romio";
#endif
}

void note_ompio_open() noexcept { g_ompio_opened.store(true, std::memory_order_relaxed); }

}  // namespace mpior::preload::mpi
