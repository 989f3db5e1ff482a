// A plan built call by call with the real StreamBuilder, and the classes
// tests look up in it: shared by the predict unit tests.
#pragma once

#include <fcntl.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "predict/op_classes.hpp"
#include "trace/builder.hpp"

namespace mpior::predict::testing {

using trace::Kind;
namespace arg = trace::arg;

// One stream per rank, built with the real StreamBuilder; local file ids are
// the plan's (files 0-2 are the standard streams).
struct PlanMaker {
  explicit PlanMaker(int ranks) : builders(size_t(ranks)), now(size_t(ranks), 1000) {
    plan.ranks.resize(size_t(ranks));
    for (int i = 0; i < 3; ++i) file("<std>");
  }
  int32_t file(const std::string& path) {
    plan.files.push_back({path});
    for (auto& r : plan.ranks) r.files.push_back(int32_t(plan.files.size() - 1));
    return int32_t(plan.files.size() - 1);
  }
  PlanMaker& call(int rank, Kind k, std::initializer_list<std::pair<int, int64_t>> args, int64_t dur, uint8_t depth = 0,
                  int64_t ret = 0) {
    trace::RawEvent ev;
    ev.kind = k;
    ev.depth = depth;
    ev.ret = ret;
    for (auto [slot, v] : args) ev.args[size_t(slot)] = v;
    ev.start = now[size_t(rank)] + 100;
    ev.end = ev.start + dur;
    if (depth == 0) now[size_t(rank)] = ev.end;
    builders[size_t(rank)].append(ev);
    return *this;
  }
  const trace::Plan& done() {
    plan.streams.clear();
    for (size_t r = 0; r < builders.size(); ++r) plan.streams.push_back(builders[r].snapshot(int32_t(r), 0));
    return plan;
  }
  trace::Plan plan;
  std::vector<trace::StreamBuilder> builders;
  std::vector<int64_t> now;
};

inline const IoClass& find(const Classes& cs, const std::string& label) {
  for (const IoClass& c : cs.classes)
    if (class_label(c.key) == label) return c;
  FAIL("no class " << label);
  throw 0;
}

// checkpoint_sim's shape: rank 0 creates the shared file, every rank opens
// it and rewrites its block with an fsync after each write.
inline PlanMaker checkpoint(int ranks, int steps, int64_t block, int64_t sync_ns = 900000) {
  PlanMaker pm(ranks);
  int32_t f = pm.file("/work/checkpoint.dat");
  pm.call(0, Kind::open, {{arg::handle, 5}, {arg::file, f}, {arg::flags, O_WRONLY | O_CREAT}}, 3000, 0, 5);
  pm.call(0, Kind::close, {{arg::handle, 5}, {arg::file, f}}, 1000);
  for (int r = 0; r < ranks; ++r) {
    pm.call(r, Kind::open, {{arg::handle, 6}, {arg::file, f}, {arg::flags, O_WRONLY}}, 2000, 0, 6);
    for (int s = 0; s < steps; ++s) {
      pm.call(r, Kind::MPI_Barrier, {{arg::comm, 0}}, 50000);
      pm.call(r, Kind::pwrite64, {{arg::handle, 6}, {arg::file, f}, {arg::offset, r * block}, {arg::count, block}},
              400000, 0, block);
      pm.call(r, Kind::fsync, {{arg::handle, 6}, {arg::file, f}}, sync_ns);
    }
    pm.call(r, Kind::close, {{arg::handle, 6}, {arg::file, f}}, 1000);
  }
  return pm;
}

// One class of 1 s of traced I/O, all the traced I/O.
inline Classes one_class_of_a_second() {
  Classes cs;
  cs.classes.resize(1);
  cs.classes[0].time_ns = 1'000'000'000;
  cs.io_ns = 1'000'000'000;
  return cs;
}

}  // namespace mpior::predict::testing
