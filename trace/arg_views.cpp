#include "trace/arg_views.hpp"

#include <stdexcept>
#include <string>

namespace mpior::trace {

void view_misuse(std::string_view view, Kind k) {
  throw std::logic_error(std::string(view) + " of a " + std::string(name(k)) + " record, whose " +
                         std::string(name(info(k).op)) + " slots are another family's");
}

}  // namespace mpior::trace
