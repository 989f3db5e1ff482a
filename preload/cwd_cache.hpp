// The process's working directory, kept between the calls that change it.
// A relative path is resolved against it at every traced call that names
// one (mdtest names every file so): reading it once instead of a getcwd
// system call per call. The program's chdir and fchdir are intercepted to
// drop it; a change made another way (a raw system call, or the directory
// renamed under the process) is not seen until the next chdir.
#pragma once

#include <string>

namespace mpior::preload::cwd {

// Appends the working directory to out (no trailing '/' but for the root);
// false, out unchanged, when it cannot be read.
bool append_to(std::string& out) noexcept;

// The working directory changed: the next append_to reads it again.
void changed() noexcept;

}  // namespace mpior::preload::cwd
