#include "report/html_report.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <fstream>

#include "report/svg.hpp"

namespace mpior::report {

namespace {

const char* kStyle = R"(body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1100px}
h1{font-size:1.4em}h2{font-size:1.15em;border-bottom:1px solid #ccc;margin-top:1.6em}
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ddd;padding:3px 7px;text-align:right}
td:first-child,th:first-child{text-align:left}th{background:#f3f3f3}
pre{background:#f7f7f7;padding:.6em;overflow:auto;max-height:30em;font-size:.85em}
.note{color:#666;font-size:.9em}
)";

std::string esc(std::string_view s) { return text_escape(s); }

std::string section(const char* id, const char* title, const std::string& body) {
  return fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n", id, esc(title), body);
}

std::string table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
  std::string out = "<table>\n";
  if (!head.empty()) {
    out += "<tr>";
    for (const std::string& h : head) out += "<th>" + esc(h) + "</th>";
    out += "</tr>\n";
  }
  for (const auto& r : rows) {
    out += "<tr>";
    for (const std::string& c : r) out += "<td>" + esc(c) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string job_section(const ReportData& d) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& [k, v] : d.job) rows.push_back({k, v});
  return section("job", "Job", table({}, rows));
}

std::string heatmap_section(const ReportData& d) {
  Heatmap h{d.row_labels, "0 s", fmt::format("{:.3f} s", double(d.span_ns) / 1e9), d.volume, "bytes"};
  std::string body =
      "<p class=\"note\">Bytes read and written by the application, per rank (rows) and time bin "
      "(columns); darker is more. Hover a cell for its bytes.</p>\n";
  return section("heatmap", "I/O volume per rank over time", body + heatmap(h, "I/O volume per rank over time"));
}

std::string ops_section(const ReportData& d) {
  std::vector<Bar> calls, bytes;
  std::vector<std::vector<std::string>> rows;
  for (const ReportData::Op& o : d.ops) {
    calls.push_back({o.name, double(o.calls), std::to_string(o.calls)});
    if (o.bytes > 0) bytes.push_back({o.name, double(o.bytes), bytes_text(double(o.bytes))});
    rows.push_back({o.name, std::to_string(o.calls), std::to_string(o.pruned), std::to_string(o.bytes),
                    fmt::format("{:.6f}", o.time_s)});
  }
  std::string body = "<h3>Calls</h3>\n" + bar_chart(calls, "calls by function", "#4c78a8");
  if (!bytes.empty()) body += "<h3>Bytes</h3>\n" + bar_chart(bytes, "bytes by function", "#f58518");
  body += table({"call", "calls", "pruned", "bytes", "time (s)"}, rows);
  return section("ops", "Operations by call", body);
}

std::string sizes_section(const ReportData& d) {
  auto used = [&](size_t i) {
    return (i < d.read_sizes.size() && d.read_sizes[i] > 0) || (i < d.write_sizes.size() && d.write_sizes[i] > 0);
  };
  size_t first = 0, n = std::max(d.read_sizes.size(), d.write_sizes.size());
  while (n > 0 && !used(n - 1)) --n;  // from the smallest size seen to the largest
  while (first < n && !used(first)) ++first;
  std::vector<std::string> bins;
  Series reads{"reads", "#54a24b", {}}, writes{"writes", "#e45756", {}};
  for (size_t i = first; i < n; ++i) {
    bins.push_back(size_bin_label(i));
    reads.values.push_back(i < d.read_sizes.size() ? d.read_sizes[i] : 0);
    writes.values.push_back(i < d.write_sizes.size() ? d.write_sizes[i] : 0);
  }
  std::string body = bins.empty() ? "<p>No reads or writes.</p>\n"
                                  : grouped_bars(bins, {reads, writes}, "access sizes of reads and writes");
  return section("sizes", "Access sizes", body);
}

std::string files_section(const ReportData& d) {
  std::vector<std::vector<std::string>> rows;
  for (const ReportData::File& f : d.files)
    rows.push_back({f.path, bytes_text(double(f.written)), bytes_text(double(f.read)), std::to_string(f.ops),
                    std::to_string(f.ranks), f.pattern});
  return section("files", "Files", table({"path", "written", "read", "ops", "ranks", "pattern"}, rows));
}

std::string mpi_section(const ReportData& d) {
  std::vector<std::vector<std::string>> rows;
  std::vector<Series> series{{"logged", "#4c78a8", {}}, {"pruned", "#bab0ac", {}}};
  std::vector<std::string> names;
  for (const ReportData::Mpi& m : d.mpi) {
    rows.push_back({m.name, std::to_string(m.logged), std::to_string(m.pruned)});
    names.push_back(m.name);
    series[0].values.push_back(double(m.logged));
    series[1].values.push_back(double(m.pruned));
  }
  std::string body = d.mpi.empty() ? "<p>No MPI calls.</p>\n"
                                   : grouped_bars(names, series, "MPI calls logged and pruned") +
                                         table({"call", "logged", "pruned"}, rows);
  return section("mpi", "MPI calls logged and pruned", body);
}

std::string replay_section(const ReportData& d) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> names;
  std::vector<Series> series{{"traced", "#4c78a8", {}}, {"replayed", "#f58518", {}}};
  for (const ReportData::RankTime& r : d.replay) {
    double err = r.traced_s > 0 ? 100 * (r.replay_s - r.traced_s) / r.traced_s : 0;
    rows.push_back({"rank " + std::to_string(r.rank), fmt::format("{:.6f}", r.traced_s),
                    fmt::format("{:.6f}", r.replay_s), fmt::format("{:+.1f}%", err)});
    names.push_back(std::to_string(r.rank));
    series[0].values.push_back(r.traced_s * 1e3);
    series[1].values.push_back(r.replay_s * 1e3);
  }
  return section("replay", "Traced against replayed time",
                 "<p class=\"note\">Milliseconds per rank.</p>\n" +
                     grouped_bars(names, series, "traced and replayed time per rank") +
                     table({"rank", "traced (s)", "replayed (s)", "error"}, rows));
}

}  // namespace

size_t size_bin(int64_t bytes) { return bytes <= 0 ? 0 : size_t(std::bit_width(uint64_t(bytes))); }

std::string size_bin_label(size_t bin) {
  if (bin == 0) return "0 B";
  double lo = std::ldexp(1.0, int(bin) - 1);
  return bytes_text(lo) + "–" + bytes_text(lo * 2);
}

std::string render_html(const ReportData& d) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + esc(d.title) +
                    "</title>\n<style>\n" + kStyle + "</style>\n</head>\n<body>\n<h1>" + esc(d.title) + "</h1>\n";
  out += job_section(d);
  if (!d.replay.empty()) out += replay_section(d);
  out += heatmap_section(d);
  out += ops_section(d);
  out += sizes_section(d);
  out += files_section(d);
  out += mpi_section(d);
  out += section("loops", "Loop structure", "<pre>" + esc(d.loops) + "</pre>\n");
  return out + "</body>\n</html>\n";
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  return bool(out);
}

}  // namespace mpior::report
