// blas/support/log: TILEDMM_BLAS_LOG's refusals (a symbolic link, a file of another
// user).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "support/log.hpp"

namespace {

using tiledmm::blas::Log;

// Runs `body` in a child process (the log is process-wide); true when it exits 0.
template <class Body>
bool in_child(Body body) {
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(30);
    _exit(body() ? 0 : 1);
  }
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// TILEDMM_BLAS_LOG naming a symbolic link (someone else's, in /tmp, say): refused,
// and the file it points to is never written; the log stays off, nothing fails. A
// regular file of this user is used.
TEST(BlasLog, SymbolicLinkRefused) {
  char dir_template[] = "/tmp/tmm_blas_log_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template, target = dir + "/target", link = dir + "/log";
  std::ofstream(target).close();
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  EXPECT_TRUE(in_child([&] {
    Log::open(link);
    Log::line("through the link");
    return !Log::enabled();
  })) << "the log opened a symbolic link";
  EXPECT_EQ(slurp(target), "");
  // A link to nothing: no file is made where it points.
  const std::string dangling = dir + "/dangling", nowhere = dir + "/nowhere";
  ASSERT_EQ(symlink(nowhere.c_str(), dangling.c_str()), 0);
  EXPECT_TRUE(in_child([&] {
    Log::open(dangling);
    return !Log::enabled();
  }));
  EXPECT_NE(access(nowhere.c_str(), F_OK), 0);
  // A plain path works (the refusal is not of every file).
  const std::string plain = dir + "/plain";
  EXPECT_TRUE(in_child([&] {
    Log::open(plain);
    Log::line("hello");
    return Log::enabled();
  }));
  EXPECT_NE(slurp(plain).find("hello"), std::string::npos);
  for (const std::string& p : {target, link, dangling, plain}) unlink(p.c_str());
  rmdir(dir.c_str());
}

// A file another user owns is refused too (checked after the open). Needs root, to
// give the file away.
TEST(BlasLog, FileOfAnotherUserRefused) {
  char dir_template[] = "/tmp/tmm_blas_log_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template, theirs = dir + "/theirs";
  std::ofstream(theirs).close();
  const bool given = chown(theirs.c_str(), geteuid() == 65534 ? 65533 : 65534, gid_t(-1)) == 0;
  if (given) {
    EXPECT_TRUE(in_child([&] {
      Log::open(theirs);
      Log::line("into another user's file");
      return !Log::enabled();
    })) << "the log opened a file of another user";
    EXPECT_EQ(slurp(theirs), "");
  }
  unlink(theirs.c_str());
  rmdir(dir.c_str());
  if (!given) GTEST_SKIP() << "cannot give a file to another user (not root)";
}

}  // namespace
