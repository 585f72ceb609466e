"""The engine is its own distribution: it installs alone and imports only the standard library."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "diagnosis_graph"
FORBIDDEN = ("flask", "peewee", "redis", "openai", "pydantic", "tenacity", "webapp")
#: Imports every engine module (the workflow excepted) and prints what else got imported.
IMPORT_ENGINE = (
    "import importlib, json, sys\n"
    "names = sys.argv[1:]\n"
    "for name in names: importlib.import_module(name)\n"
    "ours = {'diagnosis_graph', '__main__', 'sitecustomize', 'usercustomize'}\n"
    "other = {m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names) - ours\n"
    "print(json.dumps({'other': sorted(m for m in other if not m.startswith('_')),\n"
    "    'workflow': 'diagnosis_graph.workflow' in sys.modules,\n"
    "    'file': sys.modules['diagnosis_graph'].__file__}))\n"
)


def engine_modules() -> list[str]:
    return sorted(f"diagnosis_graph.{p.stem}" for p in ENGINE.glob("*.py") if p.stem != "__init__")


def import_engine(python: str, cwd: Path) -> dict[str, object]:
    """Import every engine module in a fresh, isolated interpreter; report what it imported."""
    done = subprocess.run(
        [python, "-I", "-c", IMPORT_ENGINE, "diagnosis_graph", *engine_modules()],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=cwd,
    )
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_importing_the_engine_and_its_workflow_imports_no_application_package() -> None:
    code = (
        "import sys, diagnosis_graph, diagnosis_graph.workflow.topology, "
        "diagnosis_graph.workflow.trace\n"
        f"print(','.join(m for m in {FORBIDDEN!r} if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == ""


def test_every_engine_module_imports_only_the_standard_library() -> None:
    assert len(engine_modules()) >= 7  # checkpoint, config, errors, graph, ...
    found = import_engine(sys.executable, ROOT)
    assert found["other"] == [] and found["workflow"] is False


def pip(*args: str) -> str:
    """Run this environment's pip; return its output, or fail showing what it said."""
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_engine_installs_alone_into_a_fresh_venv_and_imports_nothing_else(
    tmp_path: Path,
) -> None:
    source = tmp_path / "diagnosis_graph"  # a copy: building leaves build/ in the source
    ignore = shutil.ignore_patterns("__pycache__", "build", "*.egg-info")
    shutil.copytree(ENGINE, source, ignore=ignore)
    modules = {p.relative_to(source) for p in source.rglob("*.py")}
    wheels = tmp_path / "wheels"
    pip("wheel", "--no-build-isolation", "--no-deps", "--no-index", "-w", str(wheels), str(source))
    (wheel,) = wheels.glob("diagnosis_graph-*.whl")
    env = tmp_path / "venv"
    venv.create(env, with_pip=False)
    python = str(env / "bin" / "python")
    pip("--python", python, "install", "--no-index", str(wheel))  # no index: no dependency
    listed = json.loads(pip("--python", python, "list", "--format=json"))
    assert [p["name"] for p in listed] == ["diagnosis-graph"]
    found = import_engine(python, tmp_path)
    assert found["other"] == [] and found["workflow"] is False
    assert str(found["file"]).startswith(str(env))
    metadata = "import importlib.metadata as m; print(m.requires('diagnosis-graph'))"
    requires = subprocess.run(
        [python, "-I", "-c", metadata], check=True, capture_output=True, text=True, timeout=60
    )
    assert requires.stdout.strip() == """['pydantic<3,>=2.6; extra == "workflow"']"""
    installed = env / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    package = installed / "site-packages" / "diagnosis_graph"
    shipped = {p.relative_to(package) for p in package.rglob("*.py")}
    assert shipped == modules  # the workflow's too: every package is listed in pyproject.toml
    assert (package / "py.typed").exists()
