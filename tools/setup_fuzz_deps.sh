#!/usr/bin/env bash
# What `make fuzz` needs beyond the build: clang with its libFuzzer and sanitizer runtimes (Debian
# packages). Safe to re-run: only what is missing is installed.
exec "$(dirname "$0")/setup_deps.sh" clang libclang-rt-14-dev
