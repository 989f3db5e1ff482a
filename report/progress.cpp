#include "report/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace mpior::report {

namespace {
constexpr auto kFirstDraw = std::chrono::milliseconds(500);
constexpr auto kRedraw = std::chrono::milliseconds(200);
constexpr int kWidth = 30;
}  // namespace

bool progress_wanted(bool quiet) { return !quiet && ::isatty(STDERR_FILENO) == 1; }

ProgressBar::ProgressBar(bool enabled, Probe probe) : probe_(std::move(probe)) {
  if (enabled) thread_ = std::thread([this] { run(); });
}

ProgressBar::~ProgressBar() { stop(); }

void ProgressBar::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ProgressBar::run() {
  auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  if (cv_.wait_for(lock, kFirstDraw, [this] { return stopping_; })) return;
  while (!stopping_) {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    lock.unlock();
    draw(probe_(elapsed));
    lock.lock();
    cv_.wait_for(lock, kRedraw, [this] { return stopping_; });
  }
  if (drawn_) {
    std::fputs("\r\033[K", stderr);  // leave the line as it was
    std::fflush(stderr);
  }
}

void ProgressBar::draw(const View& v) {
  std::string bar;
  if (v.fraction >= 0) {
    int full = int(std::min(1.0, v.fraction) * kWidth + 0.5);
    bar = fmt::format("[{}{}] {:3.0f}% ", std::string(size_t(full), '#'), std::string(size_t(kWidth - full), ' '),
                      std::min(1.0, v.fraction) * 100);
  }
  std::string line = "\r" + bar + v.text + "\033[K";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

void PhaseProgress::set(const char* phase, uint64_t done, uint64_t total) {
  std::lock_guard lock(mu_);
  phase_ = phase;
  done_ = done;
  total_ = total;
}

ProgressBar::View PhaseProgress::view() const {
  std::lock_guard lock(mu_);
  if (phase_.empty()) return {-1, "mpior-post: starting"};
  double f = total_ ? double(done_) / double(total_) : -1;
  return {f, fmt::format("mpior-post: {} {}/{}", phase_, done_, total_)};
}

}  // namespace mpior::report
