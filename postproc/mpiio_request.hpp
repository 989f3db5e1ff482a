// One rank's request in an MPI-IO call, through its file view: the file
// pieces the call's bytes cover (shared by the dealing of collective and
// strided calls, postproc/aggregators.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "postproc/romio_layout.hpp"

namespace mpior::postproc {

// A file's view on one rank: tile k of the filetype covers [disp + k *
// extent, + extent), its data in `blocks` (offset within the tile, length).
struct View {
  int64_t disp = 0, extent = 0;
  bool flat = true;  // blocks recorded (else taken as contiguous)
  std::vector<ByteRange> blocks;
  // OMPIO's view statistics: the average contiguous chunk and the data
  // bytes of one tile (its default view: 6 MiB of bytes).
  std::pair<int64_t, int64_t> chunk_and_size() const {
    if (!flat || blocks.empty()) return {6 << 20, 6 << 20};
    int64_t size = 0;
    for (const ByteRange& b : blocks) size += b.second;
    return {size / int64_t(blocks.size()), size};
  }
  bool contiguous() const {
    return !flat || extent <= 0 || blocks.empty() ||
           (blocks.size() == 1 && blocks[0].first == 0 && blocks[0].second == extent);
  }
  // The file pieces [from, from + n) that `bytes` data bytes from `at`
  // cover, in order (the replayer's walk of a view, replayer/mpiio_replay.cpp).
  template <typename F>
  void walk(int64_t at, int64_t bytes, F&& piece) const {
    if (bytes <= 0) return;
    if (contiguous() || at < disp) return piece(at, bytes);
    int64_t tile = (at - disp) / extent, within = (at - disp) % extent;
    size_t b = 0;
    while (b < blocks.size() && blocks[b].first + blocks[b].second <= within) ++b;
    for (int64_t done = 0; done < bytes; ++b) {
      if (b == blocks.size()) b = 0, ++tile, within = 0;
      auto [off, len] = blocks[b];
      int64_t from = std::max(within, off), n = std::min(bytes - done, off + len - from);
      piece(disp + tile * extent + from, n);
      done += n, within = from + n;
    }
  }
};

// What a rank asked for: its request's first and last byte; its pieces are
// walked again from its view when needed (a view of many blocks at
// thousands of ranks would hold them for every call at once).
struct Asked {
  Request extent;
  int64_t at = 0, bytes = 0;
  std::shared_ptr<const View> view;
  Asked(int64_t at_, int64_t bytes_, std::shared_ptr<const View> v)
      : extent{at_, at_ - 1}, at(at_), bytes(bytes_), view(std::move(v)) {
    bool first = true;
    view->walk(at, bytes, [&](int64_t from, int64_t n) {
      if (first) extent.first = from, first = false;
      extent.last = from + n - 1;
    });
  }
  // Adjacent pieces joined.
  std::vector<ByteRange> pieces() const {
    std::vector<ByteRange> out;
    view->walk(at, bytes, [&](int64_t from, int64_t n) {
      if (!out.empty() && out.back().second == from)
        out.back().second += n;
      else
        out.emplace_back(from, from + n);
    });
    return out;
  }
};

}  // namespace mpior::postproc
