// A small SVG writer for the HTML report: shapes with escaped text and
// tooltips, and the plots the report draws (bars, grouped histogram bars, a
// heatmap). Every string that reaches the output goes through text_escape.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mpior::report {

// Text for XML/HTML: & < > " ' as entities; bytes that are not UTF-8 as
// "\xNN", so any file name shows as text.
std::string text_escape(std::string_view s);

class Svg {
 public:
  Svg(double width, double height, std::string_view label);
  // title: a tooltip (escaped), empty for none.
  void rect(double x, double y, double w, double h, std::string_view fill, std::string_view title = {});
  void line(double x1, double y1, double x2, double y2, std::string_view stroke = "#888");
  enum class Anchor { start, middle, end };
  void text(double x, double y, std::string_view s, Anchor a = Anchor::start, double size = 11);
  std::string str() const;

 private:
  double w_, h_;
  std::string label_, body_;
};

struct Bar {
  std::string label;
  double value = 0;
  std::string shown;  // the value as text ("1.5 MiB")
};
// Horizontal bars, one per row, longest scaled to the width.
std::string bar_chart(const std::vector<Bar>& bars, std::string_view label, std::string_view color);

// Vertical bars in groups: series[s][i] is series s at bin i.
struct Series {
  std::string name, color;
  std::vector<double> values;
};
std::string grouped_bars(const std::vector<std::string>& bins, const std::vector<Series>& series,
                         std::string_view label);

// rows x cols cells, darker for more; row and column labels, a tooltip per cell.
struct Heatmap {
  std::vector<std::string> row_labels;
  std::string col_first, col_last;  // labels of the first and last column (times)
  std::vector<std::vector<double>> cells;
  std::string unit;  // for tooltips ("bytes")
};
std::string heatmap(const Heatmap& h, std::string_view label);

// "12 B", "1.5 KiB", "3.0 MiB", ...
std::string bytes_text(double bytes);

}  // namespace mpior::report
