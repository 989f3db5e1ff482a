// Flattens an MPI datatype into its contiguous pieces by walking its
// constructors (MPI_Type_get_envelope / get_contents), as ROMIO flattens a
// filetype: the view a file access goes through.
#include <algorithm>

#include "preload/mpiio_handlers.hpp"
#include "preload/real_table.hpp"

namespace mpior::preload::mpi {

namespace {

struct TypePmpi {
  decltype(&::PMPI_Type_get_envelope) envelope = nullptr;
  decltype(&::PMPI_Type_get_contents) contents = nullptr;
  decltype(&::PMPI_Type_get_extent_x) extent = nullptr;
  decltype(&::PMPI_Type_get_true_extent_x) true_extent = nullptr;
  decltype(&::PMPI_Type_size_x) size = nullptr;
  decltype(&::PMPI_Type_free) free = nullptr;
  bool ok = false;
};

const TypePmpi& tp() {
  static TypePmpi p = [] {
    TypePmpi t;
    t.envelope = reinterpret_cast<decltype(t.envelope)>(real::resolve("PMPI_Type_get_envelope"));
    t.contents = reinterpret_cast<decltype(t.contents)>(real::resolve("PMPI_Type_get_contents"));
    t.extent = reinterpret_cast<decltype(t.extent)>(real::resolve("PMPI_Type_get_extent_x"));
    t.true_extent = reinterpret_cast<decltype(t.true_extent)>(real::resolve("PMPI_Type_get_true_extent_x"));
    t.size = reinterpret_cast<decltype(t.size)>(real::resolve("PMPI_Type_size_x"));
    t.free = reinterpret_cast<decltype(t.free)>(real::resolve("PMPI_Type_free"));
    t.ok = t.envelope && t.contents && t.extent && t.true_extent && t.size && t.free;
    return t;
  }();
  return p;
}

class Flattener {
 public:
  Flattener(std::vector<Block>& out, size_t cap) : out_(out), cap_(cap) {}
  bool ok() const { return ok_; }

  // `count` copies of t, the first at byte displacement disp.
  void repeat(MPI_Datatype t, int64_t disp, int64_t count) {
    if (!ok_ || count <= 0) return;
    MPI_Count lb = 0, extent = 0, tlb = 0, textent = 0, size = 0;
    tp().extent(t, &lb, &extent);
    tp().true_extent(t, &tlb, &textent);
    tp().size(t, &size);
    if (size == textent && size == extent) return emit(disp + tlb, int64_t(size) * count);
    for (int64_t i = 0; i < count && ok_; ++i) one(t, disp + i * int64_t(extent));
  }

 private:
  void emit(int64_t off, int64_t len) {
    if (len <= 0) return;
    if (!out_.empty() && out_.back().offset + out_.back().length == off) {
      out_.back().length += len;
      return;
    }
    if (out_.size() >= cap_) {
      ok_ = false;
      return;
    }
    out_.push_back({off, len});
  }

  static int64_t extent_of(MPI_Datatype t) {
    MPI_Count lb = 0, extent = 0;
    tp().extent(t, &lb, &extent);
    return extent;
  }

  void one(MPI_Datatype t, int64_t disp);
  void subarray(const std::vector<int>& ints, MPI_Datatype old, int64_t disp);

  std::vector<Block>& out_;
  size_t cap_;
  bool ok_ = true;
};

void Flattener::one(MPI_Datatype t, int64_t disp) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  tp().envelope(t, &ni, &na, &nd, &combiner);
  if (combiner == MPI_COMBINER_NAMED) {
    MPI_Count size = 0;
    tp().size(t, &size);
    return emit(disp, size);
  }
  std::vector<int> ints(size_t(ni) + 1);
  std::vector<MPI_Aint> addrs(size_t(na) + 1);
  std::vector<MPI_Datatype> types(size_t(nd) + 1);
  tp().contents(t, ni, na, nd, ints.data(), addrs.data(), types.data());
  int64_t e = nd > 0 ? extent_of(types[0]) : 0;
  int n = ni > 0 ? ints[0] : 0;
  switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
      repeat(types[0], disp, 1);
      break;
    case MPI_COMBINER_CONTIGUOUS:
      repeat(types[0], disp, n);
      break;
    case MPI_COMBINER_VECTOR:
      for (int i = 0; i < n && ok_; ++i) repeat(types[0], disp + int64_t(i) * ints[2] * e, ints[1]);
      break;
    case MPI_COMBINER_HVECTOR:
      for (int i = 0; i < n && ok_; ++i) repeat(types[0], disp + int64_t(i) * addrs[0], ints[1]);
      break;
    case MPI_COMBINER_INDEXED:
      for (int i = 0; i < n && ok_; ++i)
        repeat(types[0], disp + int64_t(ints[size_t(n + 1 + i)]) * e, ints[size_t(1 + i)]);
      break;
    case MPI_COMBINER_HINDEXED:
      for (int i = 0; i < n && ok_; ++i) repeat(types[0], disp + addrs[size_t(i)], ints[size_t(1 + i)]);
      break;
    case MPI_COMBINER_INDEXED_BLOCK:
      for (int i = 0; i < n && ok_; ++i) repeat(types[0], disp + int64_t(ints[size_t(2 + i)]) * e, ints[1]);
      break;
    case MPI_COMBINER_HINDEXED_BLOCK:
      for (int i = 0; i < n && ok_; ++i) repeat(types[0], disp + addrs[size_t(i)], ints[1]);
      break;
    case MPI_COMBINER_STRUCT:
      for (int i = 0; i < n && ok_; ++i) repeat(types[size_t(i)], disp + addrs[size_t(i)], ints[size_t(1 + i)]);
      break;
    case MPI_COMBINER_SUBARRAY:
      subarray(ints, types[0], disp);
      break;
    default:  // darray and the rest
      ok_ = false;
  }
  for (int i = 0; i < nd; ++i) {
    int a = 0, b = 0, c = 0, comb = 0;
    tp().envelope(types[size_t(i)], &a, &b, &c, &comb);
    if (comb != MPI_COMBINER_NAMED) tp().free(&types[size_t(i)]);
  }
}

// ints: ndims, sizes[ndims], subsizes[ndims], starts[ndims], order.
void Flattener::subarray(const std::vector<int>& ints, MPI_Datatype old, int64_t disp) {
  size_t nd = size_t(ints[0]);
  std::vector<int64_t> sizes(nd), sub(nd), start(nd);
  for (size_t k = 0; k < nd; ++k) {
    sizes[k] = ints[1 + k];
    sub[k] = ints[1 + nd + k];
    start[k] = ints[1 + 2 * nd + k];
  }
  if (ints[1 + 3 * nd] == MPI_ORDER_FORTRAN) {  // fastest dimension first: reverse to C order
    std::reverse(sizes.begin(), sizes.end());
    std::reverse(sub.begin(), sub.end());
    std::reverse(start.begin(), start.end());
  }
  int64_t e = extent_of(old);
  std::vector<int64_t> stride(nd, 1);
  for (size_t k = nd - 1; k > 0; --k) stride[k - 1] = stride[k] * sizes[k];
  std::vector<int64_t> idx(nd, 0);
  for (size_t k = 0; k < nd; ++k)
    if (sub[k] <= 0) return;
  while (ok_) {
    int64_t elem = 0;
    for (size_t k = 0; k < nd; ++k) elem += (start[k] + idx[k]) * stride[k];
    repeat(old, disp + elem * e, sub[nd - 1]);
    size_t k = nd - 1;  // next row: odometer over every dimension but the last
    while (k > 0 && ++idx[k - 1] == sub[k - 1]) idx[--k] = 0;
    if (k == 0) break;
  }
}

}  // namespace

bool flatten_type(MPI_Datatype t, std::vector<Block>& out, size_t max_blocks) noexcept {
  if (!tp().ok) return false;
  try {
    Flattener f(out, max_blocks);
    f.repeat(t, 0, 1);
    return f.ok();
  } catch (...) {
    return false;
  }
}

}  // namespace mpior::preload::mpi
