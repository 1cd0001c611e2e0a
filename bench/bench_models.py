"""Model files for the benchmark scripts: a path as given, or a name tools/fetch_model.py knows (fetched once)."""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def model_path(name):
    if os.path.exists(name):
        return name
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "fetch_model.py"), name], check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()
    return out[-1]


def requantized(ridge, path, file_type):
    """`path` requantized to `file_type` by `ridge quantize` (every tensor, the output matrix too), made once
    beside the original; the original path for an empty type."""
    if not file_type:
        return path
    out = pathlib.Path(path).with_suffix(f".{file_type}.gguf")
    if not out.exists():
        subprocess.run([ridge, "quantize", path, str(out), "--type", file_type, "--output-tensor-type", file_type],
                       check=True, capture_output=True)
    return str(out)
