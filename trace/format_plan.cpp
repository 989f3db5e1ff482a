// Plan bodies (and the extrapolation a plan carries): the streams, tallies
// and tables of format_fields.hpp plus the plan's own records. Version
// numbers in io.since are the plan's (kPlanFormatVersion).
#include "trace/format_fields.hpp"

namespace mpior::trace::body {

// In namespace body, not an unnamed one: put_fields finds them by the Io's
// namespace.

template <class Io>
void fields(Io& io, ExtrapNote& n) {
  io.sv(n.stream);
  io.sv(n.leaf);
  io.sv(n.node);
  io.str(n.what);
  io.str(n.model);
  io.str(n.name);
}

// An input is its directory and its rank count.
struct ExtrapInput {
  std::string dir;
  int32_t ranks = 0;
};

template <class Io>
void fields(Io& io, ExtrapInfo& x) {
  io.sv(x.target);
  std::vector<ExtrapInput> inputs;
  if constexpr (!Io::kReading)
    for (size_t i = 0; i < x.inputs.size(); ++i)
      inputs.push_back({x.inputs[i], i < x.input_ranks.size() ? x.input_ranks[i] : 0});
  io.list(inputs, 2, [&](ExtrapInput& in) {
    io.str(in.dir);
    io.sv(in.ranks);
  });
  if constexpr (Io::kReading)
    for (ExtrapInput& in : inputs) {
      x.inputs.push_back(std::move(in.dir));
      x.input_ranks.push_back(in.ranks);
    }
  io.list(x.notes, 6, [&](ExtrapNote& n) { fields(io, n); });
  io.check([&](Decoder& d) {
    if (x.target < 0) d.fail("negative extrapolation target");
  });
}

template <class Io>
void fields(Io& io, PlanRank& r) {
  io.str(r.host);
  io.str(r.cwd);
  io.sv(r.traced_ns);
  ranks(io, r.files);
  ranks(io, r.comms);
  if (io.since(4)) io.sv(r.start_ns);
  if (io.since(6)) io.sv_in(r.cpu_wait_ns, 0, INT64_MAX, "negative wait for a CPU");
  if (io.since(7)) fields(io, r.placement);
}

template <class Io>
void fields(Io& io, PlanFile& f) {
  io.str(f.path);
  io.bits(f.created, f.directory, f.existed);
  io.sv(f.initial_size);
}

template <class Io>
void fields(Io& io, PlanComm& c) {
  ranks(io, c.members);
  if (io.since(5)) io.enum8(c.origin, CommOrigin::graph, "unknown communicator origin");
}

template <class Io>
void fields(Io& io, Plan& p) {
  fields(io, p.job);
  io.list(p.ranks, 3, [&](PlanRank& r) { fields(io, r); });
  io.list(p.files, 3, [&](PlanFile& f) { fields(io, f); });
  io.list(p.comms, 1, [&](PlanComm& c) { fields(io, c); });
  fields(io, p.streams, false);
  io.check([&](Decoder& d) { check_stream_ranks(d, p.streams, p.ranks.size()); });
  fields(io, p.pruned);
  fields(io, p.extrap);
  if (io.since(8)) ranks(io, p.missing);
  io.check([&](Decoder& d) {
    for (size_t i = 0; i < p.missing.size(); ++i)
      if (p.missing[i] < 0 || size_t(p.missing[i]) >= p.ranks.size() || (i && p.missing[i] <= p.missing[i - 1]))
        d.fail("missing rank " + std::to_string(p.missing[i]));
  });
}

void put(Encoder& e, const Plan& p) { put_fields<kPlanFormatVersion>(e, p); }
Plan get_plan(Decoder& d, uint32_t version) {
  Get io(d, version);
  Plan p{};
  fields(io, p);
  return p;
}

}  // namespace mpior::trace::body
