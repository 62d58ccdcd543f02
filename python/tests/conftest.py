"""pytest setup: python/ on sys.path; fixtures for the CPU tests (the
attn-compile to use, a fresh cache, the fake CUDA driver)."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.path.dirname(HERE)
REPO = os.path.dirname(PYTHON)
sys.path.insert(0, PYTHON)
sys.path.insert(0, HERE)

import attn  # noqa: E402


@pytest.fixture(scope="session")
def compiler():
    path = attn.find_compiler()
    if path is None:
        pytest.skip("attn-compile not found (set ATTN_COMPILE)")
    return path


@pytest.fixture
def cache(tmp_path):
    return str(tmp_path / "cache")


@pytest.fixture(scope="session")
def build_dir(compiler):
    return os.path.dirname(os.path.dirname(compiler))
