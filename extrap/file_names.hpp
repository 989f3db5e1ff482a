// File names at another rank count (scalaioextrap §III-B2): a name is text
// and numbers; the text must be the same in every sample, each number is a
// quantity of (r, n) fitted exactly ("out_<r>.dat", "group_<r/4>",
// "run<n>/part<r>"), printed with the zero padding the samples had. Names
// that are the same everywhere (shared files) stay as they are.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "extrap/models.hpp"

namespace mpior::extrap {

struct NameSample {
  int64_t r = 0, n = 0;
  const std::string* path = nullptr;
};

class NameModel {
 public:
  // nullopt with *why set when the samples do not share a pattern.
  static std::optional<NameModel> fit(const std::vector<NameSample>& samples, std::string* why);
  // The name for rank r of n ranks; nullopt when a number is not an integer
  // or is negative there.
  std::optional<std::string> render(int64_t r, int64_t n) const;
  // "out_{r}.dat" for notes; empty when the name is constant.
  std::string describe() const;
  bool constant() const { return parts_.size() == 1 && !parts_[0].number; }

 private:
  struct Part {
    std::string text;  // literal text (also a number seen the same everywhere)
    bool number = false;
    Fit fit;
    size_t width = 0;  // zero padding: digits at least
  };
  std::vector<Part> parts_;
};

}  // namespace mpior::extrap
