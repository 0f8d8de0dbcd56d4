"""The ggufguard Python module on the real corpus (../shared/corpus-real,
or $GGUFGUARD_SHARED_DIR) and on bytes crafted here.

Run by tests/package/run.sh with Debian's /usr/bin/python3 and the module
installed into the package test's prefix."""
import io
import json
import os
import pathlib
import re
import struct
import threading
import zipfile

import pytest

import ggufguard

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("GGUFGUARD_SHARED_DIR", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus-real"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no real corpus at {CORPUS}")


def files(sub):
    return sorted((CORPUS / sub).glob("*.gguf")) if CORPUS.is_dir() else []


# --- a minimal GGUF v3 writer, independent of the library ---

def gstr(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def kv(key, vtype, value, elem=None):
    out = gstr(key) + struct.pack("<I", vtype)
    if vtype == 8:
        return out + gstr(value)
    if vtype == 9:
        body = b"".join(gstr(v) if elem == 8 else struct.pack(SCALAR[elem], v) for v in value)
        return out + struct.pack("<IQ", elem, len(value)) + body
    return out + struct.pack(SCALAR[vtype], value)


def gguf(kvs, tensors=()):
    """tensors: (name, dims, ggml_type, data bytes); F32 (type 0) only."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
    infos, data = b"", b""
    for name, dims, gtype, payload in tensors:
        infos += gstr(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", gtype, len(data))
        data += payload + b"\0" * (-len(payload) % 32)
    out = head + infos
    if tensors:
        out += b"\0" * (-len(out) % 32)
    return out + data


EMPTY = b"GGUF" + struct.pack("<IQQ", 3, 0, 0)

EVERY_TYPE = gguf([
    kv("general.architecture", 8, "llama"),
    kv("t.u8", 0, 200), kv("t.i8", 1, -5), kv("t.u32", 4, 4000000000), kv("t.i64", 11, -7),
    kv("t.u64", 10, 2**64 - 1), kv("t.f32", 6, 0.5), kv("t.f64", 12, -2.25), kv("t.bool", 7, True),
    kv("t.strs", 9, ["alpha", "", "gamma"], elem=8), kv("t.i32s", 9, [-1, 2, -3], elem=5),
    kv("t.f32s", 9, [1.5, -0.25], elem=6), kv("t.bools", 9, [False, True], elem=7),
    kv("tokenizer.ggml.model", 8, "no_vocab"),  # a vocabulary-only file, an empty vocabulary
])


def test_versions():
    version = re.search(r"project\(ggufguard VERSION (\S+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    assert ggufguard.__version__ == version
    schema = json.loads((ROOT / "docs" / "report.schema.json").read_text())
    assert ggufguard.report_schema_version == schema["properties"]["schema_version"]["const"]
    count, digest = ggufguard.rule_catalog_version.split("-")
    assert int(count) == len(ggufguard.rules()) and len(digest) == 8


def test_rules():
    rules = ggufguard.rules()
    by_code = {r["rule"]: r for r in rules}
    assert by_code["GG1001"]["name"] == "truncated"
    assert by_code["GG3011"]["name"] == "duplicate-key"
    assert all(r["default_severity"] in ("info", "warning", "error") for r in rules)
    assert [r["rule"] for r in rules] == sorted(r["rule"] for r in rules)


def test_empty_file_is_valid():
    report = ggufguard.validate(EMPTY)
    assert report.valid and bool(report)
    assert report.tensors == [] and report.metadata == {} and report.file_size == 24


def test_metadata_values_of_every_type():
    report = ggufguard.validate(EVERY_TYPE)
    md = report.metadata
    assert md["general.architecture"] == "llama"
    assert md["t.u8"] == 200 and md["t.i8"] == -5 and md["t.u32"] == 4000000000
    assert md["t.i64"] == -7 and md["t.u64"] == 2**64 - 1
    assert md["t.f32"] == 0.5 and md["t.f64"] == -2.25 and md["t.bool"] is True
    assert md["t.strs"] == ["alpha", "", "gamma"]
    assert isinstance(md["t.i32s"], memoryview) and md["t.i32s"].format == "i"
    assert md["t.i32s"].tolist() == [-1, 2, -3]
    assert md["t.f32s"].format == "f" and md["t.f32s"].tolist() == [1.5, -0.25]
    assert md["t.bools"] == [False, True]
    assert list(md) == [k for k in md]  # file order
    assert list(md)[0] == "general.architecture"


def test_tensors_of_a_crafted_file():
    # An architecture ggufguard does not know: a warning, no hyperparameters needed.
    payload = struct.pack("<8f", *range(8))
    data = gguf([kv("general.architecture", 8, "tinyarch")], [("w", [4, 2], 0, payload)])
    report = ggufguard.validate(data)
    assert report.valid, report.findings
    assert [(f.rule, f.severity) for f in report.findings] == [("GG4016", "warning")]
    (t,) = report.tensors
    assert (t.name, t.type, t.shape, t.nbytes) == ("w", 0, (4, 2), 32)
    assert data[t.offset:t.offset + t.nbytes] == payload


def test_deep_checks_tensor_data(tmp_path):
    clean = struct.pack("<8f", *range(8))
    nan = struct.pack("<8f", 0, 1, 2, float("nan"), 4, 5, 6, 7)
    arch = kv("general.architecture", 8, "tinyarch")
    data = gguf([arch], [("a", [8], 0, clean), ("b", [4, 2], 0, nan)])
    path = tmp_path / "nan.gguf"
    path.write_bytes(data)
    # Without deep the data is not read: valid, and no deep summary.
    shallow = ggufguard.validate(data)
    assert shallow.valid and shallow.deep is None
    for source, jobs in ((data, 0), (data, 2), (bytearray(data), 1), (path, 0), (str(path), 1)):
        report = ggufguard.validate(source, deep=True, jobs=jobs)
        assert not report.valid
        f = next(f for f in report.findings if f.rule == "GG6009")
        assert (f.name, f.severity) == ("tensor-data-non-finite", "error")
        assert "'b'" in f.message and "element 3" in f.message and "NaN" in f.message
        assert f.offset == data.index(nan) + 12
        d = report.deep
        assert (d.checked_tensors, d.checked_bytes, d.bad_values, d.unchecked_bytes) == (2, 64, 1, 0)
        assert [(t.name, t.type, t.tensor, t.checked_bytes, t.bad_values) for t in d.tensors] == [
            ("b", 0, 1, 32, 1), ("a", 0, 0, 32, 0)]
        assert d.tensors_suppressed == 0
    ok = ggufguard.validate(gguf([arch], [("a", [8], 0, clean)]), deep=True)
    assert ok.valid and ok.deep.bad_values == 0 and ok.deep.checked_bytes == 32
    lenient = '{"base": "default", "severities": {"GG6009": "warning"}}'
    assert ggufguard.validate(data, policy=lenient, deep=True).valid
    with pytest.raises(ValueError):
        ggufguard.validate(data, deep=True, jobs=-1)
    with pytest.raises(ValueError):
        ggufguard.validate(data, deep=True, jobs=1025)
    with pytest.raises(ValueError):
        ggufguard.validate(data, jobs=2)  # jobs without deep
    with pytest.raises(TypeError):
        ggufguard.validate(data, "default", True)  # deep is keyword-only


def test_header_prefix_with_the_file_size(tmp_path):
    # What a gatekeeper holds after an HTTP range request: the header's bytes
    # and the size the server reported.
    payload = struct.pack("<8f", *range(8))
    data = gguf([kv("general.architecture", 8, "tinyarch")], [("w", [4, 2], 0, payload)])
    header = data[:len(data) - len(payload)]
    whole = ggufguard.validate(data)
    assert whole.valid and not whole.header_only
    assert whole.verdict == "valid" and whole.not_checked == []
    for source in (header, bytearray(header), memoryview(header)):
        report = ggufguard.validate(source, file_size=len(data))
        assert report.valid and report.header_only, report.findings
        # No error, but the data was not read: never a pass.
        assert report.verdict == "inconclusive", report.verdict
        assert any("--header-only" in item for item in report.not_checked), report.not_checked
        assert report.file_size == len(data)
        assert [(t.name, t.offset, t.nbytes) for t in report.tensors] == [
            (t.name, t.offset, t.nbytes) for t in whole.tensors]
        assert report.metadata["general.architecture"] == "tinyarch"
    # A file too short for its tensor: the data is never read, the verdict still holds.
    short = ggufguard.validate(header, file_size=len(data) - 1)
    assert not short.valid and short.header_only and short.verdict == "invalid"
    assert any(f.rule == "GG6002" for f in short.findings), short.findings
    with pytest.raises(OSError, match="needs at least"):
        ggufguard.validate(header[:30], file_size=len(data))
    with pytest.raises(OSError):
        ggufguard.validate(data, file_size=len(data) - 1)  # more bytes than the file has
    path = tmp_path / "m.gguf"
    path.write_bytes(data)
    with pytest.raises(ValueError, match="file_size"):
        ggufguard.validate(path, file_size=len(data))
    with pytest.raises(ValueError, match="file_size"):
        ggufguard.validate(header, deep=True, file_size=len(data))


def test_every_prefix_is_refused_never_a_crash():
    for cut in range(len(EVERY_TYPE)):
        report = ggufguard.validate(EVERY_TYPE[:cut])
        assert not report.valid
        assert report.findings, cut
        assert report.tensors == []


def test_invalid_file_findings():
    misaligned = bytearray(gguf([kv("general.architecture", 8, "llama")], [("w", [4], 0, b"\0" * 16)]))
    # The offset field is the last 8 bytes of the info, before the padding.
    info_end = len(EMPTY) + len(kv("general.architecture", 8, "llama")) + 8 + 1 + 4 + 8 + 4
    misaligned[info_end:info_end + 8] = struct.pack("<Q", 1)
    report = ggufguard.validate(bytes(misaligned))
    assert not report.valid
    f = next(f for f in report.findings if f.rule == "GG6001")
    assert (f.name, f.severity, f.offset) == ("tensor-misaligned", "error", info_end)
    assert "alignment" in f.message


def test_buffer_kinds_agree():
    a = ggufguard.validate(EVERY_TYPE)
    for data in (bytearray(EVERY_TYPE), memoryview(EVERY_TYPE)):
        b = ggufguard.validate(data)
        assert (b.valid, b.file_size, list(b.metadata)) == (a.valid, a.file_size, list(a.metadata))


def test_large_buffers_are_kept_alive_while_converted():
    # A bytearray or memoryview is validated as a copy: the report is read
    # from it after validation, so it must live until the report is
    # converted. 40 MiB is past glibc's largest mmap threshold, so a copy
    # freed too early is unmapped and reading it faults.
    payload = b"\0" * (40 << 20)
    data = gguf([kv("general.architecture", 8, "tinyarch"), kv("general.name", 8, "big")],
                [("w", [len(payload) // 4], 0, payload)])
    for source in (bytearray(data), memoryview(data)):
        report = ggufguard.validate(source)
        assert report.valid, report.findings
        assert report.metadata["general.name"] == "big"
        assert report.tensors[0].shape == (len(payload) // 4,)


def test_policies():
    # A vocabulary-only file (an empty vocabulary) with a key outside the spec's grammar.
    bad_key = gguf([kv("general.architecture", 8, "llama"), kv("tokenizer.ggml.model", 8, "no_vocab"),
                    kv("Bad-Key", 0, 1)])
    assert ggufguard.validate(bad_key).valid
    assert not ggufguard.validate(bad_key, policy="strict").valid
    assert not ggufguard.validate(bad_key, policy='{"base": "default", "limits": {"max_kv_count": 1}}').valid
    with pytest.raises(ValueError):
        ggufguard.validate(EMPTY, policy="lenient")
    with pytest.raises(ValueError, match="no_such"):
        ggufguard.validate(EMPTY, policy='{"base": "default", "limits": {"no_such": 1}}')
    with pytest.raises(ValueError):
        ggufguard.validate(EMPTY, policy="{")


def test_unreadable_inputs(tmp_path):
    with pytest.raises(OSError):
        ggufguard.validate(str(tmp_path / "missing.gguf"))
    with pytest.raises(OSError):
        ggufguard.validate(tmp_path)  # a directory, as a PathLike
    with pytest.raises(TypeError):
        ggufguard.validate(42)


def test_threads_validate_at_once():
    results = [None] * 8

    def work(i):
        results[i] = ggufguard.validate(EVERY_TYPE if i % 2 else EVERY_TYPE[:-1])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.valid for r in results] == [i % 2 == 1 for i in range(8)]


@needs_corpus
@pytest.mark.parametrize("path", files("valid"), ids=lambda p: p.name)
def test_real_valid_files(path):
    report = ggufguard.validate(path)
    assert report.valid, report.findings
    data = path.read_bytes()
    assert report.file_size == len(data)
    assert ggufguard.validate(data).metadata.keys() == report.metadata.keys()
    alignment = report.metadata.get("general.alignment", 32)
    end = 0
    for t in sorted(report.tensors, key=lambda t: t.offset):
        assert t.offset >= end and t.offset % alignment == 0  # aligned, no overlap
        end = t.offset + t.nbytes
    assert end <= len(data)
    tokens = report.metadata.get("tokenizer.ggml.tokens")
    if tokens is not None:
        assert all(isinstance(t, str) for t in tokens)
        scores = report.metadata.get("tokenizer.ggml.scores")
        if scores is not None:
            assert scores.format == "f" and len(scores) == len(tokens)


@needs_corpus
def test_real_model_tensors():
    report = ggufguard.validate(CORPUS / "valid" / "gridcore_test.gguf")
    assert len(report.tensors) == 20
    assert report.metadata["general.architecture"] == "llama"
    assert report.metadata["llama.block_count"] == 2


@needs_corpus
@pytest.mark.parametrize("path", files("malformed"), ids=lambda p: p.name)
def test_real_malformed_files(path):
    report = ggufguard.validate(str(path))
    assert not report.valid
    assert any(f.severity == "error" and re.fullmatch(r"GG\d{4}", f.rule) for f in report.findings)
    assert report.tensors == []


@needs_corpus
def test_mangled_vocab_fails_where_the_manifest_says():
    report = ggufguard.validate(CORPUS / "malformed" / "ushure_vocab-gpt-2_utf8-mangled.gguf")
    assert not report.valid
    assert any(f.offset >= 339 for f in report.findings)


def fired_rules(data):
    return sorted({f.name for f in ggufguard.validate(data).findings})


def test_no_policy_makes_the_tensor_table_lie():
    # b's offset field says 0, where a lies: an overlap. A policy that
    # disables every rule the file trips makes it valid, but the table is
    # not handed out (before, report.tensors gave the overlapping extents).
    arch = kv("general.architecture", 8, "tinyarch")
    honest = gguf([arch], [("a", [4], 0, b"\0" * 16), ("b", [4], 0, b"\0" * 16)])
    info_b = len(EMPTY) + len(arch) + (8 + 1 + 4 + 8 + 4 + 8)
    offset_field = info_b + 8 + 1 + 4 + 8 + 4
    lying = bytearray(honest)
    lying[offset_field:offset_field + 8] = struct.pack("<Q", 0)
    lying = bytes(lying)
    assert not ggufguard.validate(lying).valid
    policy = json.dumps({"base": "default", "disable": fired_rules(lying)})
    report = ggufguard.validate(lying, policy)
    assert report.valid and not report.tensor_table_trusted
    assert report.tensors == []
    trusted = ggufguard.validate(honest, policy)
    assert trusted.tensor_table_trusted
    assert [(t.name, t.offset) for t in trusted.tensors] == [("a", len(honest) - 64), ("b", len(honest) - 32)]


def test_names_that_are_not_utf8_come_back_as_bytes():
    data = gguf([kv("general.architecture", 8, "tinyarch")], [(b"w\xff", [4], 0, b"\0" * 16)])
    report = ggufguard.validate(data, deep=True)
    assert not report.valid
    assert [t.name for t in report.deep.tensors] == [b"w\xff"]
    assert "b'w\\xff'" in repr(report.deep.tensors[0])
    # A policy that lets the name pass: the trusted table has it as bytes.
    report = ggufguard.validate(data, json.dumps({"base": "default", "disable": fired_rules(data)}))
    assert report.tensor_table_trusted and [t.name for t in report.tensors] == [b"w\xff"]


def test_paths_and_policy_names_are_not_cut_at_a_null(tmp_path):
    name = os.fsdecode(b"m\xff.gguf")  # not UTF-8: os.fsdecode gives a lone surrogate
    (tmp_path / name).write_bytes(EVERY_TYPE)
    assert ggufguard.validate(tmp_path / name).valid
    assert ggufguard.validate(str(tmp_path / name)).valid
    (tmp_path / "m").write_bytes(EVERY_TYPE)
    with pytest.raises(ValueError, match="null"):
        ggufguard.validate(str(tmp_path / "m") + "\0.gguf")
    with pytest.raises(ValueError, match="null"):
        ggufguard.validate(EVERY_TYPE, policy="default\0anything")
    # The error names the path as its bytes are, escaped: still an OSError.
    with pytest.raises(OSError, match=r"missing\\xff"):
        ggufguard.validate(tmp_path / os.fsdecode(b"missing\xff.gguf"))


def test_byte_order_and_suppressed_counts():
    assert not ggufguard.validate(EVERY_TYPE).big_endian
    keys = [kv("general.architecture", 8, "llama"), kv("tokenizer.ggml.model", 8, "no_vocab")]
    keys += [kv(f"no.such.key_{i}", 0, 1) for i in range(7)]
    report = ggufguard.validate(gguf(keys), '{"base": "default", "limits": {"max_findings_per_rule": 2}}')
    assert [f.name for f in report.findings] == ["unknown-key"] * 2
    assert report.findings_suppressed == 5


@needs_corpus
def test_big_endian_files_say_so():
    paths = sorted((CORPUS / "bigendian").glob("*.gguf"))
    assert paths
    for path in paths:
        report = ggufguard.validate(path)
        assert report.valid and report.big_endian and report.tensor_table_trusted, path


# --- the route sweep (issue 38): tests/data/route_sweep/hostile.tsv, as
# tests/route_sweep_test.cc reads it for the CLI's and the C API's routes ---

def as_llamafile(member):
    # An executable (an APE shell stub) with the bytes appended as the one
    # member of a ZIP, stored, as tests/support/zip_writer.h builds it for
    # the C++ reader of the same table. zipfile appends a new archive to a
    # file that is not one, with offsets from the file's start.
    stub = b"MZqFpD='\n\nexec echo not-a-real-llamafile\n".ljust(512, b"\0")
    out = io.BytesIO(stub)
    out.seek(0, io.SEEK_END)
    with zipfile.ZipFile(out, "a", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr("model.gguf", member)
    return out.getvalue()


def hostile_set():
    rows = []
    for line in (ROOT / "tests/data/route_sweep/hostile.tsv").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        name, source, make, named, nameless = line.split("\t")
        data = (ROOT / source).read_bytes()
        for step in make.split("+"):  # a pipeline of steps, applied in order
            if step == "cut-half":
                data = data[: len(data) // 2]
            elif step == "append-junk":
                data += b"A" * 64
            elif step == "llamafile":
                data = as_llamafile(data)
            else:
                assert step == "copy", line
        rows.append((name, data, named, nameless))
    return rows


def test_route_sweep_no_pass_on_bytes_not_validated(tmp_path):
    rows = hostile_set()
    assert len(rows) >= 6
    for name, data, named, nameless in rows:
        path = tmp_path / name
        path.write_bytes(data)
        by_path = ggufguard.validate(str(path)).verdict
        by_bytes = ggufguard.validate(data).verdict
        assert by_path == named, (name, by_path)
        assert by_bytes == nameless, (name, by_bytes)
        if name != "control-valid.gguf":
            assert "valid" not in (by_path, by_bytes), name


def test_runtime_verdicts():
    # eos_token_id 0xFFFFFFFF: llama.cpp reads "no token", mistral.rs refuses
    # (GG9221). Unnamed it is only mistral.rs's verdict; named, an error.
    tokens = [f"t{i}" for i in range(8)]
    data = gguf([kv("general.architecture", 8, "llama"), kv("tokenizer.ggml.model", 8, "llama"),
                 kv("tokenizer.ggml.tokens", 9, tokens, elem=8), kv("tokenizer.ggml.eos_token_id", 4, 0xFFFFFFFF)])
    report = ggufguard.validate(data)
    by_name = {v.runtime: v for v in report.runtimes}
    assert sorted(by_name) == ["candle", "llama.cpp", "mistral.rs", "ollama", "vllm"]
    assert by_name["mistral.rs"].verdict == "refuses" and by_name["mistral.rs"].rule == "GG9221"
    assert not by_name["mistral.rs"].required and "mistral.rs" in by_name["mistral.rs"].judged_at
    assert by_name["llama.cpp"].verdict == "loads" and by_name["llama.cpp"].rule is None
    assert "GG9221" not in [f.rule for f in report.findings]
    named = ggufguard.validate(data, policy=json.dumps({"profile": "mistral.rs"}))
    assert [v.runtime for v in named.runtimes] == ["mistral.rs"] and named.runtimes[0].required
    assert not named.valid and "GG9221" in [f.rule for f in named.findings]
