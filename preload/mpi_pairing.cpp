// A tracer built for one MPI preloaded into a program linked with the other
// (libmpior.so under Open MPI, libmpior-openmpi.so under MPICH) cannot even
// pass calls through: the handles' types differ (int and pointer), so every
// wrapper would hand the MPI truncated handles. At load, before the
// program's own code runs, the library looks for the other MPI and, finding
// it, runs the program again without itself: one message, the program
// untraced.
#include "preload/mpi_pairing.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "preload/mpi_abi.hpp"

namespace mpior::preload::mpi {

namespace {

// A symbol only the other MPI's library defines.
#if defined(OPEN_MPI)
constexpr const char* kOtherMpiSymbol = "MPII_Version_string";  // libmpich
#else
constexpr const char* kOtherMpiSymbol = "ompi_mpi_comm_world";  // libmpi (Open MPI)
#endif

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// LD_PRELOAD without this library (entries separated by spaces or colons).
std::string preload_without(const char* value, const std::string& self) {
  std::string out, item;
  auto flush = [&] {
    if (!item.empty() && base_name(item) != self) out += (out.empty() ? "" : " ") + item;
    item.clear();
  };
  for (const char* p = value; *p; ++p) {
    if (*p == ' ' || *p == ':')
      flush();
    else
      item += *p;
  }
  flush();
  return out;
}

bool first_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* r = std::getenv(v)) return std::strcmp(r, "0") == 0;
  return true;
}

}  // namespace

bool other_mpi_loaded() noexcept { return dlsym(RTLD_DEFAULT, kOtherMpiSymbol) != nullptr; }

void run_untraced(char** argv, char** envp) noexcept {
  Dl_info info{};
  std::string self = kLibName;
  if (dladdr(reinterpret_cast<void*>(&run_untraced), &info) && info.dli_fname) self = base_name(info.dli_fname);
  if (first_rank())
    std::fprintf(stderr,
                 "mpior: %s is the tracer for %s, but this program uses %s: it runs untraced. "
                 "Preload %s instead (mpior-trace picks the right one; MPIOR_MPI=%s tells it).\n",
                 self.c_str(), kMpiName, kOtherMpiName, kOtherLibName, kOtherMpiKey);
  std::vector<std::string> env;
  for (char** e = envp; e && *e; ++e) {
    if (std::strncmp(*e, "LD_PRELOAD=", 11) == 0) {
      std::string rest = preload_without(*e + 11, self);
      if (!rest.empty()) env.push_back("LD_PRELOAD=" + rest);
    } else {
      env.push_back(*e);
    }
  }
  std::vector<char*> envv;
  for (std::string& e : env) envv.push_back(e.data());
  envv.push_back(nullptr);
  execve("/proc/self/exe", argv, envv.data());
  std::fprintf(stderr, "mpior: cannot run %s again without the tracer: %s\n", argv && argv[0] ? argv[0] : "the program",
               std::strerror(errno));
  _exit(127);
}

}  // namespace mpior::preload::mpi
