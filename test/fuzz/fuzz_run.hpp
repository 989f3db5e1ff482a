// The fuzzer's pieces: the mpior container (format.cpp's layout, written
// uncompressed), body mutations, and running a tool with a time limit.
#pragma once

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace mpior::fuzz {

struct Body {
  std::string magic;
  uint32_t version = 0;
  std::vector<uint8_t> body;
};

Body unwrap_file(const std::filesystem::path& p);
std::vector<uint8_t> rewrap(const Body& like, const std::vector<uint8_t>& body);
std::vector<uint8_t> mutate(std::vector<uint8_t> body, std::mt19937_64& rng);
void write_bytes(const std::filesystem::path& p, const std::vector<uint8_t>& bytes);

struct Outcome {
  int status = 0;  // exit status, or -signal
  bool timed_out = false;
  std::string err;  // the tool's stderr
};
Outcome run_tool(const std::vector<std::string>& cmd, const std::filesystem::path& err_file, double timeout_s);

struct Tally {
  uint64_t ok = 0, rejected = 0, failures = 0;
  // Counts the outcome; false (and a report on stderr) when it is a failure.
  bool add(const Outcome& r, const std::vector<std::string>& cmd);
  std::string summary() const;
};

}  // namespace mpior::fuzz
