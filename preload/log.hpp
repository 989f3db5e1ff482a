// The tracer's messages (spdlog), written to stderr through the real write so
// they never appear in a trace. Never throws.
#pragma once

#include <spdlog/logger.h>

#include <string>
#include <utility>

#include "preload/thread_state.hpp"

namespace mpior::preload {

spdlog::logger& logger();

template <typename... Args>
void log_warn(fmt::format_string<Args...> f, Args&&... args) noexcept {
  TracerGuard guard;
  try {
    logger().warn(f, std::forward<Args>(args)...);
  } catch (...) {
  }
}

template <typename... Args>
void log_error(fmt::format_string<Args...> f, Args&&... args) noexcept {
  TracerGuard guard;
  try {
    logger().error(f, std::forward<Args>(args)...);
  } catch (...) {
  }
}

template <typename... Args>
void log_info(fmt::format_string<Args...> f, Args&&... args) noexcept {
  TracerGuard guard;
  try {
    logger().info(f, std::forward<Args>(args)...);
  } catch (...) {
  }
}

template <typename... Args>
void log_debug(fmt::format_string<Args...> f, Args&&... args) noexcept {
  TracerGuard guard;
  try {
    logger().debug(f, std::forward<Args>(args)...);
  } catch (...) {
  }
}

// Text as is, no prefix (configuration dump).
void log_raw(const std::string& text) noexcept;
// An error printed at most once per process.
void log_once_error(const char* message) noexcept;

}  // namespace mpior::preload
