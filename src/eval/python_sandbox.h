#pragma once
// Runs an untrusted Python script in a child process: its own process group and temporary
// directory, no network (a fresh network namespace where the kernel allows one), limits on
// address space, CPU time, file size and wall time, stdin closed. Not a security boundary
// against a determined attacker; it keeps model-written tests from hanging or harming a run.
#include <cstdint>
#include <string>

namespace ridge::eval {

struct SandboxLimits {
  double timeout_seconds = 10;
  int64_t memory_bytes = int64_t(2) << 30;
  std::string python = "python3";
};

enum class RunStatus { Passed, Failed, TimedOut, Error };  // Error: the sandbox could not run it
const char* run_status_name(RunStatus status);

struct SandboxResult {
  RunStatus status = RunStatus::Error;
  int exit_code = -1;      // or -signal
  std::string output;      // the last 2 KiB of stdout and stderr together
  double seconds = 0;
};

SandboxResult run_python(const std::string& program, const SandboxLimits& limits);

}  // namespace ridge::eval
