#include "preload/log.hpp"

#include <spdlog/sinks/base_sink.h>

#include <atomic>
#include <mutex>

#include "preload/config.hpp"
#include "preload/real_table.hpp"

namespace mpior::preload {
namespace {

constinit config::Option<std::string_view> opt_log{"MPIOR_LOG", "warn", "tracer messages shown on stderr",
                                                   "error|warn|info|debug"};
MPIOR_REGISTER_OPTION(opt_log);

void write_stderr(const char* data, size_t n) noexcept {
  auto write_fn = real::get_write();
  while (n > 0 && write_fn) {
    ssize_t w = write_fn(2, data, n);
    if (w <= 0) return;
    data += w;
    n -= size_t(w);
  }
}

class RealStderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    write_stderr(buf.data(), buf.size());
  }
  void flush_() override {}
};

spdlog::level::level_enum level_from_option() {
  std::string_view v = opt_log.get();
  if (v == "error") return spdlog::level::err;
  if (v == "info") return spdlog::level::info;
  if (v == "debug") return spdlog::level::debug;
  return spdlog::level::warn;
}

}  // namespace

spdlog::logger& logger() {
  static spdlog::logger* l = [] {
    auto* lg = new spdlog::logger("mpior", std::make_shared<RealStderrSink>());
    lg->set_pattern("mpior: %v");
    lg->set_level(level_from_option());
    return lg;
  }();
  return *l;
}

void log_raw(const std::string& text) noexcept { write_stderr(text.data(), text.size()); }

void log_once_error(const char* message) noexcept {
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) log_error("{}", message);
}

}  // namespace mpior::preload
