#include "postproc/summary_writer.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string_view>

#include "trace/bytes_text.hpp"

namespace mpior::postproc {

namespace {

// Writes values as nlohmann's serializer does: shortest round-trip doubles
// (its own Grisu2, with ".0" on integral values), null for non-finite ones,
// strings escaped the same way (its own escaping for anything but plain
// printable ASCII), members in key order.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  void number(int64_t v) { fmt::format_to(std::back_inserter(out_), "{}", v); }
  void number(uint64_t v) { fmt::format_to(std::back_inserter(out_), "{}", v); }
  void number(int32_t v) { number(int64_t(v)); }
  void number(bool v) { out_ += v ? "true" : "false"; }
  void number(double v) {
    if (!std::isfinite(v)) {
      out_ += "null";
      return;
    }
    std::array<char, 64> buf;
    char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), v);
    out_.append(buf.data(), size_t(end - buf.data()));
  }
  void string(std::string_view s) {
    for (char c : s) {
      auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u > 0x7e || c == '"' || c == '\\') {
        out_ += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return;
      }
    }
    out_ += '"';
    out_ += s;
    out_ += '"';
  }
  // A value dumped by nlohmann at this writer's depth.
  void json(const nlohmann::json& v) {
    std::string text = v.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    size_t from = 0;
    for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from)) {
      out_.append(text, from, nl + 1 - from);
      out_.append(indent_, ' ');
      from = nl + 1;
    }
    out_.append(text, from);
  }

  void open(char bracket) {
    out_ += bracket;
    indent_ += 2;
    first_ = true;
  }
  void close(char bracket, bool empty) {
    indent_ -= 2;
    if (!empty) newline();
    out_ += bracket;
    first_ = false;
  }
  void item() {
    if (!first_) out_ += ',';
    newline();
    first_ = false;
  }
  void key(std::string_view k) {
    item();
    out_ += '"';
    out_ += k;
    out_ += "\": ";
  }
  template <typename T>
  void member(std::string_view k, T v) {
    key(k);
    number(v);
  }
  void member(std::string_view k, const std::string& v) {
    key(k);
    string(v);
  }

 private:
  void newline() {
    out_ += '\n';
    out_.append(indent_, ' ');
  }
  std::string& out_;
  size_t indent_ = 0;
  bool first_ = true;
};

double seconds(int64_t ns) { return double(ns) / 1e9; }

// Per file, most bytes moved first: totals and what the replay must prepare.
void write_files(Writer& w, const Analysis& a) {
  std::vector<int32_t> order = files_by_bytes(a);
  w.open('[');
  for (int32_t id : order) {
    const trace::PlanFile& f = a.files.files[size_t(id)];
    const FileTotals& t = a.summary.files[size_t(id)];
    w.item();
    w.open('{');
    w.member("bytes_read", t.bytes_read);
    w.member("bytes_written", t.bytes_written);
    w.member("created", f.created);
    w.member("directory", f.directory);
    w.member("existed", f.existed);
    w.member("id", id);
    w.member("initial_size", f.initial_size);
    w.member("mapped_read", t.mapped_read);
    w.member("mapped_written", t.mapped_written);
    w.key("mpiio");
    w.open('{');
    w.member("bytes_read", t.mpiio_read);
    w.member("bytes_written", t.mpiio_written);
    w.member("calls", t.mpiio_ops);
    w.close('}', false);
    w.member("nested_read", t.nested_read);
    w.member("nested_written", t.nested_written);
    w.member("ops", t.ops);
    w.member("path", trace::escape_bytes(f.path));
    w.member("stdio_read", t.stdio_read);
    w.close('}', false);
  }
  w.close(']', order.empty());
}

// Per rank: times, host and CPU placement.
void write_per_rank(Writer& w, const SummaryHeader& h, const Summary& s) {
  w.open('[');
  for (int32_t r = 0; r < h.size(); ++r) {
    const RankTotals& t = s.ranks[size_t(r)];
    w.item();
    w.open('{');
    w.member("compute_s", seconds(t.compute_ns()));
    w.member("cpu_wait_s", seconds(t.cpu_wait_ns));
    w.member("host", trace::escape_bytes(h.hosts[size_t(r)]));
    w.member("io_s", seconds(t.io_ns));
    w.member("mpi_s", seconds(t.mpi_ns));
    if (size_t(r) < h.placements.size()) {
      const trace::CpuPlacement& p = h.placements[size_t(r)];
      w.key("placement");
      w.open('{');
      w.member("bound", p.bound());
      w.member("cpus", p.allowed);
      w.member("online", p.online);
      w.close('}', false);
    }
    w.member("rank", r);
    w.member("signal_calls_unrecorded", t.signal_unrecorded);
    w.member("traced_s", seconds(t.traced_ns));
    w.close('}', false);
  }
  w.close(']', h.size() <= 0);
}

}  // namespace

std::string summary_json_text(const SummaryHeader& h, const Analysis& a, const nlohmann::json& extra) {
  nlohmann::json top = summary_json_lean(h, a);
  for (const auto& [k, v] : extra.items()) top[k] = v;
  top.erase("files");
  top.erase("per_rank");
  std::string out;
  out.reserve(size_t(h.size()) * 400 + a.files.files.size() * 500 + 4096);
  Writer w(out);
  bool files = false, per_rank = false;
  // The two arrays in their places among the other members (keys in order).
  auto arrays_before = [&](std::string_view key) {
    if (!files && key > "files") files = true, w.key("files"), write_files(w, a);
    if (!per_rank && key > "per_rank") per_rank = true, w.key("per_rank"), write_per_rank(w, h, a.summary);
  };
  w.open('{');
  for (const auto& [k, v] : top.items()) {
    arrays_before(k);
    w.key(k);
    w.json(v);
  }
  arrays_before("\x7f");
  w.close('}', false);
  out += '\n';
  return out;
}

}  // namespace mpior::postproc
