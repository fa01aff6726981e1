"""The bundled template ships inside the wheel, where an installed SummaryFrame finds it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from forge_app.summary._frame import TEMPLATE_NAME

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from the checkout (no build isolation: hatchling comes from the test extra)."""
    outdir = tmp_path_factory.mktemp("dist")
    command = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(outdir)]
    subprocess.run([*command, str(ROOT)], check=True, capture_output=True, timeout=300)
    (built,) = outdir.glob("*.whl")
    return built


@pytest.mark.slow
def test_wheel_contains_the_summary_template(wheel):
    with zipfile.ZipFile(wheel) as archive:
        packaged = archive.read(f"forge_app/_templates/{TEMPLATE_NAME}").decode("utf-8")
    assert packaged == (ROOT / "templates" / TEMPLATE_NAME).read_text(encoding="utf-8")


@pytest.mark.slow
def test_installed_wheel_renders_with_the_packaged_template(wheel, tmp_path):
    """Unpack the wheel (a non-editable install) and render from outside the checkout."""
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    script = (
        f"import sys; sys.path.insert(0, {str(site)!r}); "
        "import forge_app.summary._frame as f; from forge_domain import ContextSummary; "
        "print(f.default_template_dir()); "
        "assert f.is_summary_text(f.SummaryFrame().render(ContextSummary()))"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-c", script],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert Path(result.stdout.strip()) == site / "forge_app" / "_templates"
