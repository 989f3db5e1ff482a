// The crash journal's meta file (rank-NNNNNN.meta.journal): the file and
// communicator entries a rank made, in frames (trace/journal_format.hpp),
// written as they are made so that a rank killed before its first flush
// still names its files. The file is a shared mapping: a frame costs a copy,
// not a system call per new file (mdtest makes thousands), and the kernel
// keeps what was copied whatever kills the process. Its unused tail reads as
// zeros, where read_meta_journal stops.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace mpior::preload::meta_journal {

// Creates (truncates) the file; false with errno when it cannot.
bool open(const std::string& path) noexcept;

// Appends one frame around payload; thread-safe. Says once when it cannot.
void append(std::span<const uint8_t> payload) noexcept;

// The file removed (the rank's trace holds its entries) and closed.
void remove(const std::string& path) noexcept;

// In a forked child: the parent's file is not the child's (nothing unmapped
// from the parent, nothing written to it).
void reset_after_fork() noexcept;

}  // namespace mpior::preload::meta_journal
