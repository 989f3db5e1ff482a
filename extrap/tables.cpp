#include "extrap/tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "extrap/comm_models.hpp"
#include "extrap/file_names.hpp"
#include "extrap/models.hpp"
#include "trace/tool_error.hpp"

namespace mpior::extrap {

namespace {

using RankRef = std::pair<size_t, int64_t>;  // (input, rank)

// What every rank of one kind has, as functions of (r, n).
struct KindModel {
  std::vector<NameModel> names;
  std::vector<trace::PlanFile> attrs;  // created, existed, directory as traced
  std::vector<Fit> sizes;              // initial size
  std::vector<bool> approximate;       // size a best fit (a file the job did not make)
  std::vector<CommModel> comms;
  std::vector<trace::CommOrigin> comm_origins;  // as in the largest input that has the communicator
  std::string cwd;
  TimingFit traced;
  std::vector<int32_t> fixed_ids;  // per file: its id when no rank changes it (-1: not yet, or per rank)
};

class TableBuilder {
 public:
  TableBuilder(const StreamContext& ctx, const RankKinds& kinds, trace::Plan& out)
      : ctx_(ctx), inputs_(ctx.inputs), kinds_(kinds), out_(out), notes_(ctx.notes), n_(int64_t(kinds.target.size())) {
    members_.resize(kinds.names.size());
    for (size_t i = 0; i < inputs_.size(); ++i)
      for (size_t r = 0; r < kinds.inputs[i].size(); ++r)
        members_[size_t(kinds.inputs[i][r])].push_back({i, int64_t(r)});
    models_.resize(kinds.names.size());
    const Input& largest = inputs_.back();
    for (const trace::PlanRank& pr : largest.plan.ranks) one_host_ = one_host_ && pr.host == largest.plan.ranks[0].host;
  }

  void run() {
    for (int64_t r = 0; r < n_; ++r) add_rank(r);
  }

 private:
  const trace::PlanRank& plan_rank(RankRef ref) const { return inputs_[ref.first].plan.ranks[size_t(ref.second)]; }

  KindModel& model(int32_t kind) {
    if (!models_[size_t(kind)]) models_[size_t(kind)] = build(kind);
    return *models_[size_t(kind)];
  }

  std::string kind_name(int32_t kind) const { return kinds_.names[size_t(kind)]; }

  KindModel build(int32_t kind) {
    const std::vector<RankRef>& refs = members_[size_t(kind)];
    KindModel m;
    const trace::PlanRank& first = plan_rank(refs.front());
    for (RankRef ref : refs) {
      const trace::PlanRank& pr = plan_rank(ref);
      if (pr.files.size() != first.files.size() || pr.comms.size() != first.comms.size())
        throw ToolError(fmt::format(
            "ranks running {} use {} files and {} communicators at n={} (rank {}) but {} and {} at n={} (rank {}): "
            "file and communicator counts that change with the rank count are not extrapolated",
            kind_name(kind), first.files.size(), first.comms.size(), inputs_[refs.front().first].n, refs.front().second,
            pr.files.size(), pr.comms.size(), inputs_[ref.first].n, ref.second));
    }
    for (size_t j = 0; j < first.files.size(); ++j) add_file_model(kind, refs, j, m);
    for (size_t j = 0; j < first.comms.size(); ++j) add_comm_model(kind, refs, j, m);
    m.cwd = plan_rank(refs.back()).cwd;
    std::map<int64_t, std::pair<double, size_t>> traced;  // n -> (sum, ranks)
    for (RankRef ref : refs) {
      auto& t = traced[inputs_[ref.first].n];
      t.first += double(plan_rank(ref).traced_ns);
      ++t.second;
    }
    std::vector<std::pair<int64_t, double>> points;
    for (const auto& [n, t] : traced) points.emplace_back(n, t.first / double(t.second));
    m.traced = fit_timing(points);
    return m;
  }

  // A file no rank of the kind created or wrote in any input: its name and
  // size are the machine's (a /proc entry, a library), not the job's.
  bool foreign(const std::vector<RankRef>& refs, size_t j) const {
    return !ctx_.strict && std::all_of(refs.begin(), refs.end(), [&](RankRef ref) {
      return ctx_.uses.foreign(ref.first, plan_rank(ref).files[j]);
    });
  }

  void add_file_model(int32_t kind, const std::vector<RankRef>& refs, size_t j, KindModel& m) {
    std::vector<NameSample> names;
    std::vector<Sample> sizes;
    for (RankRef ref : refs) {
      const trace::PlanFile& f = inputs_[ref.first].plan.files[size_t(plan_rank(ref).files[j])];
      names.push_back({ref.second, inputs_[ref.first].n, &f.path});
      sizes.push_back({ref.second, inputs_[ref.first].n, f.initial_size});
    }
    std::string why, approximated;
    std::optional<NameModel> name = NameModel::fit(names, &why);
    if (!name && foreign(refs, j)) {
      std::vector<NameSample> last{names.back()};
      name = NameModel::fit(last, &why);
      approximated = fmt::format("name {} (names seen: {}{})", *names.back().path, *names.front().path,
                                 names.size() > 2 ? ", ..." : "");
    }
    if (!name) throw ToolError(fmt::format("file {} of the ranks running {}: {}", j, kind_name(kind), why));
    std::optional<Fit> size = fit_exact(sizes);
    bool approx_size = !size && foreign(refs, j);
    if (approx_size) {
      size = fit_best(sizes);
      approximated += fmt::format("{}size before the run ~ {} (sizes seen: {} at n={}, ..., {} at n={})",
                                  approximated.empty() ? "" : "; ", size->formula(), sizes.front().y, sizes.front().n,
                                  sizes.back().y, sizes.back().n);
    }
    if (!size)
      throw ToolError(fmt::format(
          "file {} of the ranks running {} ('{}'): no model fits the size it must have "
          "before the run ({} at n={}, {} at n={}, ...); the job created or wrote this file, so its size is "
          "structure: trace one more rank count, or larger ones",
          j, kind_name(kind), *names.front().path, sizes.front().y, sizes.front().n, sizes.back().y, sizes.back().n));
    const trace::PlanFile& attrs = inputs_[refs.back().first].plan.files[size_t(plan_rank(refs.back()).files[j])];
    if (attrs.created && name->constant() && !foreign(refs, j)) refuse_unseen_sharing(kind, refs, j, names);
    if (!approximated.empty()) {
      ctx_.warnings.push_back(
          fmt::format("file {} of the ranks running {} ({}), which the job neither created nor "
                      "wrote: approximated {}",
                      j, kind_name(kind), attrs.path, approximated));
      notes_.push_back(
          {-1, -1, -1, fmt::format("file {} ({})", j, kind_name(kind)), approximated, trace::kApproximateModel});
    }
    if (!name->constant())
      notes_.push_back(
          {-1, -1, -1, fmt::format("file name ({})", kind_name(kind)), name->describe(), "file name pattern"});
    m.names.push_back(std::move(*name));
    m.fixed_ids.push_back(-1);
    m.attrs.push_back(attrs);
    m.sizes.push_back(std::move(*size));
    m.approximate.push_back(approx_size);
  }

  // A name one rank made at every traced count may be shared by the ranks
  // of its kind or follow the rank ("group_1.dat" made by rank 2 at 4 and 5
  // ranks is group_{r/2}.dat): where the target has several such ranks,
  // nothing traced tells which.
  void refuse_unseen_sharing(int32_t kind, const std::vector<RankRef>& refs, size_t j,
                             const std::vector<NameSample>& names) const {
    std::map<size_t, int> per_input;
    for (RankRef ref : refs)
      if (++per_input[ref.first] > 1) return;
    int64_t at_target = std::count(kinds_.target.begin(), kinds_.target.end(), kind);
    if (at_target < 2) return;
    std::string seen;
    for (const NameSample& s : names) seen += fmt::format("{}rank {} at n={}", seen.empty() ? "" : ", ", s.r, s.n);
    throw ToolError(fmt::format(
        "file {} of the ranks running {} ('{}'): one rank made it at each traced count ({}), and {} ranks run it at "
        "{}: whether they share the name or each make their own (a number that follows the rank) is not known; "
        "trace at a rank count where two ranks or more run it",
        j, kind_name(kind), *names.front().path, seen, at_target, n_));
  }

  void add_comm_model(int32_t kind, const std::vector<RankRef>& refs, size_t j, KindModel& m) {
    std::vector<CommSample> samples;
    trace::CommOrigin origin = trace::CommOrigin::unknown;
    for (RankRef ref : refs) {
      int32_t g = plan_rank(ref).comms[j];
      const auto* members = g < 0 ? nullptr : &inputs_[ref.first].plan.comms[size_t(g)].members;
      if (g >= 0) origin = inputs_[ref.first].plan.comms[size_t(g)].origin;
      samples.push_back({ref.second, inputs_[ref.first].n, members});
    }
    std::optional<CommModel> c = CommModel::fit(samples);
    if (!c) {
      std::string seen;
      for (size_t s = 0; s < samples.size() && s < 8; ++s)
        seen += fmt::format("\n    n={} rank {}: [{}]", samples[s].n, samples[s].r,
                            samples[s].members ? fmt::format("{}", fmt::join(*samples[s].members, ",")) : "freed");
      throw ToolError(
          fmt::format("communicator {} of the ranks running {}: its members follow no model (all "
                      "ranks, the rank alone, blocks or strides of k ranks, a fixed list):{}",
                      j, kind_name(kind), seen));
    }
    notes_.push_back(
        {-1, -1, -1, fmt::format("communicator {} ({})", j, kind_name(kind)), c->describe(), "communicator members"});
    m.comms.push_back(std::move(*c));
    m.comm_origins.push_back(origin);
  }

  void add_rank(int64_t r) {
    int32_t kind = kinds_.target[size_t(r)];
    if (kind < 0 || members_[size_t(kind)].empty())
      throw ToolError(fmt::format("rank {} of {} would run {}, a combination no input shows", r, n_,
                                  kind < 0 ? std::string("no stream") : kind_name(kind)));
    KindModel& m = model(kind);
    trace::PlanRank pr;
    const Input& largest = inputs_.back();
    pr.host = largest.plan.ranks[one_host_ ? 0 : size_t(r % largest.n)].host;
    pr.placement = largest.plan.ranks[size_t(r % largest.n)].placement;  // bound or not, as the inputs ran
    pr.cwd = m.cwd;
    pr.traced_ns = std::llround(m.traced.predict(n_));
    for (size_t j = 0; j < m.names.size(); ++j) pr.files.push_back(file_id(m, j, r, kind));
    std::vector<CommInstance> seen;
    for (size_t j = 0; j < m.comms.size(); ++j) {
      const CommModel& c = m.comms[j];
      if (c.null()) {
        pr.comms.push_back(-1);
        continue;
      }
      CommInstance inst = c.instance(r, n_);
      int ordinal = int(std::count(seen.begin(), seen.end(), inst));
      seen.push_back(inst);
      auto [it, fresh] = comm_ids_.emplace(std::make_pair(inst, ordinal), int32_t(out_.comms.size()));
      if (fresh) out_.comms.push_back({c.members(inst, n_), m.comm_origins[j]});
      pr.comms.push_back(it->second);
    }
    out_.ranks.push_back(std::move(pr));
  }

  // A file of the same name and size on every rank of a kind (a library, the
  // shared file) is looked up once, not once per rank.
  int32_t file_id(KindModel& m, size_t j, int64_t r, int32_t kind) {
    bool fixed = m.names[j].constant() && m.sizes[j].rank_free();
    if (fixed && m.fixed_ids[j] >= 0) return m.fixed_ids[j];
    int32_t id = new_file_id(m, j, r, kind);
    if (fixed) m.fixed_ids[j] = id;
    return id;
  }

  int32_t new_file_id(const KindModel& m, size_t j, int64_t r, int32_t kind) {
    std::optional<std::string> path = m.names[j].render(r, n_);
    std::optional<int64_t> size = m.approximate[j] ? approximate(m.sizes[j], r, n_, 0) : m.sizes[j].eval_int(r, n_);
    if (!path || !size || *size < 0)
      throw ToolError(fmt::format("file {} of rank {} ({}) at {} ranks: {} = {} is not a whole number", j, r,
                                  kind_name(kind), n_, path ? "its size" : "its name",
                                  path ? m.sizes[j].formula() : m.names[j].describe()));
    auto [it, fresh] = file_ids_.emplace(*path, int32_t(out_.files.size()));
    if (fresh) {
      trace::PlanFile f = m.attrs[j];
      f.path = *path;
      f.initial_size = *size;
      out_.files.push_back(std::move(f));
    } else {
      trace::PlanFile& f = out_.files[size_t(it->second)];
      f.initial_size = std::max(f.initial_size, *size);
    }
    return it->second;
  }

  const StreamContext& ctx_;
  const std::vector<Input>& inputs_;
  const RankKinds& kinds_;
  trace::Plan& out_;
  std::vector<trace::ExtrapNote>& notes_;
  int64_t n_;
  bool one_host_ = true;
  std::vector<std::vector<RankRef>> members_;
  std::vector<std::optional<KindModel>> models_;
  std::unordered_map<std::string, int32_t> file_ids_;
  std::map<std::pair<CommInstance, int>, int32_t> comm_ids_;
};

}  // namespace

void extrapolate_tables(const StreamContext& ctx, const RankKinds& kinds, trace::Plan& out) {
  TableBuilder(ctx, kinds, out).run();
}

}  // namespace mpior::extrap
