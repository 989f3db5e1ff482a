#include "report/svg.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "report/html_report.hpp"

using namespace mpior::report;

TEST_CASE("text_escape turns markup into text and odd bytes into \\xNN") {
  CHECK(text_escape("/a/<script>alert(\"x\")</script>.dat") ==
        "/a/&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;.dat");
  CHECK(text_escape("a&b'c") == "a&amp;b&#39;c");
  CHECK(text_escape("caf\xc3\xa9") == "caf\xc3\xa9");           // UTF-8 stays
  CHECK(text_escape("bad\xff\xc3") == "bad\\xff\\xc3");         // not UTF-8
  CHECK(text_escape(std::string("nul\0x", 5)) == "nul\\x00x");  // control bytes
}

TEST_CASE("SVG shapes escape their text and titles") {
  Svg svg(100, 50, "a <plot>");
  svg.rect(1, 2, 3, 4, "#fff", "</title><script>");
  svg.text(5, 6, "<b>");
  std::string s = svg.str();
  CHECK(s.find("<script") == std::string::npos);
  CHECK(s.find("&lt;/title&gt;&lt;script&gt;") != std::string::npos);
  CHECK(s.find(">&lt;b&gt;</text>") != std::string::npos);
  CHECK(s.find("aria-label=\"a &lt;plot&gt;\"") != std::string::npos);
  CHECK(s.rfind("</svg>") != std::string::npos);
}

TEST_CASE("plots scale to their largest value") {
  std::string bars = bar_chart({{"write", 10, "10"}, {"read", 5, "5"}}, "calls", "#000");
  CHECK(bars.find("width=\"640.00\"") != std::string::npos);  // the largest fills the width
  CHECK(bars.find("width=\"320.00\"") != std::string::npos);
  Heatmap h{{"rank 0", "rank 1"}, "0 s", "1 s", {{0, 4}, {1, 0}}, "bytes"};
  std::string hm = heatmap(h, "volume");
  CHECK(hm.find("rank 0 bin 1: 4 B") != std::string::npos);
  CHECK(hm.find("fill=\"#ffffff\"") != std::string::npos);  // empty cells are white
}

TEST_CASE("grouped bars say their unit and keep small values") {
  std::string g = grouped_bars({"disk", "tmpfs"}, {{"data", "#000", {0.31, 0.02}}, {"compute", "#111", {1.98, 1.5}}},
                               "time per rank at 32 ranks (s)");
  CHECK(g.find(">1.98</text>") != std::string::npos);  // the axis top, not rounded to 2
  CHECK(g.find("data disk: 0.31") != std::string::npos);
  CHECK(g.find(">time per rank at 32 ranks (s)</text>") != std::string::npos);  // the label is drawn
  CHECK(grouped_bars({"a"}, {{"calls", "#000", {123456}}}, "calls").find(">123456</text>") != std::string::npos);
}

TEST_CASE("access-size bins are powers of two") {
  CHECK(size_bin(0) == 0);
  CHECK(size_bin(1) == 1);
  CHECK(size_bin(4095) == 12);
  CHECK(size_bin(4096) == 13);
  CHECK(size_bin_label(13) == "4.0 KiB–8.0 KiB");
  CHECK(bytes_text(1536) == "1.5 KiB");
  CHECK(bytes_text(12) == "12 B");
}

TEST_CASE("the page has every section and no script") {
  ReportData d;
  d.title = "<script>t</script>";
  d.files.push_back({"/x/<script>", 1, 0, 1, 1, "one rank"});
  std::string page = render_html(d);
  for (const char* id : {"job", "heatmap", "ops", "sizes", "files", "mpi", "loops"})
    CHECK(page.find(std::string("<section id=\"") + id + "\">") != std::string::npos);
  CHECK(page.find("<section id=\"replay\">") == std::string::npos);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("/x/&lt;script&gt;") != std::string::npos);
}
