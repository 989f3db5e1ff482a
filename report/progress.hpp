// A progress bar on stderr, redrawn in place by a thread of its own every
// 200 ms once the work has run for half a second (so it shows within a
// second on any longer run), only when stderr is a terminal and not --quiet.
// Workers only store counters; the bar reads them.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace mpior::report {

// Whether a bar should be drawn: stderr is a terminal and not quiet.
bool progress_wanted(bool quiet);

class ProgressBar {
 public:
  // What to show: fraction done in [0, 1] (negative: unknown) and the text
  // after the bar. Called from the bar's thread.
  struct View {
    double fraction = -1;
    std::string text;
  };
  using Probe = std::function<View(double elapsed_s)>;

  // Does nothing at all unless enabled.
  ProgressBar(bool enabled, Probe probe);
  ~ProgressBar();  // stops and clears the line
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  void stop();

 private:
  void run();
  void draw(const View& v);

  Probe probe_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false, drawn_ = false;
  std::thread thread_;
};

// Phase-by-phase progress for single-threaded tools: phase name, done, total.
class PhaseProgress {
 public:
  void set(const char* phase, uint64_t done, uint64_t total);
  ProgressBar::View view() const;

 private:
  mutable std::mutex mu_;
  std::string phase_;
  uint64_t done_ = 0, total_ = 0;
};

}  // namespace mpior::report
