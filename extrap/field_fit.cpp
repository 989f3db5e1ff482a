#include "extrap/field_fit.hpp"

#include <fmt/format.h>

#include <climits>
#include <optional>
#include <span>

#include "extrap/models.hpp"
#include "extrap/permuted.hpp"
#include "extrap/site_fit.hpp"
#include "trace/tool_error.hpp"

namespace mpior::extrap {

namespace {

using trace::SeqItem;

// Why no model fits, and what would resolve it.
std::string refusal_hint(const char* why) {
  if (why)
    return fmt::format("\n  This quantity is incidental ({}): without --strict it takes the best fit, with a warning.",
                       why);
  return kStructureHint;
}

}  // namespace

std::string quantity_where(const StreamClass& cls, int32_t leaf, int32_t node, const char* what) {
  std::string pos = leaf >= 0 ? fmt::format("position {} ({} at call site {:#x})", leaf,
                                            trace::name(cls.shape->leaves[size_t(leaf)].kind),
                                            cls.shape->leaves[size_t(leaf)].callsite)
                              : fmt::format("loop node {}", node);
  return fmt::format("{}, {}, {}", cls.name(), pos, what);
}

namespace {

// The fits of every field of the samples' one shape (scalars; a loop's
// stride and count).
SeqFit fit_shape(const FitTarget& t, const std::vector<SeqSample>& samples, int32_t leaf, int32_t node,
                 const char* what, const char* why, int site_field) {
  std::span<const SeqItem> shape = samples.front().items;
  for (const SeqSample& s : samples)
    if (!same_shape(shape, s.items)) {
      if (why && !t.strict) return mean_fit(samples);
      throw ToolError(
          fmt::format("{}: the values do not have one loop shape at every rank and rank count, "
                      "so no model can extrapolate them:{}{}{}",
                      quantity_where(t.cls, leaf, node, what), samples_text(samples), dealt_lengths_hint(samples),
                      refusal_hint(why)));
    }
  SeqFit out{{}, std::vector<SeqItem>(shape.begin(), shape.end())};
  std::vector<Sample> pts(samples.size());
  std::vector<std::vector<SeqSample>> site;  // the position at every rank, when a fit is ambiguous (site_fit.hpp)
  size_t counts = rank_counts(samples);
  for (size_t item = 0; item < shape.size(); ++item) {
    auto fit_one = [&](auto field, auto value) {
      for (size_t k = 0; k < samples.size(); ++k) pts[k] = {samples[k].r, samples[k].n, value(samples[k])};
      if (std::optional<Fit> f = fit_exact(pts)) {
        if (site_field >= 0 && site.empty() && ambiguous(*f, counts))
          site = site_samples(t.inputs, *t.cls.shape, size_t(leaf), site_field);
        SiteEvidence ev{pts, {}};
        bool check = site_field >= 0 && ambiguous(*f, counts);
        Fit fit = check ? site_consistent(std::move(*f), pts, site, shape, value, ev) : std::move(*f);
        // Structure that another model fits as exactly and as simply, and
        // that it predicts otherwise at the target, is refused.
        if (std::optional<Parting> p = why ? std::nullopt : parting_rival(fit, ev, t.ranks, t.n, t.ranks_at))
          throw Ambiguous(
              parting_refusal(quantity_where(t.cls, leaf, node, what), fit, *p, t.n, samples_text(samples)));
        out.fields.push_back({item, field, std::move(fit)});
      } else if (why && !t.strict) {
        int64_t lo = field == FieldFit::count ? 1 : floor_of(pts);
        out.fields.push_back({item, field, fit_best(pts), true, lo});
      } else {
        throw ToolError(fmt::format("{}: no model fits the values exactly (item {} of the value sequence):{}{}{}",
                                    quantity_where(t.cls, leaf, node, what), item, samples_text(samples),
                                    dealt_hint(pts, "They are"), refusal_hint(why)));
      }
    };
    if (!shape[item].is_loop()) {
      fit_one(FieldFit::scalar, [item](const SeqSample& s) { return s.items[item].v + s.offset; });
    } else {
      fit_one(FieldFit::shift, [item](const SeqSample& s) { return s.items[item].v; });
      fit_one(FieldFit::count, [item](const SeqSample& s) { return int64_t(s.items[item].count); });
    }
  }
  return out;
}

}  // namespace

SeqFit fit_fields(const FitTarget& t, const std::vector<SeqSample>& given, int32_t leaf, int32_t node, const char* what,
                  const char* why, int site_field) {
  std::vector<std::vector<SeqItem>> store;
  std::vector<SeqSample> loops = one_shape(given) ? std::vector<SeqSample>{} : as_loops(given, store);
  const std::vector<SeqSample>& samples = loops.empty() ? given : loops;
  try {
    return fit_shape(t, samples, leaf, node, what, why, site_field);
  } catch (const Ambiguous&) {
    throw;
  } catch (const ToolError&) {
    // The values one by one: each run's values were compressed on their own
    // (rank 0's neighbours 1, 2, 3 at 12 ranks are one loop, 1, 3, 4 at 16
    // are not), or a loop's stride lies between two values that each follow
    // a model (a grid's x and y neighbours) and follows none itself. When
    // that fails too, the refusal is the first one's.
    std::vector<std::vector<SeqItem>> flat_store;
    std::vector<SeqSample> flat = as_flat(samples, flat_store);
    if (flat.empty() || flat.front().items.size() == samples.front().items.size()) throw;
    try {
      return fit_shape(t, flat, leaf, node, what, why, site_field);
    } catch (const Ambiguous&) {
      throw;
    } catch (const ToolError&) {
    }
    throw;
  }
}

void evaluate(const FitTarget& t, const SeqFit& fits, int64_t r, int32_t leaf, int32_t node, const char* what,
              std::vector<SeqItem>& out) {
  size_t base = out.size();
  out.insert(out.end(), fits.shape.begin(), fits.shape.end());
  for (const FieldFit& f : fits.fields) {
    std::optional<int64_t> v = f.approximate ? approximate(f.fit, r, t.n, f.floor) : f.fit.eval_int(r, t.n);
    if (!v && !f.fit.per_rank.empty())
      throw ToolError(fmt::format("{}: at {} ranks rank {} needs a value of its own, and only ranks {} were seen",
                                  quantity_where(t.cls, leaf, node, what), t.n, r, f.fit.formula()));
    if (!v)
      throw ToolError(fmt::format("{}: at {} ranks the model {} = {} gives rank {} a value that is not an integer",
                                  quantity_where(t.cls, leaf, node, what), t.n, f.fit.name, f.fit.formula(), r));
    SeqItem& it = out[base + f.item];
    if (f.field == FieldFit::count) {
      if (*v < 1 || *v > int64_t(UINT32_MAX))
        throw ToolError(fmt::format("{}: at {} ranks the model {} = {} gives rank {} a loop of {} iterations",
                                    quantity_where(t.cls, leaf, node, what), t.n, f.fit.name, f.fit.formula(), r, *v));
      it.count = uint32_t(*v);
    } else {
      it.v = *v;
    }
  }
  if (fits.permuted) shuffle_tail(out, base, r, t.n);
}

}  // namespace mpior::extrap
