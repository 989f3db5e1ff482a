#include "report/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace mpior::report {

namespace {

// Length of the UTF-8 sequence starting at s[i], 0 when it is not one.
size_t utf8_length(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
  return n;
}

std::string num(double v) { return fmt::format("{:.2f}", v); }

}  // namespace

std::string text_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default: {
        size_t n = utf8_length(s, i);
        unsigned char u = static_cast<unsigned char>(c);
        if (n == 0 || (n == 1 && u < 0x20 && c != '\n' && c != '\t')) {
          out += fmt::format("\\x{:02x}", u);
          ++i;
        } else {
          out.append(s.substr(i, n));
          i += n;
        }
        continue;
      }
    }
    ++i;
  }
  return out;
}

std::string bytes_text(double b) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (std::fabs(b) >= 1024 && u < 5) {
    b /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", b) : fmt::format("{:.1f} {}", b, units[u]);
}

Svg::Svg(double width, double height, std::string_view label) : w_(width), h_(height), label_(label) {}

void Svg::rect(double x, double y, double w, double h, std::string_view fill, std::string_view title) {
  body_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"", num(x), num(y),
                       num(std::max(0.0, w)), num(std::max(0.0, h)), text_escape(fill));
  if (title.empty()) {
    body_ += "/>";
  } else {
    body_ += "><title>" + text_escape(title) + "</title></rect>";
  }
  body_ += "\n";
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view stroke) {
  body_ += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n", num(x1), num(y1), num(x2),
                       num(y2), text_escape(stroke));
}

void Svg::text(double x, double y, std::string_view s, Anchor a, double size) {
  const char* anchor = a == Anchor::start ? "start" : a == Anchor::middle ? "middle" : "end";
  body_ += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" font-size=\"{}\">{}</text>\n", num(x), num(y),
                       anchor, num(size), text_escape(s));
}

std::string Svg::str() const {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"{}\" font-family=\"sans-serif\">\n{}</svg>\n",
      num(w_), num(h_), num(w_), num(h_), text_escape(label_), body_);
}

std::string bar_chart(const std::vector<Bar>& bars, std::string_view label, std::string_view color) {
  const double row = 18, left = 190, width = 640, right = 110;
  Svg svg(left + width + right, row * double(bars.size()) + 10, label);
  double max = 0;
  for (const Bar& b : bars) max = std::max(max, b.value);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    double y = 5 + row * double(i);
    double w = max > 0 ? width * b.value / max : 0;
    svg.text(left - 6, y + 12, b.label, Svg::Anchor::end);
    svg.rect(left, y + 2, w, row - 4, color, b.label + ": " + b.shown);
    svg.text(left + w + 4, y + 12, b.shown);
  }
  return svg.str();
}

namespace {
// A value as an axis or a tooltip shows it: counts whole, seconds and other
// small values to three significant digits (0.3 s is not "0").
std::string value_text(double v) { return std::abs(v) >= 1000 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }
}  // namespace

std::string grouped_bars(const std::vector<std::string>& bins, const std::vector<Series>& series,
                         std::string_view label) {
  const double left = 50, bottom = 60, top = 24, height = 180;
  const double group = std::max(24.0, 14.0 * double(series.size()) + 8);
  double legend = 110 * double(series.size());
  Svg svg(std::max(left + group * double(bins.size()) + 20, left + legend), top + height + bottom, label);
  double max = 0;
  for (const Series& s : series)
    for (double v : s.values) max = std::max(max, v);
  svg.line(left, top + height, left + group * double(bins.size()), top + height);
  svg.text(left - 4, top + 4, value_text(max), Svg::Anchor::end);
  svg.text(left - 4, top + height, "0", Svg::Anchor::end);
  double bar = (group - 8) / double(std::max<size_t>(1, series.size()));
  for (size_t i = 0; i < bins.size(); ++i) {
    double x0 = left + group * double(i) + 4;
    for (size_t s = 0; s < series.size(); ++s) {
      double v = i < series[s].values.size() ? series[s].values[i] : 0;
      double h = max > 0 ? height * v / max : 0;
      svg.rect(x0 + bar * double(s), top + height - h, bar - 1, h, series[s].color,
               fmt::format("{} {}: {}", series[s].name, bins[i], value_text(v)));
    }
    svg.text(x0 + group / 2, top + height + 14 + 11 * double(i % 3), bins[i], Svg::Anchor::middle, 9);
  }
  svg.text(left, top + height + bottom - 6, label, Svg::Anchor::start, 10);  // what the bars measure, in what unit
  for (size_t s = 0; s < series.size(); ++s) {
    svg.rect(left + 110 * double(s), 4, 10, 10, series[s].color);
    svg.text(left + 110 * double(s) + 14, 13, series[s].name);
  }
  return svg.str();
}

std::string heatmap(const Heatmap& h, std::string_view label) {
  const double left = 110, top = 10, width = 720, bottom = 34;
  size_t cols = 0;
  for (const auto& r : h.cells) cols = std::max(cols, r.size());
  const double cell_h = h.cells.size() > 32 ? 8 : 16;
  const double cell_w = cols ? width / double(cols) : width;
  Svg svg(left + width + 20, top + cell_h * double(h.cells.size()) + bottom, label);
  double max = 0;
  for (const auto& r : h.cells)
    for (double v : r) max = std::max(max, v);
  for (size_t r = 0; r < h.cells.size(); ++r) {
    double y = top + cell_h * double(r);
    if (h.cells.size() <= 64) svg.text(left - 6, y + cell_h - 3, h.row_labels[r], Svg::Anchor::end, cell_h - 4);
    for (size_t c = 0; c < h.cells[r].size(); ++c) {
      double v = h.cells[r][c];
      // White for nothing, then from light to dark blue by the square root.
      double t = max > 0 ? std::sqrt(v / max) : 0;
      std::string fill =
          v <= 0 ? "#ffffff" : fmt::format("rgb({},{},{})", int(222 - 214 * t), int(235 - 187 * t), int(247 - 140 * t));
      svg.rect(left + cell_w * double(c), y, cell_w, cell_h, fill,
               fmt::format("{} bin {}: {}", h.row_labels[r], c, bytes_text(v)));
    }
  }
  double yb = top + cell_h * double(h.cells.size());
  svg.line(left, yb, left + width, yb);
  svg.text(left, yb + 14, h.col_first);
  svg.text(left + width, yb + 14, h.col_last, Svg::Anchor::end);
  svg.text(left + width / 2, yb + 28, "time →", Svg::Anchor::middle);
  return svg.str();
}

}  // namespace mpior::report
