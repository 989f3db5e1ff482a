// study/index.html: one self-contained page (inline SVG, no script) with the
// study's curves, intervals, time split and findings (issue 65).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace mpior::study {

// study: study.json as written. Every text goes through report::text_escape.
std::string render_page(const nlohmann::json& study);

}  // namespace mpior::study
