#!/usr/bin/python3
"""Regenerate the table of known upstream chat templates.

    /usr/bin/python3 scripts/gen_template_table.py --tool TEMPLATE_FINGERPRINT \\
        [--source DIR]... [--mirror OWNER/NAME=GIT_DIR]... [--out FILE] [--doc FILE] [--check]

Writes src/ggufguard/provenance/upstream_templates.inc (the table linked into
ggufguard, read through provenance/upstream_table.h) and docs/upstream-templates.md
(the same rows for a reader). Both are generated: never edit them by hand.

Sources, in order (the first to hold a normal form names it):
  --source DIR   a directory of templates with a MANIFEST.tsv whose header names
                 at least `file repo path commit family` (optional `date`): each
                 row a template file under DIR, the repository and path it was
                 taken from and the commit; the upstream templates are gathered so,
                 outside this repository (this project commits no fetched file).
  the project's own corpus, tests/data/chat_templates (its MANIFEST.tsv, the
                 `benign` rows only: the attacks and look-alikes are no upstream).
A --mirror gives a local git directory of a repository, from which a row
without a `date` gets its commit's date.

TEMPLATE_FINGERPRINT is the tool built from tests/tools/template_fingerprint.cc
(`cmake --build build/quick --target template_fingerprint`): it computes the
normal form with the code ggufguard validates with, so the table and the
validator cannot disagree on it. Only derived data goes into the output: each
template's digest, its segments' hashes, kinds and sizes, a sketch, its family
and its source; never its text.

--check regenerates in memory and exits 1 when the committed files differ.
Python 3 standard library only.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(ROOT, "tests", "data", "chat_templates")
OUT = os.path.join(ROOT, "src", "ggufguard", "provenance", "upstream_templates.inc")
DOC = os.path.join(ROOT, "docs", "upstream-templates.md")
FORM_VERSION_HEADER = os.path.join(ROOT, "src", "ggufguard", "template", "fingerprint.h")
SKETCH_SIZE = 16


def fail(what):
    sys.exit("gen_template_table.py: " + what)


def form_version():
    with open(FORM_VERSION_HEADER, encoding="utf-8") as f:
        for line in f:
            if "kTemplateFormVersion =" in line:
                return int(line.split("=")[1].strip().rstrip(";"))
    fail("no kTemplateFormVersion in " + FORM_VERSION_HEADER)


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    header = lines[0].split("\t")
    return header, [dict(zip(header, l.split("\t"))) for l in lines[1:]]


def clean(field):
    """A manifest field as the table stores it: printable ASCII, no NUL."""
    field = (field or "-").strip() or "-"
    if any(ord(c) < 0x20 or ord(c) > 0x7e for c in field):
        fail("a manifest field that is not printable ASCII: " + repr(field))
    return field


def upstream_rows(directory, mirrors):
    manifest = os.path.join(directory, "MANIFEST.tsv")
    header, rows = read_tsv(manifest)
    for need in ("file", "repo", "path", "commit", "family"):
        if need not in header:
            fail(manifest + " has no `" + need + "` column")
    out = []
    for r in rows:
        date = r.get("date", "-")
        if (not date or date == "-") and r["repo"] in mirrors:
            date = subprocess.run(["git", "--git-dir", mirrors[r["repo"]], "show", "-s", "--format=%cs", r["commit"]],
                                  capture_output=True, text=True).stdout.strip() or "-"
        out.append({"file": os.path.join(directory, r["file"]), "repo": clean(r["repo"]), "path": clean(r["path"]),
                    "commit": clean(r["commit"]), "date": clean(date), "family": clean(r["family"]).lower()})
    return manifest, out


def corpus_rows():
    manifest = os.path.join(CORPUS, "MANIFEST.tsv")
    header, rows = read_tsv(manifest)
    if header[:2] != ["path", "class"]:
        fail(manifest + " changed shape: its first columns are no longer path, class")
    out = []
    for r in rows:
        if r["class"] != "benign":
            continue
        out.append({"file": os.path.join(CORPUS, r["path"]), "repo": "ggufguard",
                    "path": "tests/data/chat_templates/" + clean(r["path"]), "commit": "-", "date": "-",
                    "family": None})
    return manifest, out


def fingerprint(tool, files):
    result = {}
    for i in range(0, len(files), 64):
        batch = files[i:i + 64]
        p = subprocess.run([tool] + batch, capture_output=True, text=True)
        if p.returncode != 0:
            fail("template_fingerprint failed: " + p.stderr.strip())
        for line in p.stdout.splitlines():
            j = json.loads(line)
            result[j["file"]] = j
    return result


def c_string(s):
    out = []
    for ch in s:
        if ch == "\\" or ch == '"':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


class Pool:
    """NUL-separated strings, each stored once."""

    def __init__(self):
        self.text, self.at = [], {}
        self.size = 0

    def add(self, s):
        if s not in self.at:
            self.at[s] = self.size
            self.text.append(s)
            self.size += len(s.encode()) + 1
        return self.at[s]


def generate(tool, sources, mirrors):
    version = form_version()
    groups = []
    for d in sources:
        groups.append(upstream_rows(d, mirrors))
    groups.append(corpus_rows())
    files = [r["file"] for _, rows in groups for r in rows]
    for f in files:
        if not os.path.isfile(f):
            fail("a manifest names a file that is not there: " + f)
    prints = fingerprint(tool, files)
    chosen = {}  # digest -> row
    source_lines = []
    for manifest, rows in groups:
        new = 0
        pairs = sorted({(r["repo"], r["commit"]) for r in rows})
        for r in rows:
            fp = prints[r["file"]]
            if fp["digest"] in chosen:
                continue
            r = dict(r)
            r["family"] = r["family"] or fp["family"] or "-"
            r["fp"] = fp
            chosen[fp["digest"]] = r
            new += 1
        with open(manifest, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        name = os.path.relpath(manifest, ROOT) if manifest.startswith(ROOT + os.sep) else os.path.basename(
            os.path.dirname(manifest)) + "/MANIFEST.tsv"
        commits = ", ".join(repo + "@" + commit[:12] for repo, commit in pairs if commit != "-")
        source_lines.append("%s (sha256 %s): %d templates, %d new normal forms%s" %
                            (name, digest[:16], len(rows), new, "; " + commits if commits else ""))
    rows = [chosen[d] for d in sorted(chosen)]

    pool = Pool()
    hashes, kinds, sizes = [], [], []  # the dictionary of distinct segments
    index_of = {}
    sequence = []
    row_text = []
    for r in rows:
        fp = r["fp"]
        first = len(sequence)
        for h, k, n in fp["segments"]:
            h = int(h, 16)
            if h not in index_of:
                index_of[h] = len(hashes)
                hashes.append(h)
                kinds.append(k)
                sizes.append(min(n, 65535))
            sequence.append(index_of[h])
        sketch = fp["sketch"][:SKETCH_SIZE]
        d = bytes.fromhex(fp["digest"])
        row_text.append("    {{%s}, %d, %d, %d, %d, %d, %d, %d, %d, {%s}}," % (
            ", ".join("0x%02x" % b for b in d), pool.add(r["repo"]), pool.add(r["path"]), pool.add(r["commit"]),
            pool.add(r["date"]), pool.add(r["family"]), first, len(fp["segments"]), len(sketch),
            ", ".join("%du" % k for k in sketch)))
    if len(hashes) > 65536:
        fail("more than 65536 distinct segments: widen UpstreamTable::sequence to 32 bits")

    def array(values, per_line, fmt):
        lines = []
        for i in range(0, len(values), per_line):
            lines.append("    " + ", ".join(fmt % v for v in values[i:i + per_line]) + ",")
        return "\n".join(lines)

    inc = [
        "// Generated by scripts/gen_template_table.py: do not edit (docs/provenance.md says how to regenerate).",
        "// %d normal forms, %d segments, %d distinct; made from:" % (len(rows), len(sequence), len(hashes)),
    ]
    inc += ["//   " + l for l in source_lines]
    inc += [
        "// Included inside namespace ggufguard::upstream_table_data by upstream_table.cc.",
        "",
        "inline constexpr uint32_t kFormVersion = %d;" % version,
        "inline constexpr char kSources[] =",
    ]
    inc += ["    " + c_string(l + "\n") for l in source_lines]
    inc[-1] += ";"
    inc += ["inline constexpr UpstreamTemplate kRows[] = {"] + row_text + ["};"]
    inc += ["inline constexpr uint16_t kSequence[] = {", array(sequence, 16, "%d"), "};"]
    inc += ["inline constexpr uint64_t kSegmentHashes[] = {", array(hashes, 4, "0x%016xull"), "};"]
    inc += ["inline constexpr uint16_t kSegmentBytes[] = {", array(sizes, 16, "%d"), "};"]
    inc += ["inline constexpr uint8_t kSegmentKinds[] = {", array(kinds, 24, "%d"), "};"]
    inc += ["inline constexpr char kStrings[] ="]
    inc += ["    " + c_string(s)[:-1] + '\\0"' for s in pool.text]
    inc[-1] += ";"
    inc_text = "\n".join(inc) + "\n"

    doc = [
        "# Known upstream chat templates",
        "",
        "Generated by `scripts/gen_template_table.py` with the table it makes",
        "(`src/ggufguard/provenance/upstream_templates.inc`); do not edit. What the columns mean, and how to",
        "regenerate both, is in [provenance.md](provenance.md). No template's text is in this project: each row is",
        "the SHA-256 of a template's normal form (its first 16 bytes, of which 12 hex digits are shown), its number",
        "of segments, its family and where it was taken from.",
        "",
        "Made from (normal form version %d):" % version,
        "",
    ]
    doc += ["- " + l for l in source_lines]
    doc += ["", "| digest | segments | family | repository | path | commit | date |", "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["repo"] == "ggufguard", r["family"], r["repo"], r["path"])):
        doc.append("| `%s` | %d | %s | %s | `%s` | %s | %s |" % (
            r["fp"]["digest"][:12], len(r["fp"]["segments"]), r["family"], r["repo"], r["path"].replace("|", "\\|"),
            r["commit"][:12], r["date"]))
    doc_text = "\n".join(doc) + "\n"
    return inc_text, doc_text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--source", action="append", default=[])
    ap.add_argument("--mirror", action="append", default=[])
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--doc", default=DOC)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    mirrors = {}
    for m in a.mirror:
        repo, _, gitdir = m.partition("=")
        if not gitdir:
            fail("--mirror wants OWNER/NAME=GIT_DIR, not " + m)
        mirrors[repo] = gitdir
    inc_text, doc_text = generate(a.tool, a.source, mirrors)
    if a.check:
        stale = [p for p, t in ((a.out, inc_text), (a.doc, doc_text))
                 if not os.path.exists(p) or open(p, encoding="utf-8").read() != t]
        if stale:
            print("gen_template_table.py: stale: " + ", ".join(stale), file=sys.stderr)
            return 1
        return 0
    for p, t in ((a.out, inc_text), (a.doc, doc_text)):
        with open(p, "w", encoding="utf-8") as f:
            f.write(t)
    print("wrote %s and %s" % (a.out, a.doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
