#!/usr/bin/python3
"""The README's "Use as a library" snippets are the marked regions of the
tested examples (examples/*: `[readme-X]` ... `[/readme-X]`), verbatim after
dedenting, so the README cannot show code that does not build and run.

    check_readme.py SOURCE_DIR"""
import pathlib
import re
import sys
import textwrap

root = pathlib.Path(sys.argv[1])
readme = (root / "README.md").read_text()
section = re.search(r"^## Use as a library\n(.*?)(?=^## )", readme, re.S | re.M)
if not section:
    sys.exit("check_readme: README.md has no '## Use as a library' section")
blocks = [textwrap.dedent(b) for b in re.findall(r"```[a-z]*\n(.*?)```", section.group(1), re.S)]

failed = False
for name, path in (("readme-c", "examples/load.c"), ("readme-cpp", "examples/load.cpp"),
                   ("readme-python", "examples/gatekeeper.py")):
    text = (root / path).read_text()
    m = re.search(r"\[%s\][^\n]*\n(.*?)\n[^\n]*\[/%s\]" % (name, name), text, re.S)
    if not m:
        print(f"check_readme: no [{name}] region in {path}")
        failed = True
        continue
    region = textwrap.dedent(m.group(1) + "\n")
    if region not in blocks:
        print(f"check_readme: README.md does not show {path}'s [{name}] region verbatim:\n{region}")
        failed = True
sys.exit(1 if failed else 0)
