#!/usr/bin/env python3
"""Writes the validation facts of a CRD's spec schema as compact JSON.

    scripts/crd-schema.py CRD.yaml > data/crds/NAME.json

Reads the first served version's openAPIV3Schema and keeps, under
properties.spec, only what gpuops' structural validation reads
(core/codec/crd_schema.h): type, properties, items, additionalProperties,
required, enum, minimum, maximum, pattern, format (int32 and int64),
default, x-kubernetes-int-or-string and x-kubernetes-preserve-unknown-fields.
Descriptions and everything else are left out. Needs python3
with PyYAML (python3-yaml).
"""
import json
import sys

import yaml

KEEP = ("type", "required", "enum", "minimum", "maximum", "default", "pattern",
        "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields")


def trim(s):
    out = {k: s[k] for k in KEEP if k in s}
    if s.get("format") in ("int32", "int64"):
        out["format"] = s["format"]
    if "properties" in s:
        out["properties"] = {k: trim(v) for k, v in s["properties"].items()}
    if "items" in s:
        out["items"] = trim(s["items"])
    ap = s.get("additionalProperties")
    if isinstance(ap, dict):
        out["additionalProperties"] = trim(ap)
    elif ap is not None:
        out["additionalProperties"] = ap
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: crd-schema.py CRD.yaml")
    with open(sys.argv[1]) as f:
        crd = yaml.safe_load(f)
    version = next(v for v in crd["spec"]["versions"] if v.get("served", True))
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    json.dump(trim(spec), sys.stdout, separators=(",", ":"), sort_keys=False)
    sys.stdout.write("\n")


main()
