#include "postproc/romio_sieve.hpp"

#include <algorithm>

#include "trace/tool_error.hpp"

namespace mpior::postproc {

namespace {

// ADIOI_BUFFERED_READ over the pieces: the buffer [at, at + len).
void sieve_reads(const std::vector<ByteRange>& pieces, int64_t max, int64_t file_end, std::vector<PosixTransfer>& out) {
  int64_t last = pieces.back().second - 1, at = 0, len = 0;
  for (auto [off, end] : pieces) {
    if (off >= at + len) {
      at = off, len = std::min(max, last - at + 1);
      add_read(out, at, at + len, file_end);
    }
    while (end - off > at + len - off) {
      // The piece's head stays; the buffer reads on from its end.
      int64_t head = at + len - off;
      at = off;
      int64_t more = std::min(max, last - at + 1);
      add_read(out, at + head, at + head + more, file_end);
      len = head + more;
    }
  }
}

// ADIOI_BUFFERED_WRITE over the pieces: the buffer [at, at + len) is read,
// filled, and written back whole.
void sieve_writes(const std::vector<ByteRange>& pieces, int64_t max, int64_t file_end,
                  std::vector<PosixTransfer>& out) {
  int64_t last = pieces.back().second - 1, at = 0, len = 0;
  auto write_back = [&] {
    out.push_back({at, at + len, false, len});
    file_end = std::max(file_end, at + len);
  };
  for (auto [off, end] : pieces) {
    if (off >= at + len) {
      if (len) write_back();
      at = off, len = std::min(max, last - at + 1);
      add_read(out, at, at + len, file_end);
    }
    int64_t left = end - off, copied = std::min(left, at + len - off);
    while (copied != left) {
      write_back();
      left -= copied;
      at += len, len = std::min(max, last - at + 1);
      add_read(out, at, at + len, file_end);
      copied = std::min(left, len);
    }
  }
  if (len) write_back();
}

}  // namespace

void check_sieve_hints(const SieveHints& h) {
  if (h.ind_rd_buffer_size < 1 || h.ind_wr_buffer_size < 1)
    throw ToolError("ind_rd_buffer_size and ind_wr_buffer_size must be at least one byte");
}

void add_read(std::vector<PosixTransfer>& out, int64_t begin, int64_t end, int64_t file_end) {
  int64_t found = std::clamp(file_end - begin, int64_t(0), end - begin);
  out.push_back({begin, end, true, found});
  if (found > 0 && found < end - begin) out.push_back({begin + found, end, true, 0});
}

std::vector<PosixTransfer> strided_transfers(const std::vector<ByteRange>& pieces, bool read, const SieveHints& h,
                                             int64_t file_end) {
  std::vector<PosixTransfer> out;
  if (pieces.empty()) return out;
  bool sieve = (read ? h.ds_read : h.ds_write) != CbMode::disable;
  if (!sieve || pieces.size() == 1) {
    for (auto [b, e] : pieces) out.push_back({b, e, read, e - b});
    return out;
  }
  if (read)
    sieve_reads(pieces, h.ind_rd_buffer_size, file_end, out);
  else
    sieve_writes(pieces, h.ind_wr_buffer_size, file_end, out);
  return out;
}

void window_transfers(const std::vector<ByteRange>& req, ByteRange dom, int64_t cb, bool read, int64_t file_end,
                      bool reread_short, std::vector<PosixTransfer>& out) {
  auto it = std::lower_bound(req.begin(), req.end(), dom,
                             [](const ByteRange& e, const ByteRange& d) { return e.second <= d.first; });
  if (it == req.end() || it->first >= dom.second) return;
  int64_t end = dom.first;  // one past the last byte requested in the domain
  for (auto e = it; e != req.end() && e->first < dom.second; ++e) end = std::min(e->second, dom.second);
  for (int64_t off = std::max(it->first, dom.first); off < end; off += cb) {
    int64_t wend = std::min(off + cb, end), covered = 0;
    while (it != req.end() && it->second <= off) ++it;
    for (auto e = it; e != req.end() && e->first < wend; ++e)
      covered += std::min(e->second, wend) - std::max(e->first, off);
    if (covered == 0) continue;
    bool hole = !read && covered < wend - off;
    if (hole && reread_short)
      add_read(out, off, wend, file_end);
    else if (hole)
      out.push_back({off, wend, true, std::clamp<int64_t>(file_end - off, 0, wend - off)});
    out.push_back({off, wend, read, wend - off});
  }
}

}  // namespace mpior::postproc
