#!/usr/bin/env python3
"""Checks what `gpuops run --artifacts ART --junit JUNIT` left of
tests/data/e2e/fails-on-purpose.yaml (scripts/e2e-real.sh step 1a): its catch's
diagnose output, dump and explain, and the JUnit test case carrying them in
<system-out>. Prints one line per problem; exit 1 when there is any.

    e2e-catch-check.py ART JUNIT
"""
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def main() -> int:
    art, junit = Path(sys.argv[1]), Path(sys.argv[2])
    step = art / "fails-on-purpose" / "2-dcgm-exporter_on_both_nodes"
    problems = []

    def text(name: str) -> str:
        path = step / name
        if not path.is_file():
            problems.append(f"missing {path}")
            return ""
        return path.read_text()

    diagnose = text("diagnose.txt")
    # gpu-b's "false" is the user's opt-out (docs/DIAGNOSE.md label-false).
    if "gpu-b dcgm-exporter info label-false:" not in diagnose:
        problems.append("diagnose.txt has no label-false finding for gpu-b dcgm-exporter")
    dump = text("dump.json")
    if dump:
        doc = json.loads(dump)
        kinds = sorted(item["kind"] for item in doc.get("items", []))
        nodes = sorted(i["metadata"]["name"] for i in doc["items"] if i["kind"] == "Node")
        if doc.get("kind") != "List" or nodes != ["gpu-a", "gpu-b"] or "DaemonSet" not in kinds:
            problems.append(f"dump.json: kind {doc.get('kind')}, nodes {nodes}, kinds {kinds}")
    explain = text("explain-gpu-b-nvidia-dcgm-exporter.txt")
    if "placement: shouldRun=false shouldContinueRunning=false" not in explain:
        problems.append("explain: not shouldRun=false shouldContinueRunning=false for gpu-b")
    # The one pod (on gpu-a), under its header: its log, or why it could not
    # be read (KWOK's kubelet serves no logs).
    if "==> gpu-operator/nvidia-dcgm-exporter-" not in text("podlogs-app_nvidia-dcgm-exporter.txt"):
        problems.append("podlogs: no log header of a nvidia-dcgm-exporter pod")
    text("finally-events.txt")
    cases = [c for c in ET.parse(junit).getroot().iter("testcase") if c.get("name") == "fails-on-purpose"]
    if len(cases) != 1 or cases[0].find("failure") is None:
        problems.append(f"{junit}: no failed test case fails-on-purpose")
    else:
        out = cases[0].findtext("system-out") or ""
        for header in ("=== step 2 \"dcgm-exporter on both nodes\": catch diagnose (diagnose.txt)\n",
                       "=== step 2 \"dcgm-exporter on both nodes\": catch dump (dump.json)\n"):
            if header not in out:
                problems.append(f"{junit}: <system-out> lacks {header.strip()}")
        if diagnose and diagnose not in out:
            problems.append(f"{junit}: <system-out> lacks diagnose.txt's text")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
