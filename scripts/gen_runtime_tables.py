#!/usr/bin/python3
"""Regenerate src/ggufguard/runtimes/runtime_tables.inc from the runtimes' sources.

    /usr/bin/python3 scripts/gen_runtime_tables.py \\
        --source ollama=DIR@COMMIT --source candle=DIR@COMMIT --source mistral.rs=DIR@COMMIT \\
        --source gguf-py=DIR@COMMIT --source vllm=DIR@COMMIT \\
        [--ollama-version TAG] [--out FILE]

Python 3 standard library only. Each DIR is a tree (a checkout, a `git archive`, or a tree holding only
the files below; docs/runtimes.md says how the committed tables were made); COMMIT is the commit it was
read at, or, when DIR is a git checkout, may be left out ("DIR" alone) to take HEAD.

Nothing of a tree is copied into the output but facts: type ids, version numbers, limits, names.

What it reads (paths relative to each tree):
  ollama       fs/gguf/gguf.go (MaxStringLength, MaxArraySize, MaxTensorDims), fs/ggml/type.go (the
               TensorType ids), fs/ggml/ggml.go (the types TypeSize gives a size), fs/ggml/gguf.go (the reader),
               LLAMA_CPP_VERSION (the llama-server build ollama runs)
  candle       candle-core/src/quantized/gguf_file.rs (versions, limits, the reader),
               candle-core/src/quantized/mod.rs (GgmlDType::from_u32, to_u32),
               candle-core/src/quantized/ggml_file.rs (qtensor_from_ggml: the types whose data it loads),
               Cargo.toml (the version)
  mistral.rs   mistralrs-quant/src/gguf/archive.rs (its own GGUF reader: versions, limits, the types it can
               size), mistralrs-core/src/gguf/gguf_tokenizer.rs (special tokens, tokenizer models),
               mistralrs-core/src/pipeline/gguf.rs (general.architecture), Cargo.toml (the version)
  gguf-py      gguf/gguf_reader.py (READER_SUPPORTED_VERSIONS, its own GGUF.* fields, what raises),
               gguf/constants.py (GGUF_VERSION, GGMLQuantizationType)
  vllm         vllm/model_executor/layers/quantization/gguf.py (the weight types its GGUF layers take),
               csrc/quantization/gguf/gguf_kernel.cu (the int rows and columns of its kernels)

The code the rules rely on is fingerprinted: if a refresh finds it changed (say candle stops dividing by
general.alignment unchecked, or mistral.rs stops unwrapping the architecture), the script stops and says
which assumption broke instead of emitting tables that no longer describe the runtime.
"""

import argparse
import os
import re
import subprocess
import sys


def fail(msg):
    sys.exit(f"gen_runtime_tables: {msg}")


def read(tree, path):
    full = os.path.join(tree, path)
    try:
        with open(full, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        fail(f"cannot read {full}: {e}")


def require(text, needle, where, meaning):
    """Stops unless `needle` is in `text`: the fact `meaning` rests on it."""
    if needle not in text:
        fail(f"changed: {where} no longer has {needle!r}; no longer sure that {meaning}")


def block_after(text, start, where):
    """The text from `start` to the brace that closes the first brace after it."""
    i = text.find(start)
    if i < 0:
        fail(f"cannot find {start!r} in {where}")
    j = text.find("{", i)
    depth = 0
    for k in range(j, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return text[j:k + 1]
    fail(f"unbalanced braces after {start!r} in {where}")


def int_const(text, pattern, where):
    m = re.search(pattern, text)
    if not m:
        fail(f"cannot find {pattern!r} in {where}")
    return eval_int(m.group(1), where)


def eval_int(expr, where):
    """A constant written as N, N << M or 1 << N (the forms these sources use)."""
    expr = expr.strip()
    m = re.fullmatch(r"(\d+)\s*<<\s*(\d+)", expr)
    if m:
        return int(m.group(1)) << int(m.group(2))
    if re.fullmatch(r"\d+", expr):
        return int(expr)
    fail(f"cannot read the constant {expr!r} in {where}")


# ----------------------------------------------------------------------------- ollama

def read_ollama(tree):
    gguf_go = read(tree, "fs/gguf/gguf.go")
    limits = {
        "max_string_length": int_const(gguf_go, r"MaxStringLength\s*=\s*([0-9<\s]+)\n", "fs/gguf/gguf.go"),
        "max_array_size": int_const(gguf_go, r"MaxArraySize\s*=\s*([0-9<\s]+)\n", "fs/gguf/gguf.go"),
        "max_tensor_dims": int_const(gguf_go, r"MaxTensorDims\s*=\s*(\d+)", "fs/gguf/gguf.go"),
    }
    reader = read(tree, "fs/ggml/gguf.go")
    where = "fs/ggml/gguf.go"
    require(reader, "if n > fsgguf.MaxStringLength {", where, "every string (keys, values, names) is held to MaxStringLength")
    require(reader, "if size > fsgguf.MaxArraySize {", where, "every array is held to MaxArraySize")
    require(reader, 'return nil, fmt.Errorf("invalid array type: %d", t)', where, "an array of arrays is refused")
    require(reader, 'return fmt.Errorf("tensor %q size overflow", tensor.Name)', where,
            "a tensor whose size() fails (a type TypeSize gives 0) refuses the file")
    types_go = read(tree, "fs/ggml/type.go")
    where = "fs/ggml/type.go"
    consts = re.search(r"TensorTypeF32 TensorType = iota\n(.*?)\n\)", types_go, re.S)
    if not consts:
        fail(f"cannot find the TensorType iota block in {where}")
    names = ["TensorTypeF32"] + [re.match(r"\s*(\w+)", line).group(1)
                                 for line in consts.group(1).splitlines() if line.strip()]
    ids = {name: i for i, name in enumerate(names)}
    ggml_go = read(tree, "fs/ggml/ggml.go")
    where = "fs/ggml/ggml.go"
    at = ggml_go.find("func (t TensorType) TypeSize() uint64")
    if at < 0:
        fail(f"no TensorType.TypeSize in {where}")
    size_switch = block_after(ggml_go[at:], "switch t", where)
    sized = set()
    for case in re.findall(r"case ([\w,\s]+):\s*\n\s*return (?!0\b)", size_switch):
        for name in re.split(r"[,\s]+", case.strip()):
            if name:
                if name not in ids:
                    fail(f"TypeSize case {name} is no TensorType in {where}")
                sized.add(ids[name])
    require(size_switch, "default:\n\t\treturn 0", where, "a type without a case has size 0")
    llama = read(tree, "LLAMA_CPP_VERSION").strip()
    if not re.fullmatch(r"b\d+", llama):
        fail(f"LLAMA_CPP_VERSION is {llama!r}, not a llama.cpp build tag")
    return {"limits": limits, "sized_types": sorted(sized), "llama_cpp": llama}


# ----------------------------------------------------------------------------- candle

def read_candle(tree):
    gguf_rs = read(tree, "candle-core/src/quantized/gguf_file.rs")
    where = "candle-core/src/quantized/gguf_file.rs"
    limits = {
        "max_string_length": int_const(gguf_rs, r"const GGUF_MAX_STRING_LENGTH: u64 = ([0-9<\s]+);", where),
        "max_array_elements": int_const(gguf_rs, r"const GGUF_MAX_ARRAY_ELEMENTS: u64 = ([0-9<\s]+);", where),
        "max_tensor_dims": int_const(gguf_rs, r"const GGUF_MAX_TENSOR_DIMS: u32 = (\d+);", where),
        "max_value_depth": int_const(gguf_rs, r"const GGUF_MAX_VALUE_DEPTH: usize = (\d+);", where),
        "default_alignment": int_const(gguf_rs, r"pub const DEFAULT_ALIGNMENT: u64 = (\d+);", where),
    }
    versions = sorted(int(v) for v in re.findall(r"\(Magic::Gguf, (\d+)\) => Self::GgufV\d", gguf_rs))
    if not versions:
        fail(f"no (Magic::Gguf, N) versions in {where}")
    require(gguf_rs, "reader.read_u32::<LittleEndian>()?;\n        let magic = Magic::try_from(magic)?;", where,
            "the magic and version are read little-endian whatever the file (a big-endian file is refused)")
    require(gguf_rs, "let tensor_data_offset = position.div_ceil(alignment) * alignment;", where,
            "general.alignment is divided by unchecked (0 panics)")
    alignment = block_after(gguf_rs, 'let alignment = match metadata.get("general.alignment")', where)
    alignment_types = sorted(set(re.findall(r"Some\(Value::(\w+)\(v\)\)", alignment)))
    if not alignment_types:
        fail(f"no general.alignment value types in {where}")
    require(gguf_rs, 'b => crate::bail!("unexpected bool value {b}")', where, "a bool byte other than 0/1 is refused")
    require(gguf_rs, "String::from_utf8_lossy(&v)", where, "invalid UTF-8 is replaced, not refused")
    require(gguf_rs, "metadata.insert(key, value);", where, "a key given twice keeps the last value")
    mod_rs = read(tree, "candle-core/src/quantized/mod.rs")
    where = "candle-core/src/quantized/mod.rs"
    from_u32 = block_after(mod_rs, "pub(crate) fn from_u32(u: u32) -> Result<Self>", where)
    reader_types = {int(n): name for n, name in re.findall(r"(\d+) => Self::(\w+),", from_u32)}
    require(from_u32, 'crate::bail!("unknown dtype for tensor {u}")', where, "an unknown type id refuses the file")
    to_u32 = block_after(mod_rs, "pub(crate) fn to_u32(self) -> u32", where)
    id_of = {name: int(n) for name, n in re.findall(r"Self::(\w+) => (\d+),", to_u32)}
    for n, name in reader_types.items():
        if id_of.get(name) != n:
            fail(f"{where}: from_u32 and to_u32 disagree on {name}")
    ggml_rs = read(tree, "candle-core/src/quantized/ggml_file.rs")
    where = "candle-core/src/quantized/ggml_file.rs"
    loader = block_after(ggml_rs, "pub fn qtensor_from_ggml(", where)
    require(loader, 'crate::bail!("quantized type {ggml_dtype:?} is not supported yet")', where,
            "the data of a type without an arm is refused")
    load_types = set()
    for name in re.findall(r"GgmlDType::(\w+) =>", loader):
        if name not in id_of:
            fail(f"{where}: qtensor_from_ggml loads {name}, which to_u32 does not know")
        load_types.add(id_of[name])
    cargo = read(tree, "Cargo.toml")
    version = re.search(r'\[workspace\.package\]\s*\nversion = "([^"]+)"', cargo)
    return {"limits": limits, "versions": versions, "alignment_types": alignment_types,
            "reader_types": sorted(reader_types), "load_types": sorted(load_types),
            "version": version.group(1) if version else "?"}


# ----------------------------------------------------------------------------- mistral.rs

def read_mistralrs(tree):
    archive = read(tree, "mistralrs-quant/src/gguf/archive.rs")
    where = "mistralrs-quant/src/gguf/archive.rs"
    limits = {
        "max_string_length": int_const(archive, r"const MAX_STRING_LENGTH: u64 = ([0-9<\s]+);", where),
        "max_array_elements": int_const(archive, r"const MAX_ARRAY_ELEMENTS: u64 = ([0-9<\s]+);", where),
        "max_tensor_dims": int_const(archive, r"const MAX_TENSOR_DIMS: u32 = (\d+);", where),
    }
    parse = archive[archive.find("fn parse(path: PathBuf, mmap: Mmap) -> Result<Self>"):]
    versions = sorted(int(v) for v in re.findall(r"(\d+) => GgufVersion::V\d,", parse[:2000]))
    if not versions:
        fail(f"no GgufVersion arms in ParsedShard::parse in {where}")
    require(archive, 'b"FUGG" => Ok((GgufEndian::Big, 4)),', where, "a big-endian file's header is read")
    require(archive, 'candle_core::bail!("big-endian GGUF tensor loading is not supported");', where,
            "a big-endian file's tensors are refused")
    require(archive, 'candle_core::bail!("GGUF metadata key `{key}` is duplicated");', where, "a key given twice is refused")
    require(archive, 'value => candle_core::bail!("invalid GGUF boolean value {value}"),', where,
            "a bool byte other than 0/1 is refused")
    require(archive, "String::from_utf8_lossy(bytes)", where, "invalid UTF-8 is replaced, not refused")
    block = block_after(archive, "pub const fn block_size(self) -> Option<usize>", where)
    known = set()
    for arm in re.findall(r"^\s*([0-9|. =]+) => Some\(\d+\),", block, re.M):
        for part in arm.split("|"):
            part = part.strip()
            m = re.fullmatch(r"(\d+)\.\.=(\d+)", part)
            if m:
                known.update(range(int(m.group(1)), int(m.group(2)) + 1))
            elif part.isdigit():
                known.add(int(part))
            else:
                fail(f"cannot read the block_size arm {part!r} in {where}")
    require(block, "_ => None,", where, "a type without a block size has no byte length (its data is refused)")
    tok = read(tree, "mistralrs-core/src/gguf/gguf_tokenizer.rs")
    where = "mistralrs-core/src/gguf/gguf_tokenizer.rs"
    require(tok, 'let required = ["model", "tokens", "eos_token_id"];', where, "eos_token_id is required")
    require(tok, 'is out of bounds for vocab size {vocab_size}', where, "special token ids are checked, not indexed")
    require(tok, '"GGUF BPE tokenizer is missing required metadata `tokenizer.ggml.pre`', where,
            "a BPE vocabulary without tokenizer.ggml.pre is refused")
    models_match = block_after(tok, "let (mut tokenizer, kind) = match props.model.as_str()", where)
    models = sorted(set(re.findall(r'"([a-z0-9_-]+)"', models_match.split("other =>")[0])))
    bpe = re.findall(r'((?:"[a-z0-9_-]+" \| )*"[a-z0-9_-]+") => bpe_tokenizer', models_match)
    if not bpe:
        fail(f"no model names lead to bpe_tokenizer in {where}")
    bpe_models = sorted(set(re.findall(r'"([a-z0-9_-]+)"', " ".join(bpe))))
    pipeline = read(tree, "mistralrs-core/src/pipeline/gguf.rs")
    where = "mistralrs-core/src/pipeline/gguf.rs"
    require(pipeline, 'bail!("GGUF `general.architecture` must be a string, got {value:?}")', where,
            "an architecture that is no string is refused")
    require(pipeline, 'None => bail!("GGUF metadata is missing `general.architecture`"),', where,
            "a file without general.architecture is refused")
    cargo = read(tree, "Cargo.toml")
    version = re.search(r'\[workspace\.package\]\s*\nversion = "([^"]+)"', cargo)
    return {"limits": limits, "versions": versions, "known_types": sorted(known), "tokenizer_models": models,
            "bpe_models": bpe_models, "version": version.group(1) if version else "?"}


# ----------------------------------------------------------------------------- gguf-py, vLLM

def read_gguf_py(tree):
    reader = read(tree, "gguf/gguf_reader.py")
    where = "gguf/gguf_reader.py"
    constants = read(tree, "gguf/constants.py")
    gguf_version = int_const(constants, r"GGUF_VERSION\s*=\s*(\d+)", "gguf/constants.py")
    m = re.search(r"READER_SUPPORTED_VERSIONS = \[([^\]]*)\]", reader)
    if not m:
        fail(f"no READER_SUPPORTED_VERSIONS in {where}")
    versions = sorted(gguf_version if v.strip() == "GGUF_VERSION" else int(v) for v in m.group(1).split(","))
    own_fields = sorted(set(re.findall(r"ReaderField\(offs, '(GGUF\.\w+)'", reader)))
    if not own_fields:
        fail(f"no GGUF.* fields pushed in {where}")
    require(reader, "raise KeyError(f'Duplicate {field.name} already in list at offset {field.offset}')", where,
            "a key equal to one already read, its own GGUF.* fields included, raises")
    require(reader, "elif magic_val == GGUF_MAGIC_BE:", where, "a big-endian file is read with its bytes swapped")
    require(reader, "for idx in range(alen[0]):", where, "an array's declared count is walked one element at a time")
    require(reader, "ggml_type = GGMLQuantizationType(raw_dtype[0])", where, "an unknown type id raises")
    enum = re.search(r"class GGMLQuantizationType\(IntEnum\):\n(.*?)\n\n", constants, re.S)
    if not enum:
        fail("no GGMLQuantizationType in gguf/constants.py")
    types = {name: int(n) for name, n in re.findall(r"^\s+(\w+)\s*=\s*(\d+)", enum.group(1), re.M)}
    return {"versions": versions, "own_fields": own_fields, "types": types}


def read_vllm(tree, gguf_py_types):
    layers = read(tree, "vllm/model_executor/layers/quantization/gguf.py")
    where = "vllm/model_executor/layers/quantization/gguf.py"
    require(layers, "DEQUANT_TYPES = STANDARD_QUANT_TYPES | KQUANT_TYPES | IMATRIX_QUANT_TYPES", where,
            "the types a GGUF layer dequantizes are the three sets")
    require(layers, "if not (qweight_type in UNQUANTIZED_TYPES\n                or qweight_type in DEQUANT_TYPES):", where,
            "a weight of another type is refused as the model loads")
    weight_types = set()
    for set_name in ("UNQUANTIZED_TYPES", "STANDARD_QUANT_TYPES", "KQUANT_TYPES", "IMATRIX_QUANT_TYPES"):
        m = re.search(set_name + r" = \{([^}]*)\}", layers)
        if not m:
            fail(f"no {set_name} in {where}")
        for name in re.findall(r"WeightType\.(\w+)", m.group(1)):
            if name not in gguf_py_types:
                fail(f"{where}: {set_name} names {name}, which gguf-py's GGMLQuantizationType does not")
            weight_types.add(gguf_py_types[name])
    kernel = read(tree, "csrc/quantization/gguf/gguf_kernel.cu")
    where = "csrc/quantization/gguf/gguf_kernel.cu"
    require(kernel, "int col = X.sizes()[1];", where, "the kernels take a row's length as int")
    require(kernel, "m * n, stream);", where, "ggml_dequantize hands m * n to an int element count")
    return {"weight_types": sorted(weight_types)}


# ----------------------------------------------------------------------------- output

def git_commit(tree):
    try:
        out = subprocess.run(["git", "-C", tree, "log", "-1", "--format=%H %cs"], check=True, capture_output=True,
                             text=True).stdout.split()
        return out[0], out[1]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return None, None


def parse_source(spec):
    name, _, rest = spec.partition("=")
    tree, _, commit = rest.partition("@")
    if not name or not tree:
        fail(f"--source wants NAME=DIR[@COMMIT], not {spec!r}")
    date = ""
    if not commit:
        commit, date = git_commit(tree)
        if not commit:
            fail(f"{tree} is no git checkout: give --source {name}=DIR@COMMIT")
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        fail(f"{name}: {commit!r} is not a 40-digit commit")
    return name, tree, commit, date


def u32_list(values):
    return "{" + ", ".join(str(v) for v in values) + "}"


def str_list(values):
    return "{" + ", ".join(f'"{v}"' for v in values) + "}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", action="append", default=[], help="NAME=DIR[@COMMIT]")
    ap.add_argument("--ollama-version", default="", help="ollama's release tag at that commit (git describe)")
    ap.add_argument("--date", action="append", default=[], help="NAME=YYYY-MM-DD: the commit's date")
    ap.add_argument("--out", default="src/ggufguard/runtimes/runtime_tables.inc")
    args = ap.parse_args()
    sources = {}
    for spec in args.source:
        name, tree, commit, date = parse_source(spec)
        sources[name] = (tree, commit, date)
    for spec in args.date:
        name, _, date = spec.partition("=")
        if name in sources:
            sources[name] = (sources[name][0], sources[name][1], date)
    wanted = ["ollama", "candle", "mistral.rs", "gguf-py", "vllm"]
    missing = [n for n in wanted if n not in sources]
    if missing:
        fail(f"missing --source for {', '.join(missing)}")

    ollama = read_ollama(sources["ollama"][0])
    candle = read_candle(sources["candle"][0])
    mistralrs = read_mistralrs(sources["mistral.rs"][0])
    gguf_py = read_gguf_py(sources["gguf-py"][0])
    vllm = read_vllm(sources["vllm"][0], gguf_py["types"])

    def src(name, repo, version, what):
        tree, commit, date = sources[name]
        return f'    {{"{name}", "{repo}", "{version}", "{commit}", "{date}", "{what}"}},'

    lines = [
        "// Generated by scripts/gen_runtime_tables.py from the runtimes' sources (docs/runtimes.md).",
        "// Do not edit: regenerate. Facts only (type ids, versions, limits, names); no upstream code.",
        "// Included by runtimes/runtime_tables.h inside namespace ggufguard::runtime_tables.",
        "",
        "// Where each table comes from: name, repository, version, commit, commit date, files read.",
        "inline constexpr RuntimeSource kSources[] = {",
        src("ollama", "ollama/ollama", args.ollama_version or "?",
            "fs/ggml/{gguf,ggml,type}.go, fs/gguf/gguf.go, LLAMA_CPP_VERSION"),
        src("vllm", "vllm-project/vllm", "?",
            "vllm/model_executor/layers/quantization/gguf.py, csrc/quantization/gguf/gguf_kernel.cu"),
        src("gguf-py", "ggml-org/llama.cpp", "?", "gguf-py/gguf/gguf_reader.py, gguf-py/gguf/constants.py"),
        src("mistral.rs", "EricLBuehler/mistral.rs", mistralrs["version"],
            "mistralrs-quant/src/gguf/archive.rs, mistralrs-core/src/gguf/gguf_tokenizer.rs, "
            "mistralrs-core/src/pipeline/gguf.rs, Cargo.toml"),
        src("candle", "huggingface/candle", candle["version"], "candle-core/src/quantized/{gguf_file,mod,ggml_file}.rs"),
        "};",
        "",
        "// ollama: its Go reader (fs/ggml/gguf.go) and the llama-server build it runs every GGUF model in.",
        f'inline constexpr std::string_view kOllamaLlamaCppBuild = "{ollama["llama_cpp"]}";',
        f"inline constexpr uint64_t kOllamaMaxStringLength = {ollama['limits']['max_string_length']};",
        f"inline constexpr uint64_t kOllamaMaxArraySize = {ollama['limits']['max_array_size']};",
        f"inline constexpr uint32_t kOllamaMaxTensorDims = {ollama['limits']['max_tensor_dims']};",
        "// Tensor types TypeSize gives a size; the reader refuses a tensor of any other.",
        f"inline constexpr uint32_t kOllamaSizedTypes[] = {u32_list(ollama['sized_types'])};",
        "",
        "// gguf-py's GGUFReader (vLLM, transformers).",
        f"inline constexpr uint32_t kGgufPyVersions[] = {u32_list(gguf_py['versions'])};",
        "// The fields it pushes before the file's keys: a key of one of these names raises KeyError.",
        f"inline constexpr std::string_view kGgufPyOwnFields[] = {str_list(gguf_py['own_fields'])};",
        f"inline constexpr uint32_t kGgufPyTypes[] = {u32_list(sorted(gguf_py['types'].values()))};",
        "",
        "// vLLM's GGUF layers: the weight types they compute with (UNQUANTIZED_TYPES and DEQUANT_TYPES).",
        f"inline constexpr uint32_t kVllmWeightTypes[] = {u32_list(vllm['weight_types'])};",
        "",
        "// candle-core's GGUF reader (candle-core/src/quantized/gguf_file.rs) and tensor loader.",
        f"inline constexpr uint32_t kCandleVersions[] = {u32_list(candle['versions'])};",
        f"inline constexpr uint64_t kCandleMaxStringLength = {candle['limits']['max_string_length']};",
        f"inline constexpr uint64_t kCandleMaxArrayElements = {candle['limits']['max_array_elements']};",
        f"inline constexpr uint32_t kCandleMaxTensorDims = {candle['limits']['max_tensor_dims']};",
        "// The general.alignment value types it reads (any other: its default alignment).",
        f"inline constexpr std::string_view kCandleAlignmentTypes[] = {str_list(candle['alignment_types'])};",
        f"inline constexpr uint64_t kCandleDefaultAlignment = {candle['limits']['default_alignment']};",
        "// The type ids its header reader knows (any other refuses the file), and those whose data it loads.",
        f"inline constexpr uint32_t kCandleReaderTypes[] = {u32_list(candle['reader_types'])};",
        f"inline constexpr uint32_t kCandleLoadTypes[] = {u32_list(candle['load_types'])};",
        "",
        "// mistral.rs: its own GGUF reader (mistralrs-quant/src/gguf/archive.rs), the type ids it can size,",
        "// and the tokenizer.ggml.model values it converts (those that are BPE need tokenizer.ggml.pre).",
        f"inline constexpr uint32_t kMistralRsVersions[] = {u32_list(mistralrs['versions'])};",
        f"inline constexpr uint64_t kMistralRsMaxStringLength = {mistralrs['limits']['max_string_length']};",
        f"inline constexpr uint64_t kMistralRsMaxArrayElements = {mistralrs['limits']['max_array_elements']};",
        f"inline constexpr uint32_t kMistralRsMaxTensorDims = {mistralrs['limits']['max_tensor_dims']};",
        f"inline constexpr uint32_t kMistralRsKnownTypes[] = {u32_list(mistralrs['known_types'])};",
        f"inline constexpr std::string_view kMistralRsTokenizerModels[] = {str_list(mistralrs['tokenizer_models'])};",
        f"inline constexpr std::string_view kMistralRsBpeModels[] = {str_list(mistralrs['bpe_models'])};",
        "",
    ]
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
