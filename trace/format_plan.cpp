// Plan bodies (and the extrapolation a plan carries): the streams, tallies
// and tables of format_body.cpp plus the plan's own fields.
#include "trace/format_body.hpp"

namespace mpior::trace::body {

namespace {

void put_extrap(Encoder& e, const ExtrapInfo& x) {
  e.sv(x.target);
  e.uv(x.inputs.size());
  for (size_t i = 0; i < x.inputs.size(); ++i) {
    e.str(x.inputs[i]);
    e.sv(i < x.input_ranks.size() ? x.input_ranks[i] : 0);
  }
  e.uv(x.notes.size());
  for (const ExtrapNote& n : x.notes) {
    e.sv(n.stream);
    e.sv(n.leaf);
    e.sv(n.node);
    e.str(n.what);
    e.str(n.model);
    e.str(n.name);
  }
}

ExtrapInfo get_extrap(Decoder& d) {
  ExtrapInfo x;
  x.target = int32_t(d.sv());
  uint64_t inputs = d.count(2);
  for (uint64_t i = 0; i < inputs; ++i) {
    x.inputs.push_back(d.str());
    x.input_ranks.push_back(int32_t(d.sv()));
  }
  x.notes.resize(d.count(6));
  for (ExtrapNote& n : x.notes) {
    n.stream = int32_t(d.sv());
    n.leaf = int32_t(d.sv());
    n.node = int32_t(d.sv());
    n.what = d.str();
    n.model = d.str();
    n.name = d.str();
  }
  if (x.target < 0) d.fail("negative extrapolation target");
  return x;
}

}  // namespace

void put(Encoder& e, const Plan& p) {
  put(e, p.job);
  e.uv(p.ranks.size());
  for (const PlanRank& r : p.ranks) {
    e.str(r.host);
    e.str(r.cwd);
    e.sv(r.traced_ns);
    put_ranks(e, r.files);
    put_ranks(e, r.comms);
    e.sv(r.start_ns);
    e.sv(r.cpu_wait_ns);
    put_placement(e, r.placement);
  }
  e.uv(p.files.size());
  for (const PlanFile& f : p.files) {
    e.str(f.path);
    e.u8(uint8_t(f.created | (f.directory << 1) | (f.existed << 2)));
    e.sv(f.initial_size);
  }
  e.uv(p.comms.size());
  for (const PlanComm& c : p.comms) {
    put_ranks(e, c.members);
    e.u8(uint8_t(c.origin));
  }
  put_streams(e, p.streams);
  put_tallies(e, p.pruned);
  put_extrap(e, p.extrap);
  put_ranks(e, p.missing);
}

Plan get_plan(Decoder& d) {
  Plan p;
  p.job = get_job(d);
  p.ranks.resize(d.count(3));
  for (PlanRank& r : p.ranks) {
    r.host = d.str();
    r.cwd = d.str();
    r.traced_ns = d.sv();
    r.files = get_ranks(d);
    r.comms = get_ranks(d);
    r.start_ns = d.sv();
    r.cpu_wait_ns = d.sv();
    if (r.cpu_wait_ns < 0) d.fail("negative wait for a CPU");
    r.placement = get_placement(d);
  }
  p.files.resize(d.count(3));
  for (PlanFile& f : p.files) {
    f.path = d.str();
    uint8_t bits = d.u8();
    f.created = bits & 1;
    f.directory = (bits >> 1) & 1;
    f.existed = (bits >> 2) & 1;
    f.initial_size = d.sv();
  }
  p.comms.resize(d.count(1));
  for (PlanComm& c : p.comms) {
    c.members = get_ranks(d);
    uint8_t origin = d.u8();
    if (origin > uint8_t(CommOrigin::graph)) d.fail("communicator origin " + std::to_string(origin));
    c.origin = CommOrigin(origin);
  }
  p.streams = get_streams(d);
  check_stream_ranks(d, p.streams, p.ranks.size());
  p.pruned = get_tallies(d);
  p.extrap = get_extrap(d);
  p.missing = get_ranks(d);
  for (size_t i = 0; i < p.missing.size(); ++i)
    if (p.missing[i] < 0 || size_t(p.missing[i]) >= p.ranks.size() || (i && p.missing[i] <= p.missing[i - 1]))
      d.fail("missing rank " + std::to_string(p.missing[i]));
  return p;
}

}  // namespace mpior::trace::body
