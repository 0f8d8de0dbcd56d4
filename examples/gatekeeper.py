#!/usr/bin/python3
"""A gatekeeper in Python: accept a GGUF file only if ggufguard says it is
valid, and list why not otherwise.

    /usr/bin/python3 examples/gatekeeper.py FILE.gguf...   exit 0 all accepted, 1 any refused

The module is built for Debian's /usr/bin/python3 (docs/library.md)."""
import sys

import ggufguard


def check(path):
    # [readme-python]
    report = ggufguard.validate(path)  # or bytes; policy="strict" or a JSON policy
    if report.verdict != "valid":  # "inconclusive" (part not checked) is no pass
        for f in report.findings:
            print(f"{path}:{f.offset}: {f.severity} {f.rule} {f.name}: {f.message!r}")
        for item in report.not_checked:
            print(f"{path}: not checked: {item!r}")
        return False
    arch = report.metadata.get("general.architecture")
    print(f"{path}: valid, {arch}, {len(report.tensors)} tensors")
    # [/readme-python]
    return True


if __name__ == "__main__":
    results = [check(p) for p in sys.argv[1:]]
    sys.exit(0 if results and all(results) else 1)
