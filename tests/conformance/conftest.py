"""Shared fixtures for the conformance tests: ridge's binary and the default model."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def ridge_bin():
    path = os.environ.get("RIDGE_BIN") or str(ROOT / "build" / "ridge")
    assert os.path.exists(path), f"ridge binary not found at {path}: build first (make build)"
    return path


@pytest.fixture(scope="session")
def default_model():
    home = os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge")
    path = os.path.join(home, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
    assert os.path.exists(path), f"default model not found at {path}: run make model"
    return path


def pytest_configure(config):
    # `pytest -m multi_model` runs the many-models-in-one-server tests (test_multi_model.py) alone.
    config.addinivalue_line("markers", "multi_model: many models in one ridge serve (the router)")
    # `pytest -m lora` runs the LoRA adapter tests (test_lora.py) alone.
    config.addinivalue_line("markers", "lora: LoRA adapters against llama.cpp and in ridge serve")
