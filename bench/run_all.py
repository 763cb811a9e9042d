"""Run every bench script (bench/*.py except this one and the helpers, whose names start with
``_``) and report.

Each script runs as its own process, its output is passed through, and this exits 1 if any
script exited non-zero (a target missed or the script failed).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def scripts() -> list[Path]:
    return sorted(p for p in HERE.glob("*.py") if p.name != "run_all.py" and not p.name.startswith("_"))


def main() -> int:
    failed: list[str] = []
    found = scripts()
    if not found:
        print("no bench scripts found", file=sys.stderr)
        return 1
    for script in found:
        print(f"--- {script.name}", flush=True)
        proc = subprocess.run([sys.executable, str(script)], cwd=HERE.parent)
        if proc.returncode != 0:
            failed.append(f"{script.name} (exit {proc.returncode})")
    print("--- bench summary")
    if failed:
        print("FAILED: " + ", ".join(failed))
        return 1
    print(f"all {len(found)} bench scripts met their targets")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
