#!/usr/bin/python3
"""`--format cyclonedx` against the official CycloneDX 1.6 schema.

Usage: cyclonedx_schema.py GGUFGUARD_CLI SOURCE_DIR
Runs the CLI on the valid corpus (hashed) and on a regression file (findings
as vulnerabilities), and validates each BOM with Debian's python3-jsonschema
against ../shared/schemas/cyclonedx/bom-1.6.schema.json, resolving the
schema's relative $refs (spdx, jsf) in that folder, offline. Exits 77
(CTest's skip) when ../shared is absent.
"""
import json
import os
import subprocess
import sys

import warnings

import jsonschema

warnings.simplefilter("ignore", DeprecationWarning)  # RefResolver: the API Debian 12's 4.10 has

cli, source = sys.argv[1], sys.argv[2]
schemas = os.path.join(source, "..", "shared", "schemas", "cyclonedx")
if not os.path.isfile(os.path.join(schemas, "bom-1.6.schema.json")):
    print("SKIP: ../shared/schemas/cyclonedx is absent")
    sys.exit(77)

store = {}
for name in os.listdir(schemas):
    if name.endswith(".json"):
        with open(os.path.join(schemas, name)) as f:
            doc = json.load(f)
        store[name] = doc
        if "$id" in doc:
            store[doc["$id"]] = doc
bom_schema = store["bom-1.6.schema.json"]
resolver = jsonschema.RefResolver(base_uri=bom_schema.get("$id", ""), referrer=bom_schema, store=store)
# Relative refs resolve against the $id's folder: map that URL prefix too.
base = bom_schema["$id"].rsplit("/", 1)[0] + "/"
for name, doc in list(store.items()):
    if name.endswith(".json") and "/" not in name:
        store[base + name] = doc
validator = jsonschema.Draft7Validator(bom_schema, resolver=resolver)

valid_dir = os.path.join(source, "corpus", "valid")
runs = [
    ["scan", "--format", "cyclonedx", "--hash", "--jobs", "1", valid_dir],
    ["validate", "--format", "cyclonedx", os.path.join(source, "corpus", "regressions",
                                                     "report-llamacpp-24263-empty-key.gguf")],
]
failed = False
for args in runs:
    p = subprocess.run([cli] + args, capture_output=True, check=False)
    bom = json.loads(p.stdout)
    errors = sorted(validator.iter_errors(bom), key=lambda e: list(e.path))
    for e in errors[:10]:
        print(f"{' '.join(args[:3])}: {list(e.path)}: {e.message}")
    failed |= bool(errors)
    kinds = {c["type"] for c in bom["components"]}
    if kinds != {"machine-learning-model"} or not bom["components"]:
        print(f"{args}: components are {kinds}")
        failed = True
    if args[0] == "validate" and len(bom["vulnerabilities"]) != 7:
        print(f"expected the regression file's 7 findings as vulnerabilities, got {len(bom['vulnerabilities'])}")
        failed = True
    if args[0] == "scan" and not all(any(h["alg"] == "SHA-256" for h in c.get("hashes", []))
                                     for c in bom["components"]):
        print("a component of the hashed scan has no SHA-256")
        failed = True
print("FAIL" if failed else f"OK: {len(runs)} BOMs valid against CycloneDX 1.6")
sys.exit(1 if failed else 0)
