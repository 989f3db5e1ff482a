#include "replayer/sandbox.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "test/replayer/plan_maker.hpp"
#include "trace/tool_error.hpp"

using namespace mpior::replay;
using mpior::replay::testing::TempDir;
namespace fs = std::filesystem;

TEST_CASE("traced paths map below the root and never climb out of it", "[sandbox]") {
  REQUIRE(map_path("/data/out.1", "/home/u") == "data/out.1");
  REQUIRE(map_path("/data//./run/../out", "/") == "data/out");
  SECTION("`..` stops at the traced root, as it does on the traced system") {
    REQUIRE(map_path("/../../etc/passwd", "/home/u") == "etc/passwd");
    REQUIRE(map_path("/data/../../../../etc/passwd", "/") == "etc/passwd");
    REQUIRE(map_path("/..", "/x") == "");
  }
  SECTION("relative paths resolve against the traced working directory") {
    REQUIRE(map_path("out/a.dat", "/home/u/run") == "home/u/run/out/a.dat");
    REQUIRE(map_path("../../etc/passwd", "/home/u") == "etc/passwd");
    REQUIRE(map_path("../../../../../etc/passwd", "/home/u") == "etc/passwd");
    REQUIRE(map_path("x", "") == "x");
  }
  SECTION("the standard streams get files of their own") {
    REQUIRE(map_path("<stdout>", "/") == "__stdout__");
    REQUIRE(map_path("<stderr>", "/") == "__stderr__");
    REQUIRE(map_path("<stdin>", "/") == "__stdin__");
  }
  REQUIRE(parent_of("a/b/c") == "a/b");
  REQUIRE(parent_of("c").empty());
  REQUIRE(leaf_of("a/b/c") == "c");
}

namespace {

// A root with an empty sibling directory that must stay empty, and symlinks
// inside the root that lead out of it.
struct EscapeFixture {
  TempDir tmp;
  std::string root = tmp / "fs";
  std::string outside = tmp / "outside";
  EscapeFixture() {
    fs::create_directories(root + "/data");
    fs::create_directories(outside);
    fs::create_symlink(outside, root + "/abs_link");               // absolute target
    fs::create_symlink("../../outside", root + "/data/rel_link");  // climbs above the root
    fs::create_symlink(outside + "/victim", root + "/data/file_link");
    fs::create_symlink("../data", root + "/data/inner");  // stays inside: allowed
  }
  bool outside_empty() const { return fs::is_empty(outside); }
};

}  // namespace

TEST_CASE("no path through a symlink leaves the root, with either resolver", "[sandbox]") {
  auto resolver = GENERATE(Sandbox::Resolver::kernel, Sandbox::Resolver::userspace);
  EscapeFixture f;
  Sandbox box(f.root, resolver);
  REQUIRE(box.kernel_resolve() == (resolver == Sandbox::Resolver::kernel));

  REQUIRE(box.open("abs_link/new", O_WRONLY | O_CREAT, 0644) == -EXDEV);
  REQUIRE(box.open("data/rel_link/new", O_WRONLY | O_CREAT, 0644) == -EXDEV);
  REQUIRE(box.open("data/file_link", O_WRONLY | O_CREAT, 0644) == -EXDEV);
  REQUIRE(box.mkdir("abs_link/d", 0755) == -EXDEV);
  REQUIRE(box.unlink("data/rel_link/x") == -EXDEV);
  REQUIRE(box.rename("data/inner/a", "abs_link/b") < 0);
  REQUIRE(box.make_dirs("abs_link/deep/er") == -EXDEV);
  struct stat st {};
  REQUIRE(box.stat("abs_link", &st) == -EXDEV);
  REQUIRE(box.access("data/file_link", F_OK) == -EXDEV);
  REQUIRE(f.outside_empty());

  SECTION("check_contained finds the escape on the longest existing prefix") {
    REQUIRE(box.check_contained("abs_link/not/yet/there") == -EXDEV);
    REQUIRE(box.check_contained("data/file_link") == -EXDEV);
    REQUIRE(box.check_contained("data/new/dir/file") == 0);
    REQUIRE(box.check_contained("etc/passwd") == 0);
  }
  SECTION("symlinks that stay inside work; lstat sees the link itself") {
    int fd = box.open("data/inner/made", O_WRONLY | O_CREAT, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "abc", 3) == 3);
    ::close(fd);
    REQUIRE(fs::file_size(f.root + "/data/made") == 3);
    REQUIRE(box.stat("data/inner", &st, true) == 0);
    REQUIRE(S_ISDIR(st.st_mode));
    REQUIRE(box.stat("data/inner", &st, false) == 0);
    REQUIRE(S_ISLNK(st.st_mode));
    // Opened in its parent "data", the link's `../data` climbs out of it; beneath the root it does not.
    int dir = box.open("data/inner", O_RDONLY | O_DIRECTORY);
    REQUIRE(dir >= 0);
    ::close(dir);
    REQUIRE(box.unlink("data/file_link") == 0);  // removes the link, not its target
    REQUIRE(!fs::exists(fs::symlink_status(f.root + "/data/file_link")));
  }
  SECTION("mapped escape attempts land inside the root") {
    std::string rel = map_path("../../../../etc/passwd", "/home/u");
    REQUIRE(box.make_dirs(parent_of(rel)) == 0);
    int fd = box.open(rel, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    ::close(fd);
    REQUIRE(fs::exists(f.root + "/etc/passwd"));
    REQUIRE(f.outside_empty());
  }
  SECTION("path operations work below the root") {
    REQUIRE(box.make_dirs("a/b/c") == 0);
    REQUIRE(fs::is_directory(f.root + "/a/b/c"));
    REQUIRE(box.mkdir("a/b/c", 0755) == -EEXIST);
    int fd = box.open("a/b/c/f", O_WRONLY | O_CREAT, 0644);
    REQUIRE(fd >= 0);
    ::close(fd);
    REQUIRE(box.rename("a/b/c/f", "a/g") == 0);
    REQUIRE(fs::exists(f.root + "/a/g"));
    REQUIRE(box.access("a/g", R_OK | W_OK) == 0);
    REQUIRE(box.access("a/nope", F_OK) == -ENOENT);
    REQUIRE(box.unlink("a/g") == 0);
    REQUIRE(box.rmdir("a/b/c") == 0);
    REQUIRE(!fs::exists(f.root + "/a/b/c"));
    REQUIRE(box.make_dirs("data/file_link/x") < 0);  // a link out is never a directory to create in
  }
  SECTION("a file opens in its parent as it is now, not as an earlier open found it") {
    REQUIRE(box.make_dirs("s/t") == 0);
    int fd = box.open("s/t/a", O_WRONLY | O_CREAT, 0644);
    REQUIRE(fd >= 0);
    ::close(fd);
    fs::remove_all(f.root + "/s/t");  // another process's doing: the directory the open found is gone
    fs::create_directory(f.root + "/s/t");
    fd = box.open("s/t/b", O_WRONLY | O_CREAT, 0644);
    REQUIRE(fd >= 0);
    ::close(fd);
    REQUIRE(fs::exists(f.root + "/s/t/b"));
  }
}

TEST_CASE("magic links and long symlink chains are refused", "[sandbox]") {
  auto resolver = GENERATE(Sandbox::Resolver::kernel, Sandbox::Resolver::userspace);
  TempDir tmp;
  std::string root = tmp / "fs";
  fs::create_directories(root);
  fs::create_symlink("/proc/self/root", root + "/magic");
  fs::create_symlink("loop_b", root + "/loop_a");
  fs::create_symlink("loop_a", root + "/loop_b");
  Sandbox box(root, resolver);
  REQUIRE(box.open("magic/etc/passwd", O_RDONLY) == -EXDEV);
  REQUIRE(box.open("loop_a", O_RDONLY) == -ELOOP);
  REQUIRE(box.check_contained("loop_a/x") == -ELOOP);
}

TEST_CASE("an unusable --fs directory is one clear error naming it", "[sandbox]") {
  TempDir tmp;
  std::ofstream(tmp / "plainfile") << "x";
  auto message = [](const std::string& dir) {
    try {
      Sandbox box(dir);
    } catch (const mpior::ToolError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  REQUIRE_THAT(message(tmp / "plainfile"), Catch::Contains(tmp / "plainfile") && Catch::Contains("directory"));
  REQUIRE_THAT(message(tmp / "plainfile/sub"), Catch::Contains(tmp / "plainfile/sub"));
  SECTION("a missing directory is created") {
    Sandbox box(tmp / "new/deeper");
    REQUIRE(fs::is_directory(tmp / "new/deeper"));
  }
}

TEST_CASE("calls in a directory removed and made again reach the new one", "[sandbox]") {
  TempDir tmp;
  Sandbox box(tmp.path());
  REQUIRE(box.make_dirs("a/b") == 0);
  REQUIRE(box.mkdir("a/b/c", 0755) == 0);  // a/b now known to the sandbox
  REQUIRE(box.rmdir("a/b/c") == 0);
  REQUIRE(box.rmdir("a/b") == 0);
  REQUIRE(box.mkdir("a/b", 0755) == 0);
  REQUIRE(box.mkdir("a/b/d", 0755) == 0);
  REQUIRE(fs::is_directory(tmp / "a/b/d"));
  // Removed and made again behind the sandbox's back (another process of
  // an MPI-mode replay): the next call there finds the new directory.
  fs::remove_all(tmp / "a/b");
  fs::create_directories(tmp / "a/b");
  REQUIRE(box.mkdir("a/b/e", 0755) == 0);
  REQUIRE(fs::is_directory(tmp / "a/b/e"));
  struct stat st {};
  REQUIRE(box.stat("a/b/e", &st) == 0);
  REQUIRE(S_ISDIR(st.st_mode));
  REQUIRE(box.stat("a/b/none", &st) == -ENOENT);
  // A symbolic link is followed beneath the root, or not at all.
  REQUIRE(box.symlink("a/b/e", "a/b/l") == 0);
  REQUIRE(box.stat("a/b/l", &st) == 0);
  REQUIRE(S_ISDIR(st.st_mode));
  REQUIRE(box.stat("a/b/l", &st, false) == 0);
  REQUIRE(S_ISLNK(st.st_mode));
  REQUIRE(::symlinkat("/etc", -1, (tmp / "a/b/out").c_str()) == 0);
  REQUIRE(box.stat("a/b/out", &st) == -EXDEV);
  // Renamed: the old name's entries are gone, the new name's are there.
  REQUIRE(box.rename("a/b", "a/m") == 0);
  REQUIRE(box.stat("a/b/e", &st) == -ENOENT);
  REQUIRE(box.stat("a/m/e", &st) == 0);
}
