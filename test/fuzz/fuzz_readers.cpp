// A mutation fuzzer for mpior's readers. It takes a valid mpior file (a rank
// trace, a job file or a plan), decompresses its body, mutates the body and
// writes it back in a container with a correct CRC-32C (so the mutation
// reaches the body decoder and the tools behind it, not only the checksum),
// then runs the tools on it as a user would. Every run must end with exit 0,
// or exit 1 and messages that begin with the tool's name; a signal, another
// status, "terminate called" or a run longer than --timeout is a failure,
// kept in the work directory as crash-N.mpior.
//
//   fuzz_readers --post P --replay R --seed-dir D --file F --work W
//                [--count N] [--seconds S] [--rng X] [--timeout T]
//
// D is a trace directory (F = job.mpior, rank-000000.mpior, the aggregate
// ranks.mpior or the merged job trace merged.mpior: mpior-post D,
// then --dump F) or a plan directory (F = plan.mpior: --dump, then replay).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "test/fuzz/fuzz_run.hpp"
#include "trace/codec.hpp"
#include "trace/format.hpp"
#include "trace/format_aggregate.hpp"

namespace fs = std::filesystem;
using namespace mpior::fuzz;
namespace trace = mpior::trace;

namespace {

struct Options {
  std::string post, replay, seed_dir, file, work;
  uint64_t count = 1000, rng = 1;
  double seconds = 0, timeout = 10;
};

std::vector<std::vector<std::string>> commands(const Options& o, const fs::path& in, const fs::path& out) {
  fs::path target = in / o.file;
  if (o.file == "plan.mpior")
    return {
        {o.post, "--dump", target.string()},
        {o.replay, "--io-only", "--stall-timeout", "2", "--stdio", "null", "--fs", (out / "fs").string(), in.string()}};
  return {{o.post, in.string(), "-o", (out / "plan").string()}, {o.post, "--dump", target.string()}};
}

std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// An aggregate (trace/format_aggregate.hpp): either one rank entry's body mutated
// and the file rebuilt with correct checksums (the mutation reaches the rank
// trace decoder), or the index mutated in place with its checksum fixed.
std::vector<uint8_t> mutate_aggregate(const std::vector<uint8_t>& seed, std::mt19937_64& rng) {
  trace::AggregateIndex x = trace::decode_aggregate_index(seed, "seed");
  if (x.entries.empty() || rng() % 2) {
    std::vector<uint8_t> out = seed;
    size_t index_len = size_t(trace::Decoder({seed.data() + 12, 8}, "seed").fixed64()), head_end = 20 + index_len;
    std::vector<uint8_t> index(out.begin() + 20, out.begin() + long(head_end));
    index = mutate(index, rng);
    index.resize(index_len);  // same length: the traces stay where they are
    std::copy(index.begin(), index.end(), out.begin() + 20);
    trace::Encoder crc;
    crc.fixed32(trace::crc32c({out.data(), head_end}));
    std::copy(crc.bytes().begin(), crc.bytes().end(), out.begin() + long(head_end));
    return out;
  }
  size_t victim = size_t(rng() % x.entries.size());
  std::vector<int32_t> ranks;
  std::vector<uint64_t> lengths;
  std::vector<uint8_t> traces;
  for (size_t i = 0; i < x.entries.size(); ++i) {
    std::span<const uint8_t> e = trace::aggregate_entry(seed, x, i, "seed");
    std::vector<uint8_t> one(e.begin(), e.end());
    if (i == victim) {
      fs::path tmp = fs::temp_directory_path() / ("mpior-fuzz-entry-" + std::to_string(::getpid()));
      write_bytes(tmp, one);
      Body b = unwrap_file(tmp);
      fs::remove(tmp);
      one = rewrap(b, mutate(b.body, rng));
    }
    ranks.push_back(x.entries[i].rank);
    lengths.push_back(one.size());
    traces.insert(traces.end(), one.begin(), one.end());
  }
  return trace::encode_aggregate(x.job_id, x.size, ranks, lengths, traces);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mutation fuzzer for mpior's readers"};
  Options o;
  app.add_option("--post", o.post)->required();
  app.add_option("--replay", o.replay)->required();
  app.add_option("--seed-dir", o.seed_dir)->required();
  app.add_option("--file", o.file)->required();
  app.add_option("--work", o.work)->required();
  app.add_option("--count", o.count);
  app.add_option("--seconds", o.seconds, "stop after this long (0: run --count inputs)");
  app.add_option("--rng", o.rng);
  app.add_option("--timeout", o.timeout, "seconds one tool run may take");
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<uint8_t> seed_bytes = read_bytes(fs::path(o.seed_dir) / o.file);
    bool aggregate = trace::file_type(seed_bytes) == "aggregate trace";
    Body seed = aggregate ? Body{} : unwrap_file(fs::path(o.seed_dir) / o.file);
    fs::path in = fs::path(o.work) / "in", out = fs::path(o.work) / "out";
    std::mt19937_64 rng(o.rng);
    auto start = std::chrono::steady_clock::now();
    Tally tally;
    uint64_t i = 0;
    for (; i < o.count; ++i) {
      if (o.seconds > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > o.seconds)
        break;
      fs::remove_all(in);
      fs::remove_all(out);
      fs::create_directories(out);
      fs::copy(o.seed_dir, in, fs::copy_options::recursive);
      std::vector<uint8_t> bytes = aggregate ? mutate_aggregate(seed_bytes, rng) : rewrap(seed, mutate(seed.body, rng));
      write_bytes(in / o.file, bytes);
      for (const auto& cmd : commands(o, in, out)) {
        Outcome r = run_tool(cmd, out / "stderr.txt", o.timeout);
        if (!tally.add(r, cmd)) write_bytes(fs::path(o.work) / ("crash-" + std::to_string(i) + ".mpior"), bytes);
      }
    }
    std::cout << "fuzz " << o.file << ": " << i << " inputs, " << tally.summary() << "\n";
    return tally.failures ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << "fuzz_readers: " << e.what() << "\n";
    return 2;
  }
}
