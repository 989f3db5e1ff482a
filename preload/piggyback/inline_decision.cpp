#include "preload/piggyback/inline_decision.hpp"

#include <cstring>

#include "preload/mpi_state.hpp"

namespace mpior::piggyback {

namespace pmpi = preload::mpi::pmpi;

namespace {

enum : uint8_t { kI32 = 1, kI64, kU32, kU64, kF32, kF64 };

template <typename T>
void put(void* p, int v) {
  T x = T(v);
  std::memcpy(p, &x, sizeof x);
}
template <typename T>
bool is_zero(const void* p) {
  T x;
  std::memcpy(&x, p, sizeof x);
  return x == T(0);
}

uint8_t element_type(MPI_Datatype t) {
  if (t == MPI_INT || t == MPI_INT32_T) return sizeof(int) == 4 ? kI32 : 0;
  if (t == MPI_LONG) return sizeof(long) == 8 ? kI64 : kI32;
  if (t == MPI_LONG_LONG || t == MPI_LONG_LONG_INT || t == MPI_INT64_T) return kI64;
  if (t == MPI_UNSIGNED || t == MPI_UINT32_T) return kU32;
  if (t == MPI_UNSIGNED_LONG) return sizeof(unsigned long) == 8 ? kU64 : kU32;
  if (t == MPI_UNSIGNED_LONG_LONG || t == MPI_UINT64_T) return kU64;
  if (t == MPI_FLOAT) return kF32;
  if (t == MPI_DOUBLE) return kF64;
  return 0;
}

}  // namespace

bool codec_for(MPI_Datatype t, MPI_Op op, FlagCodec* codec) {
  uint8_t type = element_type(t);
  if (!type) return false;
  bool floating = type == kF32 || type == kF64;
  if (op == MPI_SUM || op == MPI_MAX || (!floating && (op == MPI_LOR || op == MPI_BOR)))
    codec->zero_logs = false;
  else if (op == MPI_MIN || (!floating && (op == MPI_LAND || op == MPI_BAND)))
    codec->zero_logs = true;
  else
    return false;
  codec->type = type;
  codec->size = type == kI64 || type == kU64 || type == kF64 ? 8 : 4;
  return true;
}

void encode_flag(const FlagCodec& codec, void* element, bool log) {
  int v = codec.zero_logs ? !log : log;
  switch (codec.type) {
    case kI32:
      return put<int32_t>(element, v);
    case kI64:
      return put<int64_t>(element, v);
    case kU32:
      return put<uint32_t>(element, v);
    case kU64:
      return put<uint64_t>(element, v);
    case kF32:
      return put<float>(element, v);
    default:
      return put<double>(element, v);
  }
}

bool decode_flag(const FlagCodec& codec, const void* element) {
  bool zero;
  switch (codec.type) {
    case kI32:
      zero = is_zero<int32_t>(element);
      break;
    case kI64:
      zero = is_zero<int64_t>(element);
      break;
    case kU32:
      zero = is_zero<uint32_t>(element);
      break;
    case kU64:
      zero = is_zero<uint64_t>(element);
      break;
    case kF32:
      zero = is_zero<float>(element);
      break;
    default:
      zero = is_zero<double>(element);
      break;
  }
  return codec.zero_logs ? zero : !zero;
}

int allreduce_with_flag(const FlagCodec& codec, const void* sendbuf, void* recvbuf, int count, MPI_Datatype t,
                        MPI_Op op, MPI_Comm comm, bool mine, bool* log) {
  alignas(16) char in[kInlineMax + 16], out[kInlineMax + 16];
  size_t n = size_t(count) * codec.size;
  if (n) std::memcpy(in, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, n);
  encode_flag(codec, in + n, mine);
  int rc = pmpi::Allreduce(in, out, count + 1, t, op, comm);
  *log = true;
  if (rc != MPI_SUCCESS) return rc;
  if (n) std::memcpy(recvbuf, out, n);
  *log = decode_flag(codec, out + n);
  return rc;
}

namespace {
// Where count elements of t lie as one run of bytes: their first byte, or
// nullptr when t has gaps (then they are packed).
char* contiguous(void* buffer, int count, MPI_Datatype t, int64_t bytes) {
  if (count == 0 || bytes == 0) return static_cast<char*>(buffer);  // nothing to move (t may be null)
  MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (pmpi::Type_get_extent_x(t, &lb, &extent) != MPI_SUCCESS ||
      pmpi::Type_get_true_extent_x(t, &true_lb, &true_extent) != MPI_SUCCESS)
    return nullptr;
  MPI_Count size = bytes / count;
  if (true_extent != size || (count > 1 && extent != size)) return nullptr;
  return static_cast<char*>(buffer) + true_lb;
}
}  // namespace

int bcast_with_flag(void* buffer, int count, MPI_Datatype t, int64_t bytes, int root, bool am_root, MPI_Comm comm,
                    bool mine, bool* log) {
  alignas(16) char tmp[kInlineMax + 16];
  size_t n = size_t(bytes);
  char* run = contiguous(buffer, count, t, bytes);
  if (am_root) {
    int pos = 0;
    if (run) {
      if (n) std::memcpy(tmp, run, n);
    } else if (pmpi::Pack(buffer, count, t, tmp, int(n), &pos, comm) != MPI_SUCCESS)
      std::memset(tmp, 0, n);  // invalid arguments: the untraced call would have failed too
    tmp[n] = char(mine);
  }
  int rc = pmpi::Bcast(tmp, int(n + 1), MPI_BYTE, root, comm);
  *log = true;
  if (rc != MPI_SUCCESS) return rc;
  *log = tmp[n] != 0;
  if (!am_root) {
    int pos = 0;
    if (run) {
      if (n) std::memcpy(run, tmp, n);
    } else
      rc = pmpi::Unpack(tmp, int(n), &pos, buffer, count, t, comm);
  }
  return rc;
}

}  // namespace mpior::piggyback
