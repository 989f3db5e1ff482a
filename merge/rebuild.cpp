#include "merge/rebuild.hpp"

#include <algorithm>
#include <utility>

#include "merge/merge.hpp"

namespace mpior::merge {

std::vector<trace::Stream> merge_rebuilt(std::vector<trace::Stream> streams) {
  std::stable_sort(streams.begin(), streams.end(), [](const trace::Stream& a, const trace::Stream& b) {
    return std::pair(a.thread, a.rank_list().front()) < std::pair(b.thread, b.rank_list().front());
  });
  return merge_streams(std::move(streams));
}

}  // namespace mpior::merge
