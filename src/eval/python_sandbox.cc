#include "eval/python_sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace ridge::eval {
namespace {

constexpr size_t kOutputTail = 2048;

void limit(int resource, rlim_t value) {
  const rlimit r{value, value};
  setrlimit(resource, &r);
}

// In the child, between fork and exec: only system calls, no allocation.
[[noreturn]] void exec_child(int out_fd, const char* dir, const char* python, const SandboxLimits& limits) {
  setpgid(0, 0);
  unshare(CLONE_NEWNET);  // best effort: without privileges the script keeps the host's network
  limit(RLIMIT_AS, rlim_t(limits.memory_bytes));
  limit(RLIMIT_CPU, rlim_t(limits.timeout_seconds) + 1);
  limit(RLIMIT_FSIZE, rlim_t(16) << 20);
  limit(RLIMIT_CORE, 0);
  if (chdir(dir) != 0) _exit(126);
  const int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd >= 0) dup2(null_fd, 0);
  dup2(out_fd, 1);
  dup2(out_fd, 2);
  execlp(python, python, "-I", "-B", "program.py", static_cast<char*>(nullptr));
  _exit(127);
}

}  // namespace

const char* run_status_name(RunStatus status) {
  switch (status) {
    case RunStatus::Passed: return "passed";
    case RunStatus::Failed: return "failed";
    case RunStatus::TimedOut: return "timed out";
    case RunStatus::Error: return "error";
  }
  return "?";
}

SandboxResult run_python(const std::string& program, const SandboxLimits& limits) {
  SandboxResult result;
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

  std::string dir_template = (std::filesystem::temp_directory_path() / "ridge-sandbox-XXXXXX").string();
  if (!mkdtemp(dir_template.data())) {
    result.output = "cannot create a temporary directory";
    return result;
  }
  const std::string dir = dir_template;
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{dir};
  {
    std::ofstream f(dir + "/program.py", std::ios::binary);
    f << program;
    if (!f) {
      result.output = "cannot write the program";
      return result;
    }
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.output = "cannot create a pipe";
    return result;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    result.output = "cannot fork";
    return result;
  }
  if (pid == 0) {
    close(pipe_fds[0]);
    exec_child(pipe_fds[1], dir.c_str(), limits.python.c_str(), limits);
  }
  setpgid(pid, pid);  // also here, so the kill below reaches the group whichever runs first
  close(pipe_fds[1]);

  // Read its output until it closes the pipe or the wall clock runs out.
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    const double left = limits.timeout_seconds - elapsed();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{pipe_fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, int(left * 1000) + 1);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = read(pipe_fds[0], buf, sizeof buf);
    if (n <= 0) break;
    result.output.append(buf, size_t(n));
    if (result.output.size() > 2 * kOutputTail) result.output.erase(0, result.output.size() - kOutputTail);
  }
  close(pipe_fds[0]);
  if (timed_out) kill(-pid, SIGKILL);
  int status = 0;
  // The script may have closed its output and kept running: wait for it within the same budget.
  while (waitpid(pid, &status, timed_out ? 0 : WNOHANG) == 0) {
    if (elapsed() > limits.timeout_seconds) {
      timed_out = true;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    usleep(2000);
  }
  kill(-pid, SIGKILL);  // anything the script left behind in its group
  if (result.output.size() > kOutputTail) result.output.erase(0, result.output.size() - kOutputTail);
  result.seconds = elapsed();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.exit_code = -WTERMSIG(status);
  if (timed_out || (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)) {
    result.status = RunStatus::TimedOut;
  } else if (WIFEXITED(status) && (result.exit_code == 126 || result.exit_code == 127) && result.output.empty()) {
    result.status = RunStatus::Error;
    result.output = "cannot run " + limits.python;
  } else {
    result.status = result.exit_code == 0 ? RunStatus::Passed : RunStatus::Failed;
  }
  return result;
}

}  // namespace ridge::eval
