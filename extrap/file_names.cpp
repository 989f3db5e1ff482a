#include "extrap/file_names.hpp"

#include <fmt/format.h>

namespace mpior::extrap {

namespace {

constexpr size_t kMaxDigits = 18;  // numbers that fit in int64 for sure

struct Token {
  std::string text;
  bool digits = false;
};

std::vector<Token> tokens(const std::string& path) {
  std::vector<Token> out;
  for (char c : path) {
    bool d = c >= '0' && c <= '9';
    if (out.empty() || out.back().digits != d) out.push_back({"", d});
    out.back().text += c;
  }
  return out;
}

}  // namespace

std::optional<NameModel> NameModel::fit(const std::vector<NameSample>& samples, std::string* why) {
  NameModel m;
  std::vector<std::vector<Token>> all;
  for (const NameSample& s : samples) all.push_back(tokens(*s.path));
  const std::vector<Token>& first = all.front();
  for (size_t k = 1; k < all.size(); ++k) {
    bool same = all[k].size() == first.size();
    for (size_t t = 0; same && t < first.size(); ++t)
      same = all[k][t].digits == first[t].digits && (first[t].digits || all[k][t].text == first[t].text);
    if (!same) {
      *why = fmt::format("the names differ in more than their numbers: '{}' (n={}, rank {}) and '{}' (n={}, rank {})",
                         *samples.front().path, samples.front().n, samples.front().r, *samples[k].path, samples[k].n,
                         samples[k].r);
      return std::nullopt;
    }
  }
  for (size_t t = 0; t < first.size(); ++t) {
    bool varies = false;  // a number the same everywhere stays text (dates, versions, "007")
    for (size_t k = 1; k < all.size(); ++k) varies = varies || all[k][t].text != first[t].text;
    if (!first[t].digits || !varies) {
      if (!m.parts_.empty() && !m.parts_.back().number)
        m.parts_.back().text += first[t].text;
      else
        m.parts_.push_back({first[t].text, false, {}, 0});
      continue;
    }
    Part p{"", true, {}, 0};
    std::vector<Sample> pts;
    bool padded = false;
    for (size_t k = 0; k < all.size(); ++k) {
      const std::string& digits = all[k][t].text;
      if (digits.size() > kMaxDigits) {
        *why = fmt::format("'{}' has a number too long to extrapolate", *samples[k].path);
        return std::nullopt;
      }
      padded = padded || (digits.size() > 1 && digits[0] == '0');
      pts.push_back({samples[k].r, samples[k].n, std::stoll(digits)});
    }
    if (padded) {
      p.width = all[0][t].text.size();
      for (const auto& tk : all)
        if (tk[t].text.size() != p.width) {
          *why = fmt::format("the zero padding of a number in '{}' is not the same everywhere", *samples[0].path);
          return std::nullopt;
        }
    }
    std::optional<Fit> f = fit_exact(pts);
    if (!f) {
      *why = fmt::format("no model gives number {} of the names ('{}' at n={} rank {}, '{}' at n={} rank {}, ...)",
                         t / 2 + 1, *samples.front().path, samples.front().n, samples.front().r, *samples.back().path,
                         samples.back().n, samples.back().r);
      return std::nullopt;
    }
    p.fit = std::move(*f);
    m.parts_.push_back(std::move(p));
  }
  if (m.parts_.empty()) m.parts_.push_back({"", false, {}, 0});
  return m;
}

std::optional<std::string> NameModel::render(int64_t r, int64_t n) const {
  std::string out;
  for (const Part& p : parts_) {
    if (!p.number) {
      out += p.text;
      continue;
    }
    std::optional<int64_t> v = p.fit.eval_int(r, n);
    if (!v || *v < 0) return std::nullopt;
    out += fmt::format("{:0{}}", *v, p.width);
  }
  return out;
}

std::string NameModel::describe() const {
  std::string out;
  for (const Part& p : parts_) out += p.number ? "{" + p.fit.formula() + "}" : p.text;
  return out;
}

}  // namespace mpior::extrap
