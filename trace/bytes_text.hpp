// File names and command lines are bytes (Linux allows any but '/' and NUL in
// a name). Text outputs (--dump, summary.txt, summary.json) show them as
// valid UTF-8, reversibly: valid UTF-8 is kept, a backslash becomes "\\" and
// every byte that is not part of valid UTF-8 becomes "\xHH" (two hex digits).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mpior::trace {

std::string escape_bytes(std::string_view bytes);
// The bytes escape_bytes was given; nullopt when the text is not its output.
std::optional<std::string> unescape_bytes(std::string_view text);

}  // namespace mpior::trace
