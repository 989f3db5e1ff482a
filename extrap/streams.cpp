#include "extrap/streams.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "extrap/ambiguity.hpp"
#include "extrap/field_fit.hpp"
#include "extrap/incidental.hpp"
#include "extrap/models.hpp"
#include "extrap/permuted.hpp"
#include "extrap/random_deal.hpp"
#include "extrap/seq_fit.hpp"
#include "extrap/stream_timing.hpp"
#include "merge/merge_params.hpp"
#include "trace/text.hpp"
#include "trace/tool_error.hpp"

namespace mpior::extrap {

namespace {

using trace::SeqItem;

class StreamExtrapolator {
 public:
  StreamExtrapolator(const StreamClass& cls, const StreamContext& ctx, const std::vector<int64_t>& ranks, int64_t n,
                     int32_t index, const RanksAt& ranks_at)
      : cls_(cls),
        ctx_(ctx),
        inputs_(ctx.inputs),
        ranks_(ranks),
        ranks_at_(ranks_at),
        n_(n),
        index_(index),
        notes_(ctx.notes),
        target_{ctx.inputs, cls, ranks, n, ranks_at, ctx.strict},
        params_(out_) {}

  trace::Stream run() {
    const trace::Stream& shape = *cls_.shape;
    out_.thread = shape.thread;
    out_.lossless = false;
    std::vector<int32_t> r32(ranks_.begin(), ranks_.end());
    out_.ranks = merge::add_rank_list(out_.values, r32);
    tabled_.assign(shape.leaves.size(), nullptr);
    random_count_.assign(shape.leaves.size(), 0);
    random_field_.assign(shape.leaves.size(), 0);
    // Leaves first: a loop around a position dealt from a table runs each
    // rank's share of it.
    for (size_t i = 0; i < shape.leaves.size(); ++i) {
      out_.leaves.push_back(leaf(i));
      warn(i);
    }
    std::vector<int32_t> loops = enclosing_loops(shape);
    for (size_t i = 0; i < shape.nodes.size(); ++i) {
      const trace::Node& node = shape.nodes[i];
      trace::Param iters;
      const DealtTable* table = nullptr;
      for (size_t l = 0; l < loops.size(); ++l)
        if (loops[l] == int32_t(i) && tabled_[l]) table = tabled_[l];
      if (node.loop) iters = table ? table_iterations(*table, i) : loop_iterations(i, loops);
      out_.nodes.push_back({node.loop, node.index, iters});
    }
    for (size_t l = 0; l < loops.size(); ++l)
      if (tabled_[l] && loops[l] < 0) check_single(*tabled_[l], l);
    return std::move(out_);
  }

 private:
  using Getter = std::function<trace::Param(const trace::Stream&)>;

  const char* incidental(size_t leaf, int slot) const { return ctx_.uses.incidental(cls_, leaf, slot); }

  // Position by position; when a quantity fits no model and the position's
  // values are one table dealt over the ranks (dealt.hpp), from that table.
  trace::Leaf leaf(size_t i) {
    size_t notes = notes_.size(), approximated = approximated_.size();
    try {
      return leaf_fields(i, nullptr);
    } catch (const Ambiguous&) {
      throw;
    } catch (const ToolError& e) {
      std::string why;
      const DealtTable* table = ctx_.dealt.find(*cls_.shape, i, &why);
      if (!table) {
        std::string unsorted;
        if (std::optional<trace::Leaf> l = retry_leaf(i, notes, approximated, permute_, &unsorted))
          return std::move(*l);
        std::string random;
        if (std::optional<trace::Leaf> l = retry_leaf(i, notes, approximated, deal_, &random)) return std::move(*l);
        unsorted += random;
        if (std::string_view(e.what()).find(kDealtMark) == std::string_view::npos) throw ToolError(e.what() + unsorted);
        throw ToolError(
            fmt::format("{}\n  They are not one table dealt over the ranks: {}.{}", e.what(), why, unsorted));
      }
      notes_.erase(notes_.begin() + ptrdiff_t(notes), notes_.end());
      approximated_.resize(approximated);
      tabled_[i] = table;
      notes_.push_back({index_, int32_t(i), -1, "values", table->text(), "dealt table"});
      return leaf_fields(i, table);
    }
  }

  // Position i again with `mode` set, where a structure quantity no model
  // fits may be a permutation of values that fit (permute_, permuted.hpp) or
  // values dealt to random ranks (deal_, random_deal.hpp); nullopt when not,
  // with why in `why_not` (what failed).
  std::optional<trace::Leaf> retry_leaf(size_t i, size_t notes, size_t approximated, bool& mode, std::string* why_not) {
    if (ctx_.strict) return std::nullopt;
    notes_.erase(notes_.begin() + ptrdiff_t(notes), notes_.end());
    approximated_.resize(approximated);
    mode = true;
    try {
      trace::Leaf l = leaf_fields(i, nullptr);
      mode = false;
      return l;
    } catch (const ToolError& e) {
      *why_not = &mode == &permute_ ? not_permutation(e.what()) : not_random_deal(e.what());
      mode = false;
      notes_.erase(notes_.begin() + ptrdiff_t(notes), notes_.end());
      approximated_.resize(approximated);
      return std::nullopt;
    }
  }

  // The exact fit, or else (permute_ set) the exact fit of each sample's
  // values sorted, marked permuted. A structure fit that no sample checked
  // (determined: one rank's values at as many rank counts as the model has
  // coefficients fit anything) gives way to a checked fit of the sorted values.
  SeqFit fit_or_sorted(const std::vector<SeqSample>& samples, int32_t leaf, int32_t node, const char* what,
                       const char* why) {
    SeqFit fits;
    try {
      fits = fit_fields(target_, samples, leaf, node, what, why, site_field_);
    } catch (const ToolError& e) {
      if (!permute_ || dynamic_cast<const Ambiguous*>(&e)) throw;
      return sorted_fit(samples, leaf, node, what);
    }
    if (ctx_.strict || why || leaf < 0 || !determined(fits)) return fits;
    try {
      SeqFit sorted = sorted_fit(samples, leaf, node, what);
      if (!determined(sorted)) return sorted;
    } catch (const ToolError&) {
    }
    return fits;
  }

  static bool determined(const SeqFit& fits) {
    return std::any_of(fits.fields.begin(), fits.fields.end(), [](const FieldFit& f) { return f.fit.determined; });
  }

  SeqFit sorted_fit(const std::vector<SeqSample>& samples, int32_t leaf, int32_t node, const char* what) {
    std::vector<std::vector<SeqItem>> sorted;
    for (const SeqSample& s : samples) sorted.push_back(sorted_seq(s.items, s.offset));
    std::vector<SeqSample> by_value;
    for (size_t k = 0; k < samples.size(); ++k) by_value.push_back({samples[k].r, samples[k].n, sorted[k], 0});
    SeqFit fits = fit_fields(target_, by_value, leaf, node, what, nullptr, site_field_);
    fits.permuted = true;
    return fits;
  }

  trace::Leaf leaf_fields(size_t i, const DealtTable* table) {
    const trace::Leaf& shape = cls_.shape->leaves[i];
    trace::Leaf l;
    l.kind = shape.kind;
    l.depth = shape.depth;
    l.flags = shape.flags;
    l.callsite = shape.callsite;
    for (int a = 0; a < trace::kNumArgs; ++a) {
      auto get = [i, a](const trace::Stream& s) { return s.leaves[i].args[size_t(a)]; };
      field_ = a;
      l.args[size_t(a)] = table && table->dealt(a) ? table_param(*table, i, a)
                          : trace::is_handle_slot(shape.kind, a)
                              ? donor(get)
                              : param(get, trace::arg_name(shape.kind, a), int32_t(i), -1, incidental(i, a));
    }
    auto ret = [i](const trace::Stream& s) { return s.leaves[i].ret; };
    field_ = kRetField;
    l.ret = table && table->dealt(kRetField)    ? table_param(*table, i, kRetField)
            : trace::returns_handle(shape.kind) ? donor(ret)
                                                : param(ret, "ret", int32_t(i), -1, incidental(i, -1));
    field_ = kErrField;
    l.err = table && table->dealt(kErrField)
                ? table_param(*table, i, kErrField)
                : param([i](const trace::Stream& s) { return s.leaves[i].err; }, "errno", int32_t(i), -1);
    l.gap = timing(i, true);
    l.dur = timing(i, false);
    return l;
  }

  // Each rank's values of field f: its own first occurrences (fitted as
  // usual), then its entries in its write order.
  trace::Param table_param(const DealtTable& table, size_t leaf, int f) {
    std::vector<std::vector<SeqItem>> seqs = prefix_values(table, leaf, f);
    for (size_t k = 0; k < ranks_.size(); ++k) {
      std::vector<int64_t> v = table.values(f, ranks_[k], n_);
      if (v.empty() && !table.prefix())
        throw ToolError(fmt::format(
            "{}: at {} ranks rank {} gets none of the {} entries the ranks deal among them, which no traced "
            "rank showed; trace at two rank counts or more above {} too, so that the ranks without one form a "
            "stream of their own",
            where(int32_t(leaf), -1, "values"), n_, ranks_[k], table.entries(), table.entries()));
      for (int64_t x : v) seqs[k].push_back(SeqItem{x, 0, 0});
    }
    std::vector<merge::RankValues> per_rank;
    for (size_t k = 0; k < ranks_.size(); ++k) per_rank.push_back({int32_t(ranks_[k]), seqs[k]});
    return params_.merge(per_rank);
  }

  // Per target rank: the first table.prefix() values of field f, each
  // fitted over (r, n) like any value.
  std::vector<std::vector<SeqItem>> prefix_values(const DealtTable& table, size_t leaf, int f) {
    std::vector<std::vector<SeqItem>> out(ranks_.size());
    if (!table.prefix()) return out;
    auto get = [leaf, f](const trace::Stream& s) {
      const trace::Leaf& l = s.leaves[leaf];
      return f == kRetField ? l.ret : f == kErrField ? l.err : l.args[size_t(f)];
    };
    std::vector<SeqSample> samples = samples_of(get);
    std::vector<std::vector<SeqItem>> flat;
    for (const SeqSample& s : samples) {
      std::vector<int64_t> v = trace::seq_expand(s.items);
      flat.emplace_back();
      for (int64_t i = 0; i < table.prefix(); ++i)
        flat.back().push_back(SeqItem{(v.empty() ? 0 : v[std::min(size_t(i), v.size() - 1)]) + s.offset, 0, 0});
    }
    for (size_t k = 0; k < samples.size(); ++k) samples[k] = {samples[k].r, samples[k].n, flat[k], 0};
    const char* what = f == kRetField   ? "ret"
                       : f == kErrField ? "errno"
                                        : trace::arg_name(cls_.shape->leaves[leaf].kind, f);
    SeqFit fits = fit_fields(target_, samples, int32_t(leaf), -1, what, nullptr, site_field_);
    for (size_t k = 0; k < ranks_.size(); ++k) evaluate(target_, fits, ranks_[k], int32_t(leaf), -1, what, out[k]);
    return out;
  }

  // A loop around a dealt position runs each rank's share, as it did at
  // every input.
  trace::Param table_iterations(const DealtTable& table, size_t node) {
    std::vector<SeqSample> samples = samples_of([node](const trace::Stream& s) { return s.nodes[node].iters; });
    for (const SeqSample& s : samples) {
      std::vector<int64_t> v = trace::seq_expand(s.items);
      if (v.size() != 1 || v.front() + s.offset != table.prefix() + share_of(table.entries(), s.r, s.n))
        throw ToolError(fmt::format("{}: the trip counts are not {} plus each rank's share of the {} dealt entries:{}",
                                    where(-1, int32_t(node), "iterations"), table.prefix(), table.entries(),
                                    samples_text(samples)));
    }
    values_.clear();
    for (int64_t r : ranks_) values_.push_back(SeqItem{table.prefix() + share_of(table.entries(), r, n_), 0, 0});
    std::vector<merge::RankValues> per_rank;
    for (size_t k = 0; k < ranks_.size(); ++k)
      per_rank.push_back({int32_t(ranks_[k]), std::span<const SeqItem>(values_.data() + k, 1)});
    notes_.push_back({index_, -1, int32_t(node), "iterations",
                      fmt::format("{} + share({},r,n) (entries of a dealt table)", table.prefix(), table.entries()),
                      "dealt table"});
    return params_.merge(per_rank);
  }

  // A loop around a position dealt at random runs what each rank was dealt,
  // whatever model its traced trip counts fit (one rank's, at as many rank
  // counts as a model has coefficients, fit some).
  trace::Param loop_iterations(size_t node, const std::vector<int32_t>& loops) {
    Getter get = [node](const trace::Stream& s) { return s.nodes[node].iters; };
    for (size_t l = 0; l < loops.size(); ++l)
      if (loops[l] == int32_t(node) && random_count_[l] > 0) return random_iterations(node, l, get);
    return param(get, "iterations", -1, int32_t(node));
  }

  // Structure no model fits, even sorted: the union of the position's
  // values over every rank, fitted over n and dealt again at random
  // (random_deal.hpp), each rank taking the union's size over n.
  trace::Param random_param(size_t leaf, const char* what, const std::vector<SeqSample>& samples) {
    std::string why;
    std::optional<std::vector<RandomUnion>> unions = random_unions(inputs_, *cls_.shape, leaf, field_, &why);
    if (!unions) throw ToolError(fmt::format("{}{}: {}", where(int32_t(leaf), -1, what), kNotRandomDeal, why));
    std::vector<SeqSample> all;
    std::vector<Sample> counts;
    for (const RandomUnion& u : *unions) {
      all.push_back({0, u.n, u.sorted, 0});
      counts.push_back({0, u.n, u.per_rank});
    }
    SeqFit fits;
    try {
      fits = fit_fields(target_, all, int32_t(leaf), -1, what, nullptr, site_field_);
    } catch (const ToolError&) {
      throw ToolError(fmt::format("{}{}: their union over the ranks fits no model either:{}",
                                  where(int32_t(leaf), -1, what), kNotRandomDeal, samples_text(all)));
    }
    std::optional<Fit> count = fit_exact(counts);
    std::optional<int64_t> per = count ? count->eval_int(0, n_) : std::nullopt;
    std::vector<SeqItem> target;
    evaluate(target_, fits, 0, int32_t(leaf), -1, what, target);
    std::vector<int64_t> order = random_deal_order(target, n_);
    if (!per || *per < 1 || int64_t(order.size()) != *per * n_)
      throw ToolError(fmt::format("{}{}: the union's {} values at {} ranks are not the same number per rank",
                                  where(int32_t(leaf), -1, what), kNotRandomDeal, order.size(), n_));
    random_count_[leaf] = *per;
    random_field_[leaf] = field_;
    std::string names, model = fits_text(fits, &names);
    notes_.push_back({index_, int32_t(leaf), -1, what,
                      fmt::format("union {}; {} per rank, dealt at random", model.empty() ? "constant" : model, *per),
                      trace::kApproximateModel});
    why_ = "structure dealt to random ranks";
    approximated_.push_back(fmt::format(
        "{}: dealt at random: each rank's values are random, their union over the ranks fits ({}); each rank takes "
        "{} of it, drawn by a permutation seeded by rank count and values; values seen {}",
        what, model.empty() ? "constant" : model, *per, samples_line(samples)));
    values_.clear();
    for (int64_t r : ranks_)
      for (int64_t k = 0; k < *per; ++k) values_.push_back(SeqItem{order[size_t(r * *per + k)], 0, 0});
    std::vector<merge::RankValues> per_rank;
    for (size_t k = 0; k < ranks_.size(); ++k)
      per_rank.push_back(
          {int32_t(ranks_[k]), std::span<const SeqItem>(values_.data() + k * size_t(*per), size_t(*per))});
    return params_.merge(per_rank);
  }

  // The trip counts of the loop around a position dealt at random: each
  // rank's number of values there, at every input; at the target, the
  // number each rank was dealt.
  trace::Param random_iterations(size_t node, size_t leaf, const Getter& get) {
    std::vector<SeqSample> iters = samples_of(get);
    int f = random_field_[leaf];
    std::vector<SeqSample> values = samples_of([leaf, f](const trace::Stream& s) {
      const trace::Leaf& l = s.leaves[leaf];
      return f == kRetField ? l.ret : f == kErrField ? l.err : l.args[size_t(f)];
    });
    for (size_t k = 0; k < iters.size(); ++k) {
      std::vector<int64_t> v = trace::seq_expand(iters[k].items);
      if (v.size() != 1 || v.front() + iters[k].offset != int64_t(trace::seq_expand(values[k].items).size()))
        throw ToolError(
            fmt::format("{}: the trip counts are not the number of values of position {}, dealt at "
                        "random:{}",
                        where(-1, int32_t(node), "iterations"), leaf, samples_text(iters)));
    }
    notes_.push_back({index_, -1, int32_t(node), "iterations",
                      fmt::format("{} (values of position {} dealt at random)", random_count_[leaf], leaf),
                      trace::kApproximateModel});
    ctx_.warnings.push_back(
        fmt::format("{}, loop node {}: approximated (trip counts of a loop over values dealt at "
                    "random): each rank runs {}, the mean; values seen {}",
                    cls_.name(), node, random_count_[leaf], samples_line(iters)));
    values_.assign(1, SeqItem{random_count_[leaf], 0, 0});
    merge::RankValues one{int32_t(ranks_.front()), values_};
    return params_.merge(std::span(&one, 1));
  }

  // A dealt position outside any loop: every rank of the class takes one entry.
  void check_single(const DealtTable& table, size_t leaf) const {
    for (int64_t r : ranks_)
      if (table.prefix() + share_of(table.entries(), r, n_) != 1)
        throw ToolError(
            fmt::format("{}: at {} ranks rank {} takes {} of the {} dealt entries, and its stream "
                        "writes one; no traced rank count showed that",
                        where(int32_t(leaf), -1, "values"), n_, r, share_of(table.entries(), r, n_), table.entries()));
  }

  // One warning per approximated position: the call, its file, each
  // approximated quantity with its model and the values seen.
  void warn(size_t leaf) {
    if (approximated_.empty()) return;
    if (ctx_.uses.terminal_only(cls_, leaf)) {
      ++ctx_.terminal_approximated;
      approximated_.clear();
      return;
    }
    if (trace::is_mpi(cls_.shape->leaves[leaf].kind)) {
      ++ctx_.messages_approximated;
      approximated_.clear();
      return;
    }
    const trace::Leaf& l = cls_.shape->leaves[leaf];
    std::string file = ctx_.uses.path(cls_, leaf);
    std::string text = fmt::format("{}, position {} ({} at call site {:#x}{}): approximated ({})", cls_.name(), leaf,
                                   trace::name(l.kind), l.callsite, file.empty() ? "" : ", file " + file, why_);
    for (const std::string& a : approximated_) text += "\n    " + a;
    ctx_.warnings.push_back(std::move(text));
    approximated_.clear();
  }

  trace::TimeStats timing(size_t leaf, bool gap) {
    std::vector<std::pair<int64_t, trace::TimeStats>> per_input;
    std::vector<size_t> ranks;
    for (size_t in = 0; in < inputs_.size(); ++in) {
      if (cls_.at[in].empty()) continue;
      trace::TimeStats merged;
      for (const trace::Stream* s : cls_.at[in]) merged.merge(gap ? s->leaves[leaf].gap : s->leaves[leaf].dur);
      per_input.emplace_back(inputs_[in].n, merged);
      ranks.push_back(cls_.ranks[in].size());
    }
    std::string formula, name;
    trace::TimeStats t = extrapolate_timing(per_input, ranks, n_, ranks_.size(), &formula, &name);
    if (per_input.size() > 1 && name != "constant")
      notes_.push_back({index_, int32_t(leaf), -1, gap ? "gap" : "duration", formula, name});
    return t;
  }

  std::vector<SeqSample> samples_of(const Getter& get) {
    std::vector<SeqSample> out;
    for (size_t in = 0; in < inputs_.size(); ++in)
      for (const trace::Stream* s : cls_.at[in]) {
        trace::Param p = get(*s);
        for (int64_t r : s->rank_list()) {
          auto [items, offset] = rank_view(*s, p, r);
          out.push_back({r, inputs_[in].n, items, offset});
        }
      }
    return out;
  }

  std::string where(int32_t leaf, int32_t node, const char* what) const {
    return quantity_where(cls_, leaf, node, what);
  }

  void note(const SeqFit& fits, int32_t leaf, int32_t node, const char* what) {
    std::string names, text = fits_text(fits, &names);
    // An approximated quantity is named so in --dump and summary.json.
    if (fits.approximate()) names = trace::kApproximateModel;
    if (!text.empty()) notes_.push_back({index_, leaf, node, what, text, names});
  }

  // Handles are names the program got from the system (fd numbers depend on
  // what the MPI library opened, which follows no model): every target rank
  // takes them from one traced rank of the class, so each rank's handles stay
  // consistent with each other.
  trace::Param donor(const Getter& get) {
    size_t in = inputs_.size();
    while (in > 0 && cls_.at[in - 1].empty()) --in;
    const trace::Stream& s = *cls_.at[in - 1].back();
    auto [items, offset] = rank_view(s, get(s), s.rank_list().back());
    values_.assign(items.begin(), items.end());
    trace::seq_shift(values_, offset);
    // Every rank the same values: one rank says it (ParamMerger keeps no variant).
    merge::RankValues one{int32_t(ranks_.front()), values_};
    return params_.merge(std::span(&one, 1));
  }

  trace::Param param(const Getter& get, const char* what, int32_t leaf, int32_t node, const char* why = nullptr) {
    std::vector<SeqSample> samples = samples_of(get);
    if (samples.empty()) return {};
    SeqFit fits;
    site_field_ = leaf >= 0 && !why ? field_ : -1;
    try {
      fits = fit_or_sorted(samples, leaf, node, what, why);
      site_field_ = -1;
    } catch (const ToolError& e) {
      site_field_ = -1;
      if (!deal_ || leaf < 0 || dynamic_cast<const Ambiguous*>(&e)) throw;
      return random_param(size_t(leaf), what, samples);
    }
    note(fits, leaf, node, what);
    if (fits.approximate()) approximated(fits, samples, what, why);
    // A permuted quantity's order depends on the rank, and its values are
    // scalars whose number the fit gives: each rank's own range of values_.
    bool rank_free = !fits.permuted && std::all_of(fits.fields.begin(), fits.fields.end(),
                                                   [](const FieldFit& f) { return f.fit.rank_free(); });
    values_.clear();
    std::vector<size_t> starts;
    for (int64_t r : ranks_) {
      starts.push_back(values_.size());
      evaluate(target_, fits, r, leaf, node, what, values_);
      if (rank_free) break;
    }
    starts.push_back(values_.size());
    if (rank_free) {  // as in donor(): one rank says it for all
      merge::RankValues one{int32_t(ranks_.front()), std::span<const SeqItem>(values_)};
      return params_.merge(std::span(&one, 1));
    }
    std::vector<merge::RankValues> per_rank;
    per_rank.reserve(ranks_.size());
    for (size_t i = 0; i < ranks_.size(); ++i) {
      per_rank.push_back(
          {int32_t(ranks_[i]), std::span<const SeqItem>(values_.data() + starts[i], starts[i + 1] - starts[i])});
    }
    return params_.merge(per_rank);
  }

  void approximated(const SeqFit& fits, const std::vector<SeqSample>& samples, const char* what, const char* why) {
    if (!fits.permuted) {
      why_ = why;
      approximated_.push_back(fmt::format("{}: values seen {}", what, samples_line(samples)));
      return;
    }
    if (approximated_.empty() || !why_) why_ = "structure whose order no model fits";
    std::string names, model = fits_text(fits, &names);
    approximated_.push_back(
        fmt::format("{}: order approximated: a permutation of values that fit exactly once sorted{}, emitted in a "
                    "pseudo-random order seeded by rank, rank count and values; values seen {}",
                    what, model.empty() ? "" : " (" + model + ")", samples_line(samples)));
  }

  const StreamClass& cls_;
  const StreamContext& ctx_;
  const std::vector<Input>& inputs_;
  const std::vector<int64_t>& ranks_;
  const RanksAt& ranks_at_;
  int64_t n_;
  int32_t index_;
  std::vector<trace::ExtrapNote>& notes_;
  FitTarget target_;
  trace::Stream out_;
  merge::ParamMerger params_;
  std::vector<SeqItem> values_;
  std::vector<std::string> approximated_;  // of the current position, for its warning
  const char* why_ = nullptr;
  bool permute_ = false;                   // retrying a position: structure may be a permutation of what fits
  bool deal_ = false;                      // retrying a position: structure may be dealt to random ranks
  std::vector<int> random_field_;          // per position: the field dealt at random
  int site_field_ = -1;                    // the field whose fit may take the site's (site_fit.hpp), or -1
  int field_ = 0;                          // the field of the position param() fits (dealt.hpp's numbering)
  std::vector<int64_t> random_count_;      // per position: each rank's number of values dealt at random, or 0
  std::vector<const DealtTable*> tabled_;  // per position: the table its values came from
};

}  // namespace

trace::Stream extrapolate_stream(const StreamClass& cls, const StreamContext& ctx, const std::vector<int64_t>& ranks,
                                 int64_t n, int32_t stream_index, const RanksAt& ranks_at) {
  return StreamExtrapolator(cls, ctx, ranks, n, stream_index, ranks_at).run();
}

}  // namespace mpior::extrap
