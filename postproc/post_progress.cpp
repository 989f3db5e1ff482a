#include "postproc/post_progress.hpp"

namespace mpior::postproc {

namespace {
ProgressFn& hook() {
  static ProgressFn fn;
  return fn;
}
}  // namespace

void set_progress(ProgressFn fn) { hook() = std::move(fn); }

void report_progress(const char* phase, uint64_t done, uint64_t total) {
  if (hook()) hook()(phase, done, total);
}

}  // namespace mpior::postproc
