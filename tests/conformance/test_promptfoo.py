"""promptfoo conformance in CI: the fast subset of the differential harness.

promptfoo 0.123.1 and this service run the corpus's fast configs on one fake LLM, in a
loopback-only network namespace; the test fails on any difference that docs/design.md does
not list as deliberate, and on a listed one that agrees again. Skipped without npm or root
(the install is cached per machine: ``scripts/ci_promptfoo.sh``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from scripts.conformance.promptfoo.compare import deliberate_keys
from scripts.conformance.promptfoo.install import ROOT

pytestmark = pytest.mark.skipif(
    shutil.which("npm") is None or shutil.which("unshare") is None or os.geteuid() != 0,
    reason="needs npm (promptfoo from npm), unshare and root (a loopback-only network)",
)


def test_promptfoo_and_this_service_agree_on_the_fast_corpus() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scripts.conformance.promptfoo", "--fast"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    assert "new differences: 0; deliberate ones agreeing: 0" in report
    assert "assertions agreeing:" in report


def test_the_deliberate_differences_are_read_from_the_design_document() -> None:
    keys = deliberate_keys()
    assert "regex#5.3" in keys
    corpus = ROOT / "tests" / "conformance" / "promptfoo"
    # a key is a test or assertion (config#test[.assert]), or a whole config refused here
    assert all("#" in key or (corpus / f"{key}.yaml").is_file() for key in keys)
    assert "yaml12_inf" in keys
