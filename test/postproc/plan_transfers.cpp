// Test helper: prints "RANK R|W OFFSET BYTES", one line per POSIX read or
// write made inside another call (ROMIO's, under MPI-IO) in a plan, on
// files whose path contains PATTERN, so a test can compare the transfers of
// two plans rank by rank whatever loops and rank lists fold them. An AIO
// request submitted inside another call (OMPIO's asynchronous writes)
// counts once, at its completion, with the bytes it moved. With --calls,
// each line ends with the call's name (pwrite, pwritev; a completion: the
// call that submitted it, aio_write). With --aio, the AIO records alone, in
// each rank's order: "RANK S OFFSET BYTES" a submit, "RANK D OFFSET BYTES"
// a completion (the bytes it moved), so a test can compare where requests
// are submitted and waited for.
// usage: plan_transfers PLAN_DIR_OR_FILE [PATTERN] [--calls|--aio]
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

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

enum class Mode { transfers, calls, aio };

bool on_file(const trace::Plan& plan, int64_t r, int64_t file, const std::string& want) {
  const auto& files = plan.ranks[size_t(r)].files;
  if (file < 0 || size_t(file) >= files.size()) return false;
  return plan.files[size_t(files[size_t(file)])].path.find(want) != std::string::npos;
}

void print_aio(const trace::Plan& plan, int64_t r, const trace::Event& ev, const std::string& want) {
  bool submit = ev.op() == trace::OpClass::asubmit && ev.depth > 0;
  if (!submit && !(ev.op() == trace::OpClass::adone && ev.args[trace::arg::submit_depth] > 0)) return;
  auto a = trace::aio_args(ev);
  if (!on_file(plan, r, a.file(), want)) return;
  std::printf("%lld %c %lld %lld\n", (long long)r, submit ? 'S' : 'D', (long long)a.offset(),
              (long long)(submit ? a.count() : ev.ret));
}

void print(const trace::Plan& plan, const std::string& want, Mode mode) {
  for (const trace::Stream& s : plan.streams)
    for (int64_t r : s.rank_list()) {
      trace::EventCursor c(s, int32_t(r));
      trace::Event ev;
      while (c.next(ev)) {
        if (mode == Mode::aio && trace::info(ev.kind).family == trace::Family::aio) print_aio(plan, r, ev, want);
        trace::Transfer t[2];
        if (mode == Mode::aio || !nested_transfer(ev) || trace::transfers(ev, t) != 1) continue;
        if (!on_file(plan, r, ev.args[t[0].file_slot], want)) continue;
        std::printf("%lld %c %lld %lld", (long long)r, t[0].write ? 'W' : 'R', (long long)t[0].offset,
                    (long long)t[0].bytes);
        trace::Kind kind = ev.op() == trace::OpClass::adone ? trace::Kind(ev.args[trace::arg::submit_kind]) : ev.kind;
        std::string_view name = trace::info(kind).name;
        if (mode == Mode::calls) std::printf(" %.*s", int(name.size()), name.data());
        std::printf("\n");
      }
    }
}

}  // namespace

int main(int argc, char** argv) {
  Mode mode = Mode::transfers;
  if (argc > 1 && std::string(argv[argc - 1]) == "--calls") mode = Mode::calls;
  if (argc > 1 && std::string(argv[argc - 1]) == "--aio") mode = Mode::aio;
  if (mode != Mode::transfers) --argc;
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: plan_transfers PLAN [PATTERN] [--calls|--aio]\n");
    return 2;
  }
  std::string path = argv[1];
  if (std::filesystem::is_directory(path)) path = (std::filesystem::path(path) / trace::kPlanFileName).string();
  try {
    print(trace::read_plan(path), argc > 2 ? argv[2] : "", mode);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plan_transfers: %s\n", e.what());
    return 1;
  }
  return 0;
}
