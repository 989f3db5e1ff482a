#include "preload/mpiio_hint_capture.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "preload/fd_table.hpp"
#include "preload/real_table.hpp"
#include "preload/thread_state.hpp"
#include "trace/mpiio_hints.hpp"

namespace mpior::preload::mpi {

namespace {

constexpr size_t kKeys = trace::kMpiioHintKeys.size();
using GivenBits = uint32_t;
static_assert(kKeys <= sizeof(GivenBits) * 8);

// One kept set: values by key index ("" when the library reported none).
struct Kept {
  int32_t file = -1;
  std::string values[kKeys];
  GivenBits reported = 0, given = 0;
};

// The info functions are local calls the tracer does not wrap: the next
// definitions, found once.
struct InfoCalls {
  int (*get_valuelen)(MPI_Info, const char*, int*, int*) = nullptr;
  int (*get)(MPI_Info, const char*, int, char*, int*) = nullptr;
  int (*free)(MPI_Info*) = nullptr;
  bool ok() const { return get_valuelen && get && free; }
};

InfoCalls& info_calls() {
  static InfoCalls c{reinterpret_cast<decltype(InfoCalls::get_valuelen)>(real::resolve("PMPI_Info_get_valuelen")),
                     reinterpret_cast<decltype(InfoCalls::get)>(real::resolve("PMPI_Info_get")),
                     reinterpret_cast<decltype(InfoCalls::free)>(real::resolve("PMPI_Info_free"))};
  return c;
}

struct Hints {
  std::mutex mutex;
  std::vector<Kept> kept;
  uint64_t dropped = 0;
  std::unordered_map<MPI_File, GivenBits> given;  // per open handle
};
Hints& hints() {
  static Hints* h = new Hints;  // used by exit-time writes: never destroyed
  return *h;
}

GivenBits keys_in(const InfoCalls& calls, MPI_Info info) {
  GivenBits bits = 0;
  if (info == MPI_INFO_NULL) return bits;
  for (size_t k = 0; k < kKeys; ++k) {
    int len = 0, flag = 0;
    if (calls.get_valuelen(info, trace::kMpiioHintKeys[k].data(), &len, &flag) == MPI_SUCCESS && flag)
      bits |= GivenBits(1) << k;
  }
  return bits;
}

// The value of key k in info into buf (MPI_MAX_INFO_VAL + 1 bytes); false
// when the library reports none.
bool value_of(const InfoCalls& calls, MPI_Info info, size_t k, char* buf) {
  int flag = 0;
  if (calls.get(info, trace::kMpiioHintKeys[k].data(), MPI_MAX_INFO_VAL, buf, &flag) != MPI_SUCCESS || !flag)
    return false;
  buf[MPI_MAX_INFO_VAL] = '\0';
  return true;
}

// Whether the file's effective info equals the set kept last for it,
// compared in place (nothing allocated).
bool same_as_kept(const InfoCalls& calls, const Kept* last, MPI_Info now, GivenBits given, char* buf) {
  if (!last || last->given != given) return false;
  for (size_t k = 0; k < kKeys; ++k) {
    bool has = value_of(calls, now, k, buf);
    if (has != bool(last->reported >> k & 1) || (has && last->values[k] != buf)) return false;
  }
  return true;
}

void keep(Hints& h, const InfoCalls& calls, int32_t file, MPI_Info now, GivenBits given, char* buf) {
  if (h.kept.size() >= trace::kMaxHintSets) {
    ++h.dropped;
    return;
  }
  Kept k;
  k.file = file;
  k.given = given;
  for (size_t i = 0; i < kKeys; ++i)
    if (value_of(calls, now, i, buf)) {
      k.values[i] = buf;
      k.reported |= GivenBits(1) << i;
    }
  h.kept.push_back(std::move(k));
}

}  // namespace

void note_hints(MPI_File fh, int32_t file, MPI_Info given) noexcept {
  TracerGuard guard;
  try {
    InfoCalls& calls = info_calls();
    auto get_info = real::get_MPI_File_get_info();
    if (!calls.ok() || !get_info || fh == MPI_FILE_NULL || file < 0) return;
    Hints& h = hints();
    std::lock_guard<std::mutex> lk(h.mutex);
    GivenBits& bits = h.given[fh];
    bits |= keys_in(calls, given);
    MPI_Info now = MPI_INFO_NULL;
    if (get_info(fh, &now) != MPI_SUCCESS || now == MPI_INFO_NULL) return;
    char buf[MPI_MAX_INFO_VAL + 1];
    const Kept* last = nullptr;
    for (auto it = h.kept.rbegin(); it != h.kept.rend() && !last; ++it)
      if (it->file == file) last = &*it;
    if (!same_as_kept(calls, last, now, bits, buf)) keep(h, calls, file, now, bits, buf);
    calls.free(&now);
  } catch (...) {
  }
}

void forget_hints(MPI_File fh) noexcept {
  try {
    Hints& h = hints();
    std::lock_guard<std::mutex> lk(h.mutex);
    h.given.erase(fh);
  } catch (...) {
  }
}

HintSets hint_sets() {
  Hints& h = hints();
  std::lock_guard<std::mutex> lk(h.mutex);
  HintSets out;
  out.dropped = h.dropped;
  for (const Kept& k : h.kept) {
    trace::MpiioHintSet s;
    s.path = files().path(k.file);
    for (size_t i = 0; i < kKeys; ++i)
      if (k.reported >> i & 1)
        s.hints.push_back({std::string(trace::kMpiioHintKeys[i]), k.values[i], bool(k.given >> i & 1)});
    out.sets.push_back(std::move(s));
  }
  return out;
}

const char* forced_fcoll() noexcept {
  const char* v = getenv("OMPI_MCA_fcoll");
  return v ? v : "";
}

}  // namespace mpior::preload::mpi
