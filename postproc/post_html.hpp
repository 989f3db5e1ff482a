// mpior-post --html: the HTML report of a traced run (report/html_report.hpp).
#pragma once

#include <string>

#include "postproc/analyze.hpp"
#include "postproc/trace_set.hpp"

namespace mpior::postproc {

// Walks every event once more. Throws ToolError when the file
// cannot be written.
void write_trace_html(const std::string& file, const postproc::TraceSet& set, const postproc::Analysis& a);

}  // namespace mpior::postproc
