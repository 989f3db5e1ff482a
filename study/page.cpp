#include "study/page.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "report/svg.hpp"

namespace mpior::study {

namespace {

using report::text_escape;

const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

struct Mark {
  int ranks = 0;
  double value = 0, low = 0, high = 0;
  bool traced = false, shown = false;
  std::string status;
};
struct Line {
  std::string name, color;
  double offset = 0;  // px: replay and ratio points side by side
  std::vector<Mark> marks;
};

// One series per target and method: `key` "replay" or "predict", `value` its field.
std::vector<Line> lines_of(const nlohmann::json& study, const char* key, const char* value, const char* iv) {
  std::vector<Line> out;
  size_t t = 0;
  for (const nlohmann::json& target : study["targets"]) {
    for (const nlohmann::json& s : study["settings"]) {
      Line l{fmt::format("{} {} ({})", target["name"].get<std::string>(),
                         std::string(key) == "replay" ? "replay" : "ratio", s["label"].get<std::string>()),
             kColors[t % 6],
             std::string(key) == "replay" ? -4.0 : 4.0,
             {}};
      for (const nlohmann::json& p : study["points"]) {
        if (p["target"] != target["name"] || p["setting"] != s["name"]) continue;
        Mark m{p["ranks"].get<int>(), 0, 0, 0, p["traced"].get<bool>(), false, p["status"].get<std::string>()};
        if (p.contains(key) && p[key].contains(iv)) {
          m.value = p[key][value].get<double>();
          m.low = p[key][iv][0].get<double>();
          m.high = p[key][iv][1].get<double>();
          m.shown = p["drawn"].get<bool>();
        }
        l.marks.push_back(m);
      }
      if (!l.marks.empty()) out.push_back(std::move(l));
      ++t;
    }
  }
  return out;
}

// Value against ranks (log2 axis), each point with its interval as a bar; a
// traced count's marker outlined; a point not drawn is an x at the axis.
std::string plot(const std::vector<Line>& lines, const std::vector<int>& ranks, const std::string& label) {
  const double W = 640, H = 300, L = 60, R = 190, T = 20, B = 40;
  double top = 0;
  for (const Line& l : lines)
    for (const Mark& m : l.marks)
      if (m.shown) top = std::max(top, m.high);
  top = top > 0 ? top * 1.1 : 1;
  double lo = std::log2(ranks.front()), hi = std::log2(ranks.back());
  auto x = [&](int n) { return hi > lo ? L + (std::log2(n) - lo) / (hi - lo) * (W - L - R) : (L + W - R) / 2; };
  auto y = [&](double v) { return H - B - v / top * (H - T - B); };
  report::Svg svg(W, H, label);
  svg.line(L, H - B, W - R, H - B);
  svg.line(L, T, L, H - B);
  for (int i = 0; i <= 4; ++i)
    svg.text(L - 4, y(top * i / 4) + 4, fmt::format("{:.3g} s", top * i / 4), report::Svg::Anchor::end, 10);
  for (int n : ranks) svg.text(x(n), H - B + 14, std::to_string(n), report::Svg::Anchor::middle, 10);
  svg.text((L + W - R) / 2, H - 6, "ranks", report::Svg::Anchor::middle, 11);
  for (size_t i = 0; i < lines.size(); ++i) {
    const Line& l = lines[i];
    const Mark* prev = nullptr;
    for (const Mark& m : l.marks) {
      double cx = x(m.ranks) + l.offset;
      if (!m.shown) {
        svg.text(cx, H - B - 4, "x", report::Svg::Anchor::middle, 12);
        svg.rect(cx - 4, H - B - 12, 8, 10, "none", fmt::format("{} at {} ranks: {}", l.name, m.ranks, m.status));
        continue;
      }
      if (prev) svg.line(x(prev->ranks) + l.offset, y(prev->value), cx, y(m.value), l.color);
      svg.line(cx, y(m.low), cx, y(m.high), l.color);
      svg.line(cx - 3, y(m.low), cx + 3, y(m.low), l.color);
      svg.line(cx - 3, y(m.high), cx + 3, y(m.high), l.color);
      if (m.traced) svg.rect(cx - 5, y(m.value) - 5, 10, 10, "#000");
      svg.rect(cx - 3, y(m.value) - 3, 6, 6, l.offset < 0 ? l.color : "#fff",
               fmt::format("{} at {} ranks{}: {:.4g} s [{:.4g}, {:.4g}]", l.name, m.ranks, m.traced ? " (traced)" : "",
                           m.value, m.low, m.high));
      prev = &m;
    }
    double ly = T + 14 * double(i);
    svg.rect(W - R + 10, ly - 8, 8, 8, l.offset < 0 ? l.color : "#fff", l.name);
    svg.line(W - R + 10, ly - 4, W - R + 18, ly - 4, l.color);
    svg.text(W - R + 22, ly, l.name, report::Svg::Anchor::start, 10);
  }
  svg.text(W - R + 10, T + 14 * double(lines.size()) + 6, "black frame: traced count", report::Svg::Anchor::start, 9);
  svg.text(W - R + 10, T + 14 * double(lines.size()) + 20, "x: failed, over budget or not run",
           report::Svg::Anchor::start, 9);
  return svg.str();
}

std::string split_chart(const nlohmann::json& study) {
  int largest = study["largest"]["ranks"].get<int>();
  std::vector<std::string> bins;
  std::vector<report::Series> series = {
      {"data", "#1f77b4", {}}, {"metadata", "#ff7f0e", {}}, {"sync wait", "#9467bd", {}}, {"compute", "#7f7f7f", {}}};
  for (const nlohmann::json& p : study["points"]) {
    if (p["ranks"] != largest || p["status"] != "ok" || p["setting"] != "base" || !p.contains("replay")) continue;
    bins.push_back(p["target"].get<std::string>());
    const nlohmann::json& s = p["replay"]["split"];
    int i = 0;
    for (const char* k : {"data_s", "metadata_s", "sync_wait_s", "compute_s"})
      series[size_t(i++)].values.push_back(s[k]);
  }
  if (bins.empty()) return "<p>No finished point at the largest count.</p>";
  return report::grouped_bars(bins, series, fmt::format("time per rank at {} ranks (s)", largest));
}

std::string status_table(const nlohmann::json& study) {
  std::string h =
      "<table><tr><th>point</th><th>status</th><th>replay I/O s [interval]</th>"
      "<th>ratio I/O s [interval]</th><th>run s</th><th>note</th></tr>\n";
  for (const nlohmann::json& p : study["points"]) {
    auto iv = [&](const char* k) {
      if (!p.contains(k) || !p[k].contains("interval")) return std::string("-");
      return fmt::format("{:.4g} [{:.4g}, {:.4g}]", p[k]["io_s"].get<double>(), p[k]["interval"][0].get<double>(),
                         p[k]["interval"][1].get<double>());
    };
    std::string note = p["errors"].empty() ? "" : p["errors"][0].get<std::string>();
    if (p.contains("mpirun") && p["status"] == "needs_mpi")
      note = "run: " + p["mpirun"].get<std::string>() + ", then add " + p["result_option"].get<std::string>();
    if (p["status"] == "ok" && !p["drawn"].get<bool>()) note = "not drawn: the trust check failed";
    h += fmt::format("<tr><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                     text_escape(p["id"].get<std::string>()), p["traced"].get<bool>() ? " (traced)" : "",
                     text_escape(p["status"].get<std::string>()), iv("replay"), iv("predict"),
                     p.contains("replay") ? fmt::format("{:.4g}", p["replay"]["run_s"].get<double>()) : "-",
                     text_escape(note));
  }
  return h + "</table>\n";
}

std::string trust_section(const nlohmann::json& study) {
  const nlohmann::json& c = study["trust_check"];
  std::string h = fmt::format(
      "<p>Traced counts replayed on the reference ({}): <b>{}</b> (threshold {:.3g}%, worst {:.3g}%). "
      "Replay intervals are &plusmn;{:.3g}%.</p>\n<table><tr><th>ranks</th><th>traced s</th><th>replay s</th>"
      "<th>error %</th><th>ok</th></tr>\n",
      text_escape(study["reference"].get<std::string>()), c["passed"].get<bool>() ? "passed" : "FAILED",
      c["threshold_pct"].get<double>(), c["worst_error_pct"].get<double>(), study["replay_error_pct"].get<double>());
  for (const nlohmann::json& r : c["counts"])
    h += fmt::format("<tr><td>{}</td><td>{:.4g}</td><td>{:.4g}</td><td>{:.3g}</td><td>{}</td></tr>\n",
                     r["ranks"].get<int>(), r["traced_s"].get<double>(), r["replay_s"].get<double>(),
                     r["error_pct"].get<double>(), r["ok"].get<bool>() ? "yes" : "no");
  return h + "</table>\n";
}

std::string findings(const nlohmann::json& study) {
  std::string h = "<ul>\n";
  for (const nlohmann::json& d : study["largest"]["dominant"]) {
    std::string file = d["file"].is_null() ? "-" : d["file"]["path"].get<std::string>();
    h += fmt::format(
        "<li>At {} ranks on {}: most bytes to <code>{}</code>; most I/O time in <code>{}</code>; "
        "dominant class {}.</li>\n",
        study["largest"]["ranks"].get<int>(), text_escape(d["target"].get<std::string>()), text_escape(file),
        text_escape(d["op"].get<std::string>()), text_escape(d["class"].get<std::string>()));
  }
  for (const nlohmann::json& s : study["disagreements"]) h += "<li>" + text_escape(s.get<std::string>()) + "</li>\n";
  if (study["disagreements"].empty())
    h += "<li>The replay and the ratio prediction agree within their intervals at every point.</li>\n";
  return h + "</ul>\n";
}

}  // namespace

std::string render_page(const nlohmann::json& study) {
  std::vector<int> ranks = study["ranks"].get<std::vector<int>>();
  std::vector<Line> io = lines_of(study, "replay", "io_s", "interval");
  for (Line& l : lines_of(study, "predict", "io_s", "interval")) io.push_back(std::move(l));
  std::string h =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>mpior study</title>\n<style>"
      "body{font-family:sans-serif;margin:1em 2em;max-width:60em}table{border-collapse:collapse;font-size:90%}"
      "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}</style></head><body>\n"
      "<h1>mpior study</h1>\n";
  h += "<p>Traced at";
  for (const nlohmann::json& in : study["inputs"])
    h += fmt::format("{} {} ranks (<code>{}</code>)", &in == &study["inputs"].front() ? "" : ",",
                     in["ranks"].get<int>(), text_escape(in["dir"].get<std::string>()));
  h += ". Targets:";
  for (const nlohmann::json& t : study["targets"])
    h += fmt::format(" {} = <code>{}</code>", text_escape(t["name"].get<std::string>()),
                     text_escape(t["dir"].get<std::string>()));
  h += ".</p>\n<section id=\"trust\"><h2>Trust check</h2>\n" + trust_section(study) + "</section>\n";
  h += "<section id=\"findings\"><h2>Findings</h2>\n" + findings(study) + "</section>\n";
  h += "<section id=\"io\"><h2>I/O time per rank against ranks</h2>\n" +
       plot(io, ranks, "I/O time per rank: replay (filled) and ratio prediction (open)") + "</section>\n";
  h += "<section id=\"run\"><h2>Run time against ranks (replay)</h2>\n" +
       plot(lines_of(study, "replay", "run_s", "run_interval"), ranks, "replayed run time") + "</section>\n";
  h +=
      "<section id=\"split\"><h2>Where the time goes at the largest count</h2>\n" + split_chart(study) + "</section>\n";
  h += "<section id=\"points\"><h2>Every point</h2>\n" + status_table(study) + "</section>\n</body></html>\n";
  return h;
}

}  // namespace mpior::study
