// The sandbox: exit status, output, wall-time and memory limits, no network, no stdin.
#include <gtest/gtest.h>

#include <chrono>

#include "eval/python_sandbox.h"

namespace ridge::eval {
namespace {

SandboxLimits quick(double seconds = 5) {
  SandboxLimits l;
  l.timeout_seconds = seconds;
  l.memory_bytes = int64_t(512) << 20;
  return l;
}

TEST(PythonSandbox, ExitStatusDecides) {
  const SandboxResult ok = run_python("print('hello from the sandbox')\n", quick());
  EXPECT_EQ(ok.status, RunStatus::Passed) << ok.output;
  EXPECT_NE(ok.output.find("hello from the sandbox"), std::string::npos);
  const SandboxResult bad = run_python("assert 1 + 1 == 3, 'arithmetic'\n", quick());
  EXPECT_EQ(bad.status, RunStatus::Failed);
  EXPECT_NE(bad.output.find("AssertionError"), std::string::npos);
  EXPECT_EQ(run_python("def f(:\n", quick()).status, RunStatus::Failed);  // syntax error
}

TEST(PythonSandbox, EndlessLoopIsKilledAtTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const SandboxResult r = run_python("while True:\n    pass\n", quick(1.0));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.status, RunStatus::TimedOut);
  EXPECT_LT(s, 4.0);
}

TEST(PythonSandbox, ChildrenThatHoldThePipeAreKilledToo) {
  // A grandchild keeps stdout open and sleeps; the run must still end at the timeout.
  const auto start = std::chrono::steady_clock::now();
  const SandboxResult r = run_python("import os, time\nif os.fork() == 0:\n    time.sleep(60)\ntime.sleep(60)\n", quick(1.0));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.status, RunStatus::TimedOut);
  EXPECT_LT(s, 4.0);
}

TEST(PythonSandbox, MemoryLimitHolds) {
  const SandboxResult r = run_python("x = bytearray(2 * 1024 * 1024 * 1024)\n", quick());
  EXPECT_EQ(r.status, RunStatus::Failed);
  EXPECT_NE(r.output.find("MemoryError"), std::string::npos) << r.output;
}

TEST(PythonSandbox, StdinIsEmptyAndNetworkIsAbsentWhenPrivileged) {
  EXPECT_EQ(run_python("import sys\nassert sys.stdin.read() == ''\n", quick()).status, RunStatus::Passed);
  // In a new network namespace only a down loopback exists: connecting anywhere fails.
  const SandboxResult r = run_python(
      "import socket\ns = socket.socket()\ns.settimeout(2)\ntry:\n    s.connect(('127.0.0.1', 9))\nexcept OSError:\n"
      "    raise SystemExit(3)\n",
      quick());
  EXPECT_EQ(r.status, RunStatus::Failed);
  EXPECT_EQ(r.exit_code, 3);
}

TEST(PythonSandbox, OutputKeepsOnlyTheTail) {
  const SandboxResult r = run_python("print('x' * 100000)\nprint('the end')\n", quick());
  EXPECT_EQ(r.status, RunStatus::Passed);
  EXPECT_LE(r.output.size(), 2048u);
  EXPECT_NE(r.output.find("the end"), std::string::npos);
}

TEST(PythonSandbox, MissingInterpreterIsAnError) {
  SandboxLimits l = quick();
  l.python = "/nonexistent/python3";
  EXPECT_EQ(run_python("print(1)\n", l).status, RunStatus::Error);
}

}  // namespace
}  // namespace ridge::eval
