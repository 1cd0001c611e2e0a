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
