// Test helper: prints "RANK R|W OFFSET BYTES", one line per POSIX read or
// write made inside another call (ROMIO's, under MPI-IO) in a plan, on
// files whose path contains PATTERN, so a test can compare the transfers of
// two plans rank by rank whatever loops and rank lists fold them. An AIO
// request submitted inside another call (OMPIO's asynchronous writes)
// counts once, at its completion, with the bytes it moved. With --calls,
// each line ends with the call's name (pwrite, pwritev, aio_write...).
// usage: plan_transfers PLAN_DIR_OR_FILE [PATTERN] [--calls]
#include <cstdio>
#include <filesystem>
#include <string>

#include "trace/arg_views.hpp"
#include "trace/cursor.hpp"
#include "trace/format.hpp"
#include "trace/tool_error.hpp"
#include "trace/transfer.hpp"

using namespace mpior;

namespace {

bool nested_transfer(const trace::Event& ev) {
  if (ev.op() == trace::OpClass::adone) return ev.args[trace::arg::submit_depth] > 0;
  return ev.depth > 0 && trace::info(ev.kind).family == trace::Family::posix &&
         (ev.op() == trace::OpClass::read || ev.op() == trace::OpClass::write);
}

void print(const trace::Plan& plan, const std::string& want, bool calls) {
  for (const trace::Stream& s : plan.streams)
    for (int64_t r : s.rank_list()) {
      const auto& files = plan.ranks[size_t(r)].files;
      trace::EventCursor c(s, int32_t(r));
      trace::Event ev;
      while (c.next(ev)) {
        trace::Transfer t[2];
        if (!nested_transfer(ev) || trace::transfers(ev, t) != 1) continue;
        int64_t file = ev.args[t[0].file_slot];
        if (file < 0 || size_t(file) >= files.size()) continue;
        if (plan.files[size_t(files[size_t(file)])].path.find(want) == std::string::npos) continue;
        std::printf("%lld %c %lld %lld", (long long)r, t[0].write ? 'W' : 'R', (long long)t[0].offset,
                    (long long)t[0].bytes);
        if (calls) std::printf(" %.*s", int(trace::info(ev.kind).name.size()), trace::info(ev.kind).name.data());
        std::printf("\n");
      }
    }
}

}  // namespace

int main(int argc, char** argv) {
  bool calls = argc > 1 && std::string(argv[argc - 1]) == "--calls";
  if (calls) --argc;
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: plan_transfers PLAN [PATTERN] [--calls]\n");
    return 2;
  }
  std::string path = argv[1];
  if (std::filesystem::is_directory(path)) path = (std::filesystem::path(path) / trace::kPlanFileName).string();
  try {
    print(trace::read_plan(path), argc > 2 ? argv[2] : "", calls);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plan_transfers: %s\n", e.what());
    return 1;
  }
  return 0;
}
