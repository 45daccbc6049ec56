"""``ghstate doctor --github`` against a real GitHub: the same probes as tests/test_doctor.py, on a
throwaway repository you name. Skipped unless both are set when pytest starts:

    GHSTATE_LIVE_REPO=owner/throwaway GH_TOKEN=… pytest -m live tests/test_live.py

(GITHUB_API_URL for GitHub Enterprise Server.) The token needs Issues: write and Contents: write on that
repository (the write log's chains and claims are refs). The probe leaves one closed issue labelled
ghstate-doctor; its ref is deleted. These are the only tests that read the environment they were started
in, and only these names.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = os.environ.get("GHSTATE_LIVE_REPO", "")
TOKEN = os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN") or ""
API = os.environ.get("GITHUB_API_URL", "")

pytestmark = [pytest.mark.live,
              pytest.mark.skipif(not (REPO and TOKEN), reason="GHSTATE_LIVE_REPO and GH_TOKEN are not set")]


def test_what_the_write_log_and_claims_rely_on_holds_on_this_github(tmp_path):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "GH_TOKEN": TOKEN,
           "PYTHONPATH": str(Path(__file__).resolve().parents[1]), **({"GITHUB_API_URL": API} if API else {})}
    result = subprocess.run([sys.executable, "-m", "ghstate", "doctor", "--github", "-R", REPO], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=300)
    assert TOKEN not in result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
