#include "replayer/engine.hpp"

#include <fcntl.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>

#include "replayer/cli.hpp"
#include "replayer/file_order.hpp"
#include "test/replayer/plan_maker.hpp"
#include "trace/cursor.hpp"
#include "trace/tool_error.hpp"

using namespace mpior::replay;
using namespace mpior::replay::testing;
using mpior::trace::Kind;

namespace {

ReplayOptions options(const std::string& root) {
  ReplayOptions opt;
  opt.setup.fs = root;
  opt.stall_timeout_s = 60;
  opt.plan_name = "engine-plan";
  return opt;
}

// Peak resident memory of this process, from /proc/self/status.
int64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return -1;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const mpior::ToolError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("8192 replay threads run one merged stream in well under 1 GiB", "[engine]") {
  constexpr int32_t kThreads = 8192;
  TempDir tmp;
  PlanMaker pm(kThreads, 5'000'000);
  StreamMaker sm;
  sm.call(Kind::MPI_Init, mpi_args(0));
  sm.call(Kind::write, io_args(1, 1, -1, 8), 8, 1'000'000, 1000);
  sm.call(Kind::MPI_Barrier, mpi_args(0));
  sm.call(Kind::MPI_Bcast, mpi_args(0, 0, 0, 64, 0));
  sm.call(Kind::MPI_Reduce, mpi_args(0, 0, 0, 64, kThreads - 1));
  sm.call(Kind::MPI_Finalize, mpi_args(0));
  pm.add(sm.stream(0, 0, kThreads));  // one stream standing for every rank
  Report rep = replay_plan(pm.plan, options(tmp / "fs"));
  REQUIRE(rep.threads == kThreads);
  REQUIRE(rep.errors == 0);
  REQUIRE(rep.per_thread.size() == kThreads);
  REQUIRE(rep.per_thread.back().rank == kThreads - 1);
  REQUIRE(rep.ops.at("MPI_Barrier").count == kThreads);
  REQUIRE(rep.ops.at("write").bytes == 8 * kThreads);
  REQUIRE(file_size(tmp / "fs/__stdout__") == 8 * kThreads);
  REQUIRE(peak_rss_bytes() > 0);
#ifndef __SANITIZE_ADDRESS__  // AddressSanitizer's shadow memory and fake stacks are not the replayer's
  REQUIRE(peak_rss_bytes() < (int64_t(1) << 30));
#endif
}

TEST_CASE("a rank with several traced threads gets a replay thread for each", "[engine]") {
  TempDir tmp;
  PlanMaker pm(2);
  int64_t f = pm.file("/t1.out", true);
  StreamMaker main0, worker0, main1;
  main0.call(Kind::MPI_Barrier, mpi_args(0));
  worker0.call(Kind::open, io_args(7, f, -1, -1, O_WRONLY | O_CREAT | O_TRUNC, 0644), 7);
  worker0.call(Kind::write, io_args(7, f, 0, 333), 333);
  main1.call(Kind::MPI_Barrier, mpi_args(0));
  pm.add(main0.stream(0, 0));
  pm.add(worker0.stream(0, 1));
  pm.add(main1.stream(1, 0));
  Report rep = replay_plan(pm.plan, options(tmp / "fs"));
  REQUIRE(rep.threads == 3);
  REQUIRE(rep.per_thread.at(1).rank == 0);
  REQUIRE(rep.per_thread.at(1).thread == 1);
  REQUIRE(file_size(tmp / "fs/t1.out") == 333);  // closed (and so complete) when its thread ended
}

namespace {

// 64 MiB written as if in 1 us: the thread replaying it falls behind.
void write_64_mib_fast(StreamMaker& m, int64_t file) {
  constexpr int64_t kBig = int64_t(64) << 20;
  m.call(Kind::open, io_args(5, file, -1, -1, O_WRONLY | O_CREAT | O_TRUNC, 0644), 5, 1000, 1000);
  m.call(Kind::write, io_args(5, file, 0, kBig), kBig, 0, 1000);
}

// Rank 0 as two threads; no call may fail.
Report replay_two_threads(PlanMaker& pm, const StreamMaker& first, const StreamMaker& second, const std::string& fs) {
  pm.add(first.stream(0, 0));
  pm.add(second.stream(0, 1));
  Report rep = replay_plan(pm.plan, options(fs));
  INFO((rep.first_errors.empty() ? std::string() : rep.first_errors.front()));
  REQUIRE(rep.errors == 0);
  return rep;
}

}  // namespace

// git repack and its child pack-objects, folded into one rank as two threads:
// the child writes its pack (64 MiB traced in 1 us, far longer replayed) and
// renames it; the parent stats and opens the new name 200 us after the
// rename ended. Without the traced order kept, the parent's stat comes first.
// Exact times (lossless) order the stat before it is made; statistical ones
// (times drift) retry it once the other thread renamed.
TEST_CASE("a name another thread of the rank made is used after it, as traced", "[engine][file_order]") {
  TempDir tmp;
  PlanMaker pm(1);
  int64_t tmp_name = pm.file("/pack/tmp_pack", true), final_name = pm.file("/pack/pack-1.pack", true);
  int64_t big = pm.file("/pack/objects.bin", true);
  bool lossless = GENERATE(true, false);
  INFO("lossless " << lossless);
  StreamMaker parent(lossless), child(lossless);
  write_64_mib_fast(child, big);
  child.call(Kind::open, io_args(6, tmp_name, -1, -1, O_WRONLY | O_CREAT | O_EXCL, 0600), 6, 0, 1000);
  child.call(Kind::write, io_args(6, tmp_name, 0, 100), 100, 0, 1000);
  child.call(Kind::close, io_args(6, tmp_name), 0, 0, 1000);
  child.call(Kind::rename, io_args(-1, tmp_name, -1, -1, 0, 0, final_name), 0, 0, 1000);
  parent.call(Kind::stat, io_args(-1, final_name), 0, child.now() + 200'000, 1000);
  parent.call(Kind::open, io_args(3, final_name, -1, -1, O_RDONLY), 3, 0, 1000);
  parent.call(Kind::read, io_args(3, final_name, 0, 100), 100, 0, 1000);
  Report rep = replay_two_threads(pm, parent, child, tmp / "fs");
  REQUIRE(file_size(tmp / "fs/pack/pack-1.pack") == 100);
  REQUIRE(rep.per_thread.at(0).wait_ns > 0);  // the parent waited for its child's rename
  SECTION("only ranks with several threads are ordered, on the names that change") {
    StreamMaker other;
    other.call(Kind::unlink, io_args(-1, final_name), 0, 0, 1000);
    pm.plan.job.size = 2;
    pm.plan.ranks.push_back(pm.plan.ranks[0]);
    pm.add(other.stream(1, 0));
    FileOrder order(pm.plan, {{&pm.plan.streams[0], 0}, {&pm.plan.streams[1], 0}, {&pm.plan.streams[2], 1}}, {});
    REQUIRE(order.slot(0) == 0);
    REQUIRE(order.slot(1) == 1);
    REQUIRE(order.slot(2) == -1);
    REQUIRE(order.changes() == 4);  // two creates, the rename's two names; not the reads, nor rank 1's unlink
  }
}

// `mv f g; cat g; rm g` across two processes of a rank: cat's open fails
// when tried before mv's rename, and mv's thread may replay the rename
// before cat starts waiting. The changes to wait for are those pending when
// the open was tried: the rename, already done, not the removal after it.
TEST_CASE("a change replayed between a failed try and the wait is the one waited for", "[engine][file_order]") {
  PlanMaker pm(1);
  int64_t made = pm.file("/out/f", true), renamed = pm.file("/out/g", true);
  StreamMaker cat(false), mv(false);
  mv.call(Kind::rename, io_args(-1, made, -1, -1, 0, 0, renamed), 0, 0, 1000);
  mv.call(Kind::unlink, io_args(-1, renamed), 0, 0, 1000);
  cat.call(Kind::open, io_args(3, renamed, -1, -1, O_RDONLY), 3, mv.now(), 1000);
  pm.add(cat.stream(0, 0));
  pm.add(mv.stream(0, 1));
  FileOrder order(pm.plan, {{&pm.plan.streams[0], 0}, {&pm.plan.streams[1], 0}}, {});
  mpior::trace::EventCursor cursor(pm.plan.streams[0], 0);
  mpior::trace::Event open;
  REQUIRE(cursor.next(open));
  std::atomic<bool> aborted{false};
  FileOrder::Pending pending = order.pending_changes(0, open);  // before the try
  REQUIRE(pending.size() == 1);
  order.replayed(1, pending[0].second);  // mv's rename, while cat's open failed
  REQUIRE(order.wait_for_change(pending, aborted, 1'000'000'000));
  FileOrder::Pending after = order.pending_changes(0, open);  // the removal is next
  REQUIRE(after.size() == 1);
  REQUIRE(after[0].second > pending[0].second);
  order.finished(1);
  REQUIRE(order.pending_changes(0, open).empty());
  REQUIRE_FALSE(order.wait_for_change({}, aborted, 1'000'000'000));
}

// `mkdir -p src && printf ... > src/f1.c`: the shell's open needs the
// directory its child made (64 MiB written first: late in the replay).
TEST_CASE("a file made in a directory another thread of the rank made waits for it", "[engine][file_order]") {
  TempDir tmp;
  PlanMaker pm(1);
  int64_t dir = pm.file("/out/src", true, 0, true), inside = pm.file("/out/src/f1.c", true);
  int64_t big = pm.file("/out/big.bin", true);
  bool lossless = GENERATE(true, false);
  INFO("lossless " << lossless);
  StreamMaker shell(lossless), mkdir_p(lossless);
  write_64_mib_fast(mkdir_p, big);
  mkdir_p.call(Kind::mkdir, io_args(-1, dir, -1, -1, 0, 0755), 0, 0, 1000);
  shell.call(Kind::open, io_args(3, inside, -1, -1, O_WRONLY | O_CREAT | O_TRUNC, 0644), 3, mkdir_p.now() + 100'000,
             1000);
  shell.call(Kind::write, io_args(3, inside, 0, 20), 20, 0, 1000);
  replay_two_threads(pm, shell, mkdir_p, tmp / "fs");
  REQUIRE(file_size(tmp / "fs/out/src/f1.c") == 20);
}

namespace {

// --io-log's lines of rank 0 thread 0, each split into its fields.
std::vector<std::vector<std::string>> io_log_fields(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("== ", 0) == 0) continue;
    std::istringstream words(line);
    out.emplace_back(std::istream_iterator<std::string>(words), std::istream_iterator<std::string>());
  }
  return out;
}

}  // namespace

TEST_CASE("--io-log-times gives each file call's start, replayed and traced duration", "[engine]") {
  TempDir tmp;
  PlanMaker pm(1);
  int64_t f = pm.file("/times.out", true);
  StreamMaker sm;
  sm.call(Kind::open, io_args(7, f, -1, -1, O_WRONLY | O_CREAT | O_TRUNC, 0644), 7, 1000, 2000);
  sm.call(Kind::write, io_args(7, f, 0, 4096), 4096, 2'000'000, 3000);
  sm.call(Kind::unlink, io_args(-1, f), 0, 1000, 4000);
  sm.call(Kind::close, io_args(7, f), 0, 1000, 5000);
  pm.add(sm.stream(0));
  ReplayOptions opt = options(tmp / "fs");
  opt.io_log = tmp / "io.log";
  REQUIRE(replay_plan(pm.plan, opt).errors == 0);
  for (const auto& words : io_log_fields(opt.io_log)) REQUIRE(words.size() == 4);  // kind path offset count
  opt.io_log_times = true;
  REQUIRE(replay_plan(pm.plan, opt).errors == 0);
  auto lines = io_log_fields(opt.io_log);
  REQUIRE(lines.size() == 4);
  int64_t last_end = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    REQUIRE(lines[i].size() == 7);
    int64_t start = std::stoll(lines[i][4]), dur = std::stoll(lines[i][5]);
    REQUIRE(std::stoll(lines[i][6]) == int64_t(2000 + 1000 * i));  // as traced
    REQUIRE(dur > 0);
    REQUIRE(start >= last_end);
    last_end = start + dur;
  }
  REQUIRE(lines[1][0] == "write");
  REQUIRE(std::stoll(lines[1][4]) >= 2'000'000);  // after the gap slept
}

TEST_CASE("a thread with nothing to replay ends at the common start", "[engine]") {
  TempDir tmp;
  PlanMaker pm(2);
  StreamMaker empty, busy;
  busy.call(Kind::write, io_args(1, 1, -1, 4), 4, 1000);
  pm.add(empty.stream(0));
  pm.add(busy.stream(1));
  Report rep = replay_plan(pm.plan, options(tmp / "fs"));
  REQUIRE(rep.per_thread.at(0).events == 0);
  REQUIRE(rep.per_thread.at(0).replay_ns >= 0);
  REQUIRE(rep.per_thread.at(1).events == 1);
  REQUIRE(rep.replay_ns >= rep.per_thread.at(1).replay_ns);
}

TEST_CASE("compute gaps are slept, scaled by --compute-scale", "[engine]") {
  TempDir tmp;
  PlanMaker pm(1, 300'000'000);
  StreamMaker sm;
  sm.call(Kind::write, io_args(1, 1, -1, 1), 1, 300'000'000, 10);
  pm.add(sm.stream(0));
  ReplayOptions opt = options(tmp / "fs");
  Report full = replay_plan(pm.plan, opt);
  REQUIRE(full.replay_ns >= 300'000'000);
  REQUIRE(full.traced_ns == 300'000'010);  // to the end of the last call, not the plan's end
  opt.compute_scale = 0;
  Report none = replay_plan(pm.plan, opt);
  REQUIRE(none.replay_ns < 300'000'000);
  SECTION("sampled timing replays as well") {
    opt.compute_scale = 1;
    opt.cursor.timing = mpior::trace::CursorOptions::Timing::sample;
    opt.cursor.seed = 7;
    REQUIRE(replay_plan(pm.plan, opt).ops.at("write").count == 1);
  }
}

// 20,000 one-byte writes 1 us apart, each 500 ns long.
static mpior::trace::Plan spaced_writes() {
  PlanMaker pm(1, 0);
  StreamMaker sm;
  for (int i = 0; i < 20'000; ++i) sm.call(Kind::write, io_args(1, 1, -1, 1), 1, 1'000, 500);
  pm.add(sm.stream(0));
  return pm.plan;
}

TEST_CASE("the replay's own time around a read or write is paid from the gaps after it", "[engine]") {
  // 20,000 one-byte writes 1 us apart. Between taking an event from the plan
  // and its write, and after the write, the replay spends time of its own
  // (a fraction of the 1 us gap): the program did not. The gaps after pay
  // it back, so the replay sleeps less than the traced gaps (all of them,
  // each write that much longer, before); its own time counts as compute.
  TempDir tmp;
  ReplayOptions opt = options(tmp / "fs");
  Report rep = replay_plan(spaced_writes(), opt);
  REQUIRE(rep.errors == 0);
  const ThreadSummary& t = rep.per_thread.at(0);
  REQUIRE(t.traced_compute_ns == 20'000 * 1'000);
  REQUIRE(t.own_ns > 0);
  // Paid where the gaps hold it: not in a sanitizer build, whose replay of
  // an event (800 ns and more) can take longer than the gap.
  if (t.own_ns < t.traced_compute_ns / 5) REQUIRE(t.compute_ns - t.own_ns < t.traced_compute_ns - t.own_ns / 2);
  REQUIRE(to_json(rep)["per_rank"][0]["predicted"]["own_s"].get<double>() == Approx(double(t.own_ns) / 1e9));
  REQUIRE(rep.ops.at("write").count == 20'000);
}

TEST_CASE("with --io-only the replay's own time around each call is reported, not owed", "[engine]") {
  // The same writes with the gaps dropped: what the replay adds to an event
  // beyond its real calls is still measured (the bench's cost per event),
  // but nothing is late against a timeline that has no gaps.
  TempDir tmp;
  ReplayOptions opt = options(tmp / "fs");
  opt.io_only = true;
  Report rep = replay_plan(spaced_writes(), opt);
  REQUIRE(rep.errors == 0);
  const ThreadSummary& t = rep.per_thread.at(0);
  REQUIRE(t.own_ns > 0);
  REQUIRE(t.compute_ns >= t.own_ns);     // not I/O: the traced I/O time holds the calls alone
  REQUIRE(t.unpaid_ns < t.own_ns / 10);  // owed: none of it (a few ns of other bookkeeping)
  REQUIRE(t.late_ns == 0);
  REQUIRE(rep.ops.at("write").count == 20'000);
}

TEST_CASE("the replay's own time around a metadata call is not I/O", "[engine]") {
  // 20,000 stats 1 us apart. On tmpfs a stat takes about as long as the
  // replay's own work around it (the event, its bookkeeping, the path): the
  // traced I/O time holds the program's calls alone, so the replayed one
  // must too, or a metadata-bound program is predicted slower than it ran.
  TempDir tmp;
  PlanMaker pm(1, 0);
  int64_t f = pm.file("/stat.me", false);
  StreamMaker sm;
  for (int i = 0; i < 20'000; ++i) sm.call(Kind::stat, io_args(-1, f), 0, 1'000, 500);
  pm.add(sm.stream(0));
  Report rep = replay_plan(pm.plan, options(tmp / "fs"));
  REQUIRE(rep.errors == 0);
  const ThreadSummary& t = rep.per_thread.at(0);
  REQUIRE(t.own_ns > 0);
  REQUIRE(t.io_ns + t.own_ns / 2 < rep.ops.at("stat").total_ns);  // the stats' spans less the replay's own time
  REQUIRE(t.compute_ns >= t.own_ns);                              // standing in for the gaps it is paid from
}

TEST_CASE("a collective MPI-IO call's waits for a late rank stay I/O beside the replay's own time", "[engine]") {
  // Rank 1 computes 40 ms before each of 4 collective writes, rank 0 not:
  // ROMIO makes rank 0 wait inside each call, so its traced I/O time holds
  // the waits; its replayed I/O time must too, its own time still compute.
  constexpr int64_t kLateNs = 40'000'000;
  constexpr int kCalls = 4;
  TempDir tmp;
  PlanMaker pm(2, 0);
  int64_t f = pm.file("/coll.dat", true);
  for (int32_t r = 0; r < 2; ++r) {
    StreamMaker sm;
    sm.call(Kind::open, io_args(3, f, -1, -1, O_WRONLY | O_CREAT, 0644), 3);
    for (int i = 0; i < kCalls; ++i) {
      int64_t at = (r * kCalls + i) * 4096;
      sm.call(Kind::MPI_File_write_at_all, io_args(1, f, at, 4096, mpior::trace::fio::kColl, 0), 0,
              r == 1 ? kLateNs : 0, r == 0 ? kLateNs : 1'000);
      sm.nested(Kind::pwrite, io_args(3, f, at, 4096), 4096, 0, 500);
    }
    pm.add(sm.stream(r));
  }
  Report rep = replay_plan(pm.plan, options(tmp / "fs"));
  REQUIRE(rep.errors == 0);
  const ThreadSummary& early = rep.per_thread.at(0).rank == 0 ? rep.per_thread.at(0) : rep.per_thread.at(1);
  CAPTURE(early.io_ns, early.wait_ns, early.own_ns, early.compute_ns);
  REQUIRE(early.wait_ns == 0);                   // no wait outside a file call
  REQUIRE(early.io_ns >= kCalls * kLateNs / 2);  // half the waits: noise can only raise them
  REQUIRE(early.compute_ns >= early.own_ns);
}

TEST_CASE("the replay's own time no gap absorbed is left out of the prediction, and passed on by a collective",
          "[engine]") {
  // Rank 0: 20,000 one-byte writes back to back (no gap to pay the replay's
  // own time from), then a barrier; rank 1 waits there for it. Both leave as
  // late as rank 0 was: the prediction is the wall time less that lateness.
  TempDir tmp;
  PlanMaker pm(2, 0);
  StreamMaker writer, waiter;
  for (int i = 0; i < 20'000; ++i) writer.call(Kind::write, io_args(1, 1, -1, 1), 1, 0, 500);
  writer.call(Kind::MPI_Barrier, mpi_args(0));
  waiter.call(Kind::MPI_Barrier, mpi_args(0));
  pm.add(writer.stream(0));
  pm.add(waiter.stream(1));
  Report rep = replay_plan(pm.plan, options(tmp / "fs"));
  REQUIRE(rep.errors == 0);
  const ThreadSummary &w = rep.per_thread.at(0), &r = rep.per_thread.at(1);
  REQUIRE(w.own_ns > 0);
  REQUIRE(w.unpaid_ns > 0);
  // Its own time, and the little between the last write and the barrier (under TSan: up to 1 ms more);
  // and, on a busy machine, how much later than the barrier's release it went on (a thread preempted
  // there is late by the replay's doing, measured as late_ns): the accounting, whatever the load.
  CAPTURE(w.own_ns, w.late_ns, r.late_ns, w.cpu_wait_ns, r.cpu_wait_ns);
  REQUIRE(w.unpaid_ns <= w.own_ns + w.late_ns + w.own_ns / 10 + 1'000'000);
  REQUIRE(r.unpaid_ns > w.unpaid_ns / 2);  // handed on at the barrier
  REQUIRE(rep.replay_ns == std::max(w.replay_ns, r.replay_ns));
  REQUIRE(rep.wall_ns >= rep.replay_ns + std::min(w.unpaid_ns, r.unpaid_ns));
  nlohmann::json j = to_json(rep);
  REQUIRE(j["wall_s"].get<double>() == Approx(double(rep.wall_ns) / 1e9));
  REQUIRE(j["per_rank"][1]["predicted"]["unpaid_s"].get<double>() == Approx(double(r.unpaid_ns) / 1e9));
}

TEST_CASE("--threads other than the plan's rank count points to extrapolation", "[engine]") {
  PlanMaker pm(8);
  REQUIRE_NOTHROW(check_thread_count(-1, pm.plan));
  REQUIRE_NOTHROW(check_thread_count(8, pm.plan));
  std::string msg = message_of([&] { check_thread_count(16, pm.plan); });
  REQUIRE_THAT(msg, Catch::Contains("--threads 16") && Catch::Contains("8 ranks") &&
                        Catch::Contains("mpior-post --extrapolate"));
}

TEST_CASE("plans that cannot be replayed are refused with a message naming them", "[engine]") {
  TempDir tmp;
  PlanMaker pm(2);
  StreamMaker sm;
  sm.call(Kind::MPI_Barrier, mpi_args(0));
  SECTION("a stream for a rank the plan does not have") {
    pm.add(sm.stream(5));
    REQUIRE_THAT(message_of([&] { replay_plan(pm.plan, options(tmp / "fs")); }),
                 Catch::Contains("engine-plan") && Catch::Contains("rank 5"));
  }
  SECTION("a communicator listing a rank the plan does not have") {
    pm.plan.comms[0].members.push_back(9);
    REQUIRE_THAT(message_of([&] { validate_plan(pm.plan, "p.mpior"); }), Catch::Contains("p.mpior"));
  }
  SECTION("no ranks at all") {
    pm.plan.ranks.clear();
    REQUIRE_THAT(message_of([&] { validate_plan(pm.plan, "p.mpior"); }), Catch::Contains("no ranks"));
  }
}

TEST_CASE("ranks start when they were launched and meet in MPI_Init", "[engine]") {
  TempDir tmp;
  PlanMaker pm(2, 2'100'000'000);
  StreamMaker early, late;
  early.call(Kind::MPI_Init, mpi_args(0), 0, 0, 2'000'000'000);  // waited 2 s for the late rank
  late.call(Kind::MPI_Init, mpi_args(0), 0, 0, 100'000'000);     // the last to come: MPI_Init's own time
  pm.add(early.stream(0));
  pm.add(late.stream(1));
  pm.plan.ranks[1].start_ns = 300'000'000;  // launched 0.3 s after rank 0 (aligned clocks)
  Report rep = replay_plan(pm.plan, options(tmp / "fs"));
  REQUIRE(rep.errors == 0);
  // Both leave MPI_Init at 0.3 + 0.1 s, not after rank 0's traced 2 s wait.
  REQUIRE(rep.replay_ns >= 400'000'000);
  REQUIRE(rep.replay_ns < 1'500'000'000);
  // To the end of each rank's last call, rank 1's on the aligned clock.
  REQUIRE(rep.per_thread.at(1).traced_ns == 400'000'000);
  REQUIRE(rep.traced_ns == 2'000'000'000);
  ReplayOptions opt = options(tmp / "fs2");
  opt.io_only = true;  // start-up dropped: no launch delay, no MPI_Init
  Report io = replay_plan(pm.plan, opt);
  REQUIRE(io.replay_ns < 300'000'000);
  REQUIRE(io.per_thread.at(1).traced_ns == 100'000'000);
}
