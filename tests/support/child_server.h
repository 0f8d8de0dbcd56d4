// A test's own server process (tests/support/hostile_http.py, nginx): a
// child whose stdin the test holds (closing it, or SIGTERM, ends it) and
// whose first stdout lines (its ports) the test reads. Every such server
// listens on loopback only and is stopped by the destructor on every path.
#ifndef GGUFGUARD_TESTS_SUPPORT_CHILD_SERVER_H_
#define GGUFGUARD_TESTS_SUPPORT_CHILD_SERVER_H_

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace ggufguard::testing {

class Server {
 public:
  explicit Server(const std::vector<std::string>& argv) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    stdout_ = ::fdopen(out[0], "r");
  }
  ~Server() {
    if (stdin_ >= 0) ::close(stdin_);
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    if (stdout_ != nullptr) ::fclose(stdout_);
  }
  bool started() const { return pid_ > 0; }
  int ReadPort() {
    char line[64];
    if (stdout_ == nullptr || std::fgets(line, sizeof line, stdout_) == nullptr) return -1;
    return std::atoi(line);
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  std::FILE* stdout_ = nullptr;
};

}  // namespace ggufguard::testing

#endif  // GGUFGUARD_TESTS_SUPPORT_CHILD_SERVER_H_
