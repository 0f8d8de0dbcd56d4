#!/usr/bin/python3
"""Regenerate src/ggufguard/rules/llama_tables.inc from a llama.cpp source tree.

    /usr/bin/python3 scripts/gen_llama_tables.py LLAMA_CPP_TREE [--commit SHA] [--out FILE]

Python 3 standard library only. The tree is read, never modified; nothing of it
is copied into the output except names (architecture and key names) and the
facts derived from the loader code (docs/knowledge.md says what and how).

What it reads (paths relative to the tree):
  src/llama-arch.cpp         LLM_ARCH_NAMES, LLM_KV_NAMES, llm_arch_is_recurrent/_hybrid
  src/llama-hparams.h        C++ types of the llama_hparams fields the loader reads into
  src/llama-model.h          LLAMA_LOAD_LOCALS, llama_model members
  src/llama-model.cpp        llama_model_mapping (arch -> class), the common part of
                             load_hparams, create_memory (which archs keep no KV cache)
  src/models/models.h        class inheritance
  src/models/*.cpp           each class's load_arch_hparams and load_arch_tensors
  src/llama-model-loader.cpp get_key/get_arr rules (checked by fingerprints below)
  src/llama-vocab.cpp        tokenizer keys
  src/llama-adapter.cpp      adapter keys
  src/llama-model-saver.cpp  types llama.cpp's own saver writes
  tools/mtmd/clip-impl.h, tools/mtmd/clip.cpp   clip.* keys of projector files
  tools/imatrix/imatrix.cpp  imatrix.* keys
  tools/quantize/quantize.cpp   quantize.imatrix.* keys
  tools/cvector-generator/cvector-generator.cpp   control-vector keys
  gguf-py/gguf/constants.py, gguf-py/gguf/gguf_writer.py   names and types gguf-py writes

The loader semantics this relies on are fingerprinted: if a refresh finds the
loader code changed (say get_key stops being exact-type), the script stops and
says which assumption broke instead of emitting wrong data.
"""

import argparse
import os
import re
import subprocess
import sys

# GGUF value types, as the C++ side names its TypeSet bits.
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = (
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64")
ALL_SCALARS = frozenset([U8, I8, U16, I16, U32, I32, F32, BOOL, STR, U64, I64, F64])
ANY_INT = frozenset([U8, I8, U16, I16, U32, I32, U64, I64])
CPP_BIT = {U8: "kU8", I8: "kI8", U16: "kU16", I16: "kI16", U32: "kU32", I32: "kI32", F32: "kF32",
           BOOL: "kBool", STR: "kStr", U64: "kU64", I64: "kI64", F64: "kF64"}

# C++ destination type -> the one GGUF type GGUFMeta::GKV<T> accepts (exact).
SCALAR_OF_CTYPE = {
    "uint8_t": U8, "int8_t": I8, "uint16_t": U16, "int16_t": I16, "uint32_t": U32, "int32_t": I32,
    "int": I32, "llama_token": I32, "uint64_t": U64, "int64_t": I64, "float": F32, "double": F64,
    "bool": BOOL, "std::string": STR,
    # get_key<enum llama_pooling_type> is specialised to read a uint32_t.
    "llama_pooling_type": U32, "enum llama_pooling_type": U32,
}
# get_arr into std::array<T> (and get_key_or_arr, which calls it): the element
# types its switch lets through for T; others throw (before llama.cpp #27075,
# 2026-08, they tripped a GGML_ASSERT, which aborts). A bool array is read as
# 0/1 integers.
ELEMENTS_OF_CTYPE = {
    "uint32_t": frozenset([BOOL, U32, I32]), "int32_t": frozenset([BOOL, U32, I32]),
    "int": frozenset([BOOL, U32, I32]), "llama_token": frozenset([BOOL, U32, I32]), "float": frozenset([F32]),
    "std::string": frozenset([STR]),
}
# get_arr into std::vector<T>: the same, except that since #27075 its switch
# has no case for bool arrays, which it refuses.
ELEMENTS_OF_VECTOR_CTYPE = dict(ELEMENTS_OF_CTYPE, **{
    "uint32_t": frozenset([U32, I32]), "int32_t": frozenset([U32, I32]), "int": frozenset([U32, I32]),
    "llama_token": frozenset([U32, I32]),
})
PER_LAYER = "per_layer"  # array length must equal block_count
# ... or block_count - nextn_predict_layers: hparams.n_layer() is n_layer_all -
# n_layer_nextn, and a read after the architecture read nextn_predict_layers
# sees the difference (cohere2moe, glm-dsa); before, n_layer_nextn is still 0.
PER_LAYER_MINUS_NEXTN = "per_layer_minus_nextn"
NEXTN_BELOW_ASSERT = "GGML_ASSERT(hparams.n_layer_nextn < hparams.n_layer_all"
NEXTN_EQUAL_ASSERT = "GGML_ASSERT(hparams.n_layer_nextn == hparams.n_layer_all"
# GG9059: GGML_ASSERT(hparams.F OP NUMBER) or GGML_ASSERT(hparams.F) in an
# architecture's load_arch_hparams, F read from a key in the same function.
SIMPLE_ASSERT = re.compile(r"GGML_ASSERT\(\s*hparams\.(\w+)\s*(?:(>=|<=|==|!=|>|<)\s*(-?[0-9.]+)f?\s*)?(?:&&\s*\"[^\"]*\"\s*)?\)\s*;")
# The other GGML_ASSERTs at the top level of a load_arch_hparams, each with
# the check that covers it: a refresh that meets a new one stops, so that no
# loader abort is left without a rule.
OTHER_TOP_LEVEL_ASSERTS = {
    ("nanbeige.cpp", "GGML_ASSERT(n_loops_u >= 1);"): "GG9059 (CheckArchAsserts, by hand)",
    ("nanbeige.cpp", "GGML_ASSERT((size_t) n_layer_phys * (size_t) n_loops_u <= (size_t) LLAMA_MAX_LAYERS);"):
        "GG9059 (CheckArchAsserts, by hand)",
    ("gemma-embedding.cpp", 'GGML_ASSERT((hparams.dense_2_feat_in == 0 || hparams.dense_2_feat_in == hparams.n_embd) '
                            '&& "dense_2_feat_in must be equal to n_embd");'): "GG9059 (CheckArchAsserts, by hand)",
    ("gemma-embedding.cpp", 'GGML_ASSERT((hparams.dense_3_feat_out == 0 || hparams.dense_3_feat_out == hparams.n_embd) '
                            '&& "dense_3_feat_out must be equal to n_embd");'): "GG9059 (CheckArchAsserts, by hand)",
    ("deepseek2.cpp", "GGML_ASSERT(hparams.n_layer_nextn == 0 || "
                      "hparams.n_layer() + hparams.n_layer_nextn == hparams.n_layer_all);"):
        "always holds: n_layer() is n_layer_all - n_layer_nextn, in unsigned arithmetic",
}
ASSERT_OPS = {">": "kGreater", ">=": "kGreaterEqual", "<": "kLess", "<=": "kLessEqual", "==": "kEqual",
              "!=": "kNotEqual", None: "kTrue"}


class GenError(Exception):
    pass


def read(tree, rel):
    with open(os.path.join(tree, rel), encoding="utf-8") as f:
        return f.read()


def require(cond, what):
    if not cond:
        raise GenError(what)


# ---------------------------------------------------------------------------
# C++ text helpers

def literal_end(src, i):
    """Index just past the string or char literal that starts at src[i]."""
    quote, j, n = src[i], i + 1, len(src)
    while j < n and src[j] != quote:
        j += 2 if src[j] == "\\" else 1
    return j + 1


def strip_comments(src):
    """Drops // and /* */ comments, keeps string and char literals intact."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c == '"' or c == "'":
            j = literal_end(src, i)
            out.append(src[i:j])
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            out.append(" ")
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching(src, open_pos, open_ch="{", close_ch="}"):
    """Index of the bracket closing the one at open_pos (strings skipped)."""
    depth, i, n = 0, open_pos, len(src)
    while i < n:
        c = src[i]
        if c == '"' or c == "'":
            i = literal_end(src, i)
            continue
        if c == open_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise GenError("unbalanced %s at %d" % (open_ch, open_pos))


def function_body(src, signature_re):
    m = re.search(signature_re, src)
    if not m:
        return None
    brace = src.index("{", m.end() - 1)
    return src[brace + 1:matching(src, brace)]


def split_args(s):
    args, depth, cur = [], 0, []
    for c in s:
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        if c == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        args.append("".join(cur).strip())
    return args


def norm_ws(s):
    return re.sub(r"\s+", " ", s).strip()


# ---------------------------------------------------------------------------
# Block structure: which reads run for which architectures

# The guard of a bare block: it runs whenever the code around it does.
SCOPE = "scope"

ARCH_TERM = re.compile(r"^(?:arch|ml\.get_arch\(\))\s*==\s*(LLM_ARCH_\w+)$")


def condition_archs(cond):
    """For `a || b || ...` where each term is `arch == LLM_ARCH_X` (or the
    load-time option hparams.vocab_only, which ggufguard treats separately:
    it demands hyperparameters only of files with tensors), the set of arch
    enums; None for any other condition."""
    archs = set()
    for term in cond.split("||"):
        term = norm_ws(term).strip("() ")
        if term == "hparams.vocab_only":
            continue
        m = ARCH_TERM.match(term)
        if not m:
            return None
        archs.add(m.group(1))
    return archs


class Read:
    """One ml.get_* call: the key enum, what it accepts, whether it throws
    when the key is absent, and for which architectures it runs always."""

    def __init__(self, kv, scalar, elements, length, required, always, only_archs, where):
        self.kv, self.scalar, self.elements, self.length = kv, frozenset(scalar), frozenset(elements), length
        self.required, self.always, self.only_archs, self.where = required, always, only_archs, where


def scan_reads(body, resolve_type, where):
    """Every ml.get_key / get_key_or_arr / get_arr / get_arr_n call in body.

    A read is `always` when it sits at the top level of the function body as
    a statement of its own (or `TYPE x = ml.get_key(...)`), after no return:
    then a required read (no `false`) makes the key mandatory. Reads inside
    blocks opened by `if (arch == LLM_ARCH_X || ...)` run always for those
    architectures only. A bare block (`{ ... }` with no statement before it,
    a scope of its own: the vocabulary loader's "determine vocab type") runs
    whenever the code around it does. Everything else (inside other ifs,
    loops, switches, after a `||`) is conditional: it can only make the key
    optional."""
    reads = []
    # Block stack of (header, archs-or-None) for each open brace; a bare
    # block is left out of the guards (SCOPE).
    stack = []
    excluded = set()          # archs for which an earlier return left the function
    returned_always = False   # an unconditional (or unknown-condition) return happened
    stmt_start = 0
    i, n = 0, len(body)
    call_re = re.compile(r"ml\.(get_key_or_arr|get_key|get_arr_n|get_arr)\s*\(")
    while i < n:
        c = body[i]
        if c == '"' or c == "'":
            i = literal_end(body, i)
            continue
        if c == "{":
            header = norm_ws(body[stmt_start:i])
            m = re.match(r"^(?:else\s+)?if\s*\((.*)\)$", header)
            archs = condition_archs(m.group(1)) if m and not header.startswith("else") else None
            stack.append((header, SCOPE if header == "" else archs))
            stmt_start = i + 1
        elif c == "}":
            if stack:
                stack.pop()
            stmt_start = i + 1
        elif c == ";":
            stmt = norm_ws(body[stmt_start:i])
            if re.match(r"^return\b", stmt):
                guard = [a for _, a in stack if a is not SCOPE]
                if not guard:
                    returned_always = True
                elif len(guard) == 1 and guard[0] is not None:
                    excluded |= guard[0]
                else:
                    returned_always = True
            stmt_start = i + 1
        m = call_re.match(body, i) if c == "m" else None
        if m and (i == 0 or not (body[i - 1].isalnum() or body[i - 1] in "_.")):
            fn = m.group(1)
            close = matching(body, m.end() - 1, "(", ")")
            args = split_args(body[m.end():close])
            prefix = norm_ws(body[stmt_start:i])
            own_statement = prefix == "" or re.match(r"^(?:const\s+)?(?:auto|bool)\s+\w+\s*=$", prefix)
            guards = [a for _, a in stack if a is not SCOPE]
            if returned_always or not own_statement or any(a is None for a in guards):
                always, only = False, None
            elif guards:
                only = set.intersection(*guards)
                always = True
            else:
                always, only = True, None
            # n_layer() counts nextn_predict_layers out once it has been read
            # (by any read: an optional one leaves 0 when the key is absent)
            nextn_read = any(norm_ws(r.kv) == "LLM_KV_NEXTN_PREDICT_LAYERS" for r in reads)
            reads.append(make_read(fn, args, resolve_type, always, only, set(excluded) if always else set(), where,
                                   nextn_read))
            i = close + 1
            continue
        i += 1
    return reads


def parse_required(arg, where):
    a = norm_ws(arg).lower()
    # a float literal passed where a bool is taken (deepseek32: `0.0f`)
    # converts to false; any other number to true
    if a == "false" or re.fullmatch(r"0+(\.0*)?f?|\.0+f?", a):
        return False
    if a in ("true", "1"):
        return True
    raise GenError("%s: cannot read the `required` argument %r" % (where, arg))


def make_read(fn, args, resolve_type, always, only, excluded, where, nextn_read=False):
    require(args and re.match(r"^(LLM_KV_\w+|std::get<0>\(it\))$", args[0]) or fn == "get_key",
            "%s: unexpected key argument %r" % (where, args[:1]))
    kv = args[0]
    if fn == "get_key":
        require(len(args) in (2, 3), "%s: get_key with %d args" % (where, len(args)))
        ctype = resolve_type(args[1])
        require(ctype in SCALAR_OF_CTYPE, "%s: get_key into %r (%s) has no known GGUF type" % (where, args[1], ctype))
        scalar, elements, length = {SCALAR_OF_CTYPE[ctype]}, set(), None
        required = parse_required(args[2], where) if len(args) == 3 else True
    elif fn == "get_key_or_arr" and not (resolve_type(args[1]) or "").startswith("std::array"):
        # the scalar-only overload: a uint32_t, arrays refused (required) or ignored
        ctype = resolve_type(args[1])
        require(len(args) in (2, 3) and ctype == "uint32_t", "%s: scalar get_key_or_arr into %s" % (where, ctype))
        required = parse_required(args[2], where) if len(args) == 3 else True
        # an optional read skips an array of any type (converters write bool[]
        # patterns for archs that read only a period): the loader accepts it
        scalar, elements, length = {U32}, (set() if required else set(ALL_SCALARS)), None
    elif fn == "get_key_or_arr":
        require(len(args) in (3, 4), "%s: get_key_or_arr with %d args" % (where, len(args)))
        ctype = resolve_type(args[1])
        m = re.match(r"^std::array<\s*([\w:]+)\s*,\s*[\w:]+\s*>$", ctype or "")
        require(m and m.group(1) in ELEMENTS_OF_CTYPE, "%s: get_key_or_arr into %r (%s)" % (where, args[1], ctype))
        elem = m.group(1)
        scalar, elements = {SCALAR_OF_CTYPE[elem]}, set(ELEMENTS_OF_CTYPE[elem])
        n_arg = norm_ws(args[2])
        if n_arg in ("hparams.n_layer", "hparams.n_layer_all") or (n_arg == "hparams.n_layer()" and not nextn_read):
            length = PER_LAYER
        elif n_arg == "hparams.n_layer()":
            length = PER_LAYER_MINUS_NEXTN
        elif re.match(r"^\d+$", n_arg):
            length = int(n_arg)
        else:
            raise GenError("%s: get_key_or_arr length %r" % (where, n_arg))
        required = parse_required(args[3], where) if len(args) == 4 else True
    elif fn == "get_arr":
        require(len(args) in (2, 3), "%s: get_arr with %d args" % (where, len(args)))
        ctype = resolve_type(args[1])
        m = re.match(r"^std::(?:vector<\s*([\w:]+)\s*>|array<\s*([\w:]+)\s*,\s*[\w:]+\s*>)$", ctype or "")
        require(m, "%s: get_arr into %r (%s)" % (where, args[1], ctype))
        elem = m.group(1) or m.group(2)
        accepted = ELEMENTS_OF_VECTOR_CTYPE if m.group(1) else ELEMENTS_OF_CTYPE
        require(elem in accepted, "%s: get_arr of %s" % (where, elem))
        required = parse_required(args[2], where) if len(args) == 3 else True
        # an optional get_arr skips a non-array value
        scalar, elements, length = (set() if required else set(ALL_SCALARS)), set(accepted[elem]), None
    else:  # get_arr_n: only the length of an array of any type
        scalar, elements, length = set(), set(ALL_SCALARS), None
        required = parse_required(args[2], where) if len(args) == 3 else True
    r = Read(kv, scalar, elements, length, required, always, only, where)
    r.dest = norm_ws(args[1]) if len(args) > 1 else None  # the destination expression
    r.excluded = excluded
    # get_arr_n only counts an array; the key's element type is the business
    # of the code that reads its elements (tokens: the vocabulary loader)
    r.length_only = fn == "get_arr_n"
    return r


# ---------------------------------------------------------------------------
# Declarations

DECL_TYPE = r"(?:const\s+)?(?:struct\s+)?(std::array<[^;>]*>|std::vector<[^;>]*>|std::string|enum\s+\w+|[A-Za-z_][\w:]*)"


def find_decl(src, name):
    """The declared type of `name` in src (`TYPE name;`, `= ...`, `(...)`, `{...}`)."""
    for m in re.finditer(DECL_TYPE + r"\s+" + re.escape(name) + r"\s*(?:=|;|\(|\{|\[)", src):
        t = norm_ws(m.group(1))
        if t not in ("return", "else", "case", "auto", "const"):
            return t
    return None


def struct_fields(src, struct_name):
    body = function_body(src, r"struct\s+" + struct_name + r"\s*\{")
    require(body is not None, "struct %s not found" % struct_name)
    return body


class Types:
    def __init__(self, tree):
        hp = strip_comments(read(tree, "src/llama-hparams.h"))
        self.hparams = struct_fields(hp, "llama_hparams")
        self.nested = {}
        for m in re.finditer(r"struct\s+(llama_hparams_\w+)\s+(\w+)\s*;", self.hparams):
            self.nested[m.group(2)] = struct_fields(hp, m.group(1))
        self.model_h = strip_comments(read(tree, "src/llama-model.h"))
        # headers whose structs a read may write a field of (`opts.flag`)
        self.headers = [hp, self.model_h, strip_comments(read(tree, "src/llama-vocab.h"))]

    def resolver(self, *scopes):
        def resolve(expr):
            expr = norm_ws(expr)
            m = re.match(r"^hparams\.(\w+)(?:\.(\w+))?$", expr)
            if m:
                if m.group(2):
                    return find_decl(self.nested.get(m.group(1), ""), m.group(2))
                return find_decl(self.hparams, m.group(1))
            m = re.match(r"^(\w+)\.(\w+)$", expr)
            if m:  # a field of a local struct: its type's declaration in a header
                owner = None
                for scope in scopes + (self.model_h,):
                    owner = owner or find_decl(scope, m.group(1))
                require(owner, "no declaration for %r" % m.group(1))
                struct = owner.split("::")[-1]
                for h in self.headers:
                    fields = function_body(h, r"struct\s+" + re.escape(struct) + r"\s*\{")
                    t = find_decl(fields, m.group(2)) if fields is not None else None
                    if t:
                        return t
                raise GenError("no field %r in struct %s" % (m.group(2), struct))
            require(re.match(r"^\w+$", expr), "cannot resolve destination %r" % expr)
            for scope in scopes + (self.model_h,):
                t = find_decl(scope, expr)
                if t:
                    return t
            raise GenError("no declaration for %r" % expr)
        return resolve


# ---------------------------------------------------------------------------
# The loader semantics the reads are translated with. Each fingerprint is a
# snippet (whitespace-normalised) that must still be in the loader source.

LOADER_FINGERPRINTS = [
    ("src/llama-model-loader.cpp", "if (kt != GKV::gt) { throw std::runtime_error(format(\"key %s has wrong type %s but expected type %s\"",
     "get_key is exact-type"),
    ("src/llama-model-loader.cpp", "bool llama_model_loader::get_arr(const std::string & key, std::vector<T> & result, bool required) { "
     "const gguf_context * ctx = metadata; const int kid = gguf_find_key(ctx, key.c_str()); if (kid < 0 || gguf_get_kv_type(ctx, kid) != GGUF_TYPE_ARRAY) { "
     "if (required) { throw std::runtime_error(format(\"array key not found in model: %s\", key.c_str())); } return false; } "
     "struct GGUFMeta::ArrayInfo arr_info = GGUFMeta::GKV<GGUFMeta::ArrayInfo>::get_kv(ctx, kid); bool type_ok = false; switch (arr_info.gt) { "
     "case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: type_ok = (std::is_same<T, int32_t>::value) || (std::is_same<T, uint32_t>::value); break; "
     "case GGUF_TYPE_FLOAT32: type_ok = (std::is_same<T, float>::value); break; case GGUF_TYPE_STRING: type_ok = (std::is_same<T, std::string>::value); break; "
     "default: throw std::runtime_error(format(\"%s is not a string/float32/uint32/int32 array\", key.c_str())); } "
     "if (!type_ok) { throw std::runtime_error(",
     "get_arr into a vector: u32/i32 into integers, f32 into float, string into string, anything else refused"),
    ("src/llama-model-loader.cpp", "bool llama_model_loader::get_arr(const std::string & key, std::array<T, N_MAX> & result, bool required) { "
     "const gguf_context * ctx = metadata; const int kid = gguf_find_key(ctx, key.c_str()); if (kid < 0 || gguf_get_kv_type(ctx, kid) != GGUF_TYPE_ARRAY) { "
     "if (required) { throw std::runtime_error(format(\"array key not found in model: %s\", key.c_str())); } return false; } "
     "struct GGUFMeta::ArrayInfo arr_info = GGUFMeta::GKV<GGUFMeta::ArrayInfo>::get_kv(ctx, kid); bool type_ok = false; switch (arr_info.gt) { "
     "case GGUF_TYPE_BOOL: case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: type_ok = (std::is_same<T, int32_t>::value) || (std::is_same<T, uint32_t>::value); break; "
     "case GGUF_TYPE_FLOAT32: type_ok = (std::is_same<T, float>::value); break; case GGUF_TYPE_STRING: type_ok = (std::is_same<T, std::string>::value); break; "
     "default: throw std::runtime_error(format(\"%s is not a string/float32/uint32/int32 array\", key.c_str())); } "
     "if (!type_ok) { throw std::runtime_error(",
     "get_arr into an array: bool/u32/i32 into integers, f32 into float, string into string, anything else refused"),
    ("src/llama-model-loader.cpp", "if (n != arr_info.length) { throw std::runtime_error(format(\"key %s has wrong array length; expected %u, got %u\"",
     "get_key_or_arr demands exactly n elements"),
    ("src/llama-model-loader.cpp", "bool llama_model_loader::get_key(enum llm_kv kid, enum llama_pooling_type & result, bool required) { uint32_t tmp;",
     "pooling_type is read as u32"),
    ("src/llama-model.cpp", "throw std::runtime_error(\"unknown model architecture: '\" + ml.get_arch_name() + \"'\");",
     "an unknown architecture is refused"),
    ("src/llama-hparams.cpp", "uint32_t llama_hparams::n_layer() const { return n_layer_all - n_layer_nextn; }",
     "n_layer() is block_count minus nextn_predict_layers"),
]


def check_fingerprints(tree):
    for rel, snippet, what in LOADER_FINGERPRINTS:
        require(norm_ws(snippet) in norm_ws(read(tree, rel)), "%s changed: no longer sure that %s" % (rel, what))


# Keys llama.cpp reads with the raw gguf API rather than get_key: the type it
# demands (or silently assumes), each proven by a snippet of the source.
DIRECT_READS = [
    ("tokenizer.ggml.tokens", set(), {STR}, "src/llama-vocab.cpp",
     "std::string word = gguf_get_arr_str(ctx, token_idx, i);"),  # gguf_get_arr_str asserts a string array
    ("tokenizer.ggml.scores", set(), {F32}, "src/llama-vocab.cpp",
     "scores = (const float * ) gguf_get_arr_data(ctx, score_idx);"),  # read as floats unchecked
    ("tokenizer.ggml.token_type", set(), {I32}, "src/llama-vocab.cpp",
     "toktypes = (const int * ) gguf_get_arr_data(ctx, toktype_idx);"),  # read as int32 unchecked
    ("tokenizer.ggml.merges", set(), {STR}, "src/llama-vocab.cpp",
     "const std::string word = gguf_get_arr_str(ctx, merges_keyidx, i);"),
    ("tokenizer.ggml.precompiled_charsmap", set(), {U8, I8}, "src/llama-vocab.cpp",
     "if (pc_type != GGUF_TYPE_INT8 && pc_type != GGUF_TYPE_UINT8) { throw std::runtime_error("),
    ("adapter.type", {STR}, set(), "src/llama-adapter.cpp", "auto adapter_type = get_kv_str(llm_kv(LLM_KV_ADAPTER_TYPE));"),
    ("adapter.lora.alpha", {F32}, set(), "src/llama-adapter.cpp", "adapter.alpha = get_kv_f32(llm_kv(LLM_KV_ADAPTER_LORA_ALPHA));"),
    ("adapter.alora.invocation_tokens", set(), {U32}, "src/llama-adapter.cpp",
     "if (arr_type != GGUF_TYPE_UINT32) {"),
    ("general.type", {STR}, set(), "src/llama-adapter.cpp", "auto general_type = get_kv_str(llm_kv(LLM_KV_GENERAL_TYPE));"),
    ("general.architecture", {STR}, set(), "src/llama-model-loader.cpp",
     "get_key(llm_kv(LLM_KV_GENERAL_ARCHITECTURE), arch_name, false);"),
    ("split.count", {U16}, set(), "src/llama-model-loader.cpp", "get_key(llm_kv(LLM_KV_SPLIT_COUNT), n_split, false);"),
    ("split.no", {U16}, set(), "src/llama-quant.cpp",
     "gguf_set_val_u16(ctx_outs[i].get(), ml.llm_kv(LLM_KV_SPLIT_NO).c_str(), i);"),
    ("split.tensors.count", {I32}, set(), "src/llama-quant.cpp",
     "gguf_set_val_i32(ctx_outs[i].get(), ml.llm_kv(LLM_KV_SPLIT_TENSORS_COUNT).c_str(), (int32_t)tensors.size());"),
]

# Keys whose written type has changed across llama.cpp versions, so that old
# files written by the tools of their day must still be accepted.
HISTORICAL_TYPES = {
    # llama-quantize stores these through integer overrides; the width changed.
    "quantize.imatrix.chunks_count": (ANY_INT, set()),
    "quantize.imatrix.entries_count": (ANY_INT, set()),
    "quantize.imatrix.file": ({STR}, set()),
    "quantize.imatrix.dataset": ({STR}, set()),
}


# ---------------------------------------------------------------------------

class KeyTypes:
    """Accepted (scalar types, element types, array length) per key template."""

    def __init__(self):
        self.t = {}

    def add(self, key, scalar, elements, length=None):
        s, e, l = self.t.get(key, (set(), set(), None))
        s = s | set(scalar)
        e = e | set(elements)
        if length == PER_LAYER_MINUS_NEXTN:
            # this table serves architectures that do not read the key (their
            # own read list decides the length for those that do): any
            # per-layer read makes it a per-layer array here
            length = PER_LAYER
        if length is not None:
            require(l in (None, length), "%s: lengths %s and %s" % (key, l, length))
            l = length
        self.t[key] = (s, e, l)


def parse_arch_cpp(tree):
    src = strip_comments(read(tree, "src/llama-arch.cpp"))
    names_body = function_body(src, r"LLM_ARCH_NAMES\s*=\s*\{")
    arch_names = dict(re.findall(r"\{\s*(LLM_ARCH_\w+)\s*,\s*\"([^\"]*)\"\s*\}", names_body))
    arch_names.pop("LLM_ARCH_UNKNOWN", None)
    kv_body = function_body(src, r"LLM_KV_NAMES\s*=\s*\{")
    kv_names = dict(re.findall(r"\{\s*(LLM_KV_\w+)\s*,\s*\"([^\"]*)\"\s*\}", kv_body))

    def arch_set(fn):
        body = function_body(src, r"bool\s+" + fn + r"\s*\(const llm_arch & arch\)\s*\{")
        require(body is not None, "%s not found" % fn)
        return set(re.findall(r"case\s+(LLM_ARCH_\w+)\s*:", body))
    return arch_names, kv_names, arch_set("llm_arch_is_recurrent"), arch_set("llm_arch_is_hybrid")


def template_of(kv_name):
    """'%s.context_length' -> ('arch', 'context_length'); 'general.name' -> ('full', ...)."""
    if kv_name.startswith("%s."):
        return kv_name[3:]
    require("%" not in kv_name, "unexpected format in key name %r" % kv_name)
    return "=" + kv_name


def py_template(name):
    """gguf-py's '{arch}.x' -> 'x', 'general.y' -> '=general.y'; None with other placeholders."""
    if name.startswith("{arch}."):
        rest = name[len("{arch}."):]
        return None if "{" in rest else rest
    if "{" in name:
        return None
    return "=" + name


def generate(tree, commit):
    check_fingerprints(tree)
    types = Types(tree)
    arch_names, kv_names, recurrent, hybrid = parse_arch_cpp(tree)

    def key_of(kv, where):
        require(kv in kv_names, "%s: %s is not in LLM_KV_NAMES" % (where, kv))
        return template_of(kv_names[kv])

    model_cpp = strip_comments(read(tree, "src/llama-model.cpp"))
    mapping = function_body(model_cpp, r"static llama_model \* llama_model_mapping\(")
    arch_class = dict((a, c) for a, c in re.findall(r"case\s+(LLM_ARCH_\w+)\s*:\s*return\s+new\s+(\w+)\s*\(", mapping))
    require(arch_class, "llama_model_mapping has no cases")
    # Since 2026-08 the mapping builds a llama_model_clip too, a stub that
    # lets llama-quantize open a projector; load_hparams returns before any
    # hyperparameter for it. A clip file is still another kind of file,
    # read by tools/mtmd (its keys are below), not a model.
    arch_class.pop("LLM_ARCH_CLIP", None)

    models_h = strip_comments(read(tree, "src/models/models.h"))
    parent = dict(re.findall(r"struct\s+(llama_model_\w+)\s*:\s*public\s+(llama_model_\w+)", models_h))
    model_srcs = {}
    models_dir = os.path.join(tree, "src/models")
    for fn in sorted(os.listdir(models_dir)):
        if fn.endswith(".cpp"):
            model_srcs[fn] = strip_comments(read(tree, "src/models/" + fn))

    def method(cls, name):
        """(file, body) of cls::name, following inheritance; None if absent."""
        c = cls
        while c and c != "llama_model_base":
            for fn, src in model_srcs.items():
                body = function_body(src, r"\b" + c + r"::" + name + r"\s*\([^)]*\)\s*(?:const\s*)?\{")
                if body is not None:
                    return fn, body
            c = parent.get(c)
        return None

    # The common part of load_hparams, run for every architecture.
    base_body = function_body(model_cpp, r"void llama_model_base::load_hparams\(llama_model_loader & ml\)\s*\{")
    require(base_body is not None, "llama_model_base::load_hparams not found")
    base_reads = scan_reads(base_body, types.resolver(base_body, model_cpp), "llama-model.cpp load_hparams")

    # Archs whose model keeps no memory at all (encoders, diffusion, codecs).
    mem_body = function_body(model_cpp, r"llama_memory_i \* llama_model::create_memory\(")
    m = re.search(r"((?:case\s+LLM_ARCH_\w+\s*:\s*)+)\{\s*res\s*=\s*nullptr;", mem_body)
    require(m, "create_memory: the no-memory case list not found")
    no_memory = set(re.findall(r"LLM_ARCH_\w+", m.group(1)))

    loader_keys = KeyTypes()   # union over every read anywhere: for archs that do not read a key
    arch_reads = {}            # arch enum -> {template: [scalar, elements, length, required]}
    common_reads = {}          # template -> [...] for reads every arch runs
    notes = {}

    def merge(table, key, r, required):
        cur = table.get(key)
        if cur is None:
            table[key] = [set(r.scalar), set(r.elements), r.length, required]
        else:
            # every read of the key runs in turn, and each throws on a type it
            # does not accept: a value must satisfy all of them
            s, e = cur[0] & r.scalar, cur[1] & r.elements
            if s or e:
                cur[0], cur[1] = s, e
            else:  # disjoint reads on different paths: either can be the one that runs
                cur[0] |= r.scalar
                cur[1] |= r.elements
            if r.length is not None:
                cur[2] = r.length
            cur[3] = cur[3] or required

    for r in base_reads:
        if r.length_only:
            continue
        key = key_of(r.kv, r.where)
        loader_keys.add(key, r.scalar, r.elements, r.length)
        # archs an earlier `return` left before this read (clip, which
        # llama_model_mapping does not build anyway)
        skipped = r.excluded & set(arch_class)
        if r.always and r.only_archs is None and not skipped:
            merge(common_reads, key, r, r.required)
        elif r.always:
            runs_for = r.only_archs if r.only_archs is not None else set(arch_class)
            for a in runs_for - skipped:
                merge(arch_reads.setdefault(a, {}), key, r, r.required)
        else:
            merge(common_reads, key, r, False)

    shapes = {}
    nextn_below = set()  # arch enums whose load_arch_hparams asserts nextn < block_count
    nextn_equal = set()  # ... nextn == block_count (an assistant model made of next-N layers only)
    asserts = set()      # (arch enum, key, op, number)
    for arch, cls in arch_class.items():
        found = method(cls, "load_arch_hparams")
        require(found, "%s (%s) has no load_arch_hparams" % (arch, cls))
        fn, body = found
        src = model_srcs[fn]
        members = []  # the class's own fields (and its bases'), read into like hparams
        c = cls
        while c and c != "llama_model_base":
            fields = function_body(models_h, r"struct\s+" + c + r"\s*(?::[^{;]*)?\{")
            if fields is not None:
                members.append(fields)
            c = parent.get(c)
        reads = scan_reads(body, types.resolver(body, src, *members, model_cpp), "src/models/%s %s" % (fn, cls))
        # GG9052: most architectures that read nextn_predict_layers assert it
        # is below block_count, right after reading it
        if NEXTN_BELOW_ASSERT in norm_ws(body):
            nextn_below.add(arch)
        if NEXTN_EQUAL_ASSERT in norm_ws(body):
            nextn_equal.add(arch)
        # GG9059: the simple asserts on a hyperparameter this function read
        dest_key = {}
        for r in reads:
            m = re.match(r"^hparams\.(\w+)$", r.dest or "")
            if m and not r.length_only:
                dest_key.setdefault(m.group(1), key_of(r.kv, r.where))
        # Every top-level GGML_ASSERT (one under a condition does not run for
        # every file; dflash's are GG9059's, by hand) is taken, or listed with
        # the check that covers it, or the refresh stops.
        for m in re.finditer(r"GGML_ASSERT\(", body):
            before = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', body[:m.start()])
            if before.count("{") != before.count("}"):
                continue
            stmt = norm_ws(body[m.start():body.index(";", m.start()) + 1])
            if NEXTN_BELOW_ASSERT in stmt or NEXTN_EQUAL_ASSERT in stmt or (fn, stmt) in OTHER_TOP_LEVEL_ASSERTS:
                continue
            simple = SIMPLE_ASSERT.match(body, m.start())
            require(simple and simple.group(1) in dest_key,
                    "src/models/%s: a top-level assert no rule covers: %s" % (fn, stmt))
            field, op, number = simple.group(1), simple.group(2), simple.group(3)
            asserts.add((arch, dest_key[field], ASSERT_OPS[op], float(number) if number else 0.0))
        table = arch_reads.setdefault(arch, {})
        for r in reads:
            if r.length_only:
                continue
            key = key_of(r.kv, r.where)
            loader_keys.add(key, r.scalar, r.elements, r.length)
            merge(table, key, r, r.required and r.always and (r.only_archs is None or arch in r.only_archs))
        # token_embd/output shapes: only when every creation of the tensor in
        # this arch is {n_embd, n_vocab} with LLAMA_LOAD_LOCALS' n_embd.
        tf = method(cls, "load_arch_tensors")
        shape = {"token_embd": False, "output": False, "attention": False}
        if tf:
            tbody = tf[1]
            # attention projections among its tensors
            shape["attention"] = bool(re.search(r"\bLLM_TENSOR_(?:ENC_|DEC_)?ATTN_(?:Q|QKV|OUT)\b|create_tensor_qkv\(", tbody))
            shadows = re.search(r"\b(?:int64_t|int|auto|uint32_t)\s+n_embd\s*=", tbody) or \
                re.search(r"\b(?:int64_t|int|auto|uint32_t)\s+n_vocab\s*=", tbody)
            uses_locals = "LLAMA_LOAD_LOCALS" in tbody
            for tensor, enum in (("token_embd", "LLM_TENSOR_TOKEN_EMBD"), ("output", "LLM_TENSOR_OUTPUT")):
                dims = re.findall(r"tn\(\s*" + enum + r"\s*,\s*\"weight\"\s*\)\s*,\s*\{([^}]*)\}", tbody)
                ok = [norm_ws(d).replace(" ", "") in ("n_embd,n_vocab", "hparams.n_embd,n_vocab") for d in dims]
                shape[tensor] = bool(dims) and all(ok) and uses_locals and not shadows
        shapes[arch] = shape

    # The vocabulary loader: every arch runs it.
    vocab = strip_comments(read(tree, "src/llama-vocab.cpp"))
    load_body = function_body(vocab, r"void llama_vocab::impl::load\(llama_model_loader & ml, const LLM_KV & kv\)\s*\{")
    require(load_body is not None, "llama_vocab::impl::load not found")
    vocab_reads = scan_reads(load_body, types.resolver(load_body, vocab), "llama-vocab.cpp load")
    full_keys = KeyTypes()
    special = re.search(r"special_token_types\s*=\s*\{(.*?)\};", load_body, re.S)
    require(special and "uint32_t new_id;" in load_body and "ml.get_key(std::get<0>(it), new_id, false)" in load_body,
            "llama-vocab.cpp: special token ids are no longer read as uint32_t")
    for kv in re.findall(r"\{\s*(LLM_KV_TOKENIZER_\w+)\s*,", special.group(1)):
        full_keys.add(key_of(kv, "special tokens"), {U32}, set())
    # A model's load and a vocabulary-only one both run it, so a key it
    # requires on every path (tokenizer.ggml.model) is required of every
    # architecture, whole name and all, like load_hparams' general.name read.
    for r in vocab_reads:
        if r.kv.startswith("std::get") or r.length_only:
            continue
        key = key_of(r.kv, r.where)
        required = r.required and r.always and r.only_archs is None
        if key.startswith("="):
            full_keys.add(key, r.scalar, r.elements, r.length)
            if required:
                merge(common_reads, key, r, True)
        else:
            loader_keys.add(key, r.scalar, r.elements, r.length)
            merge(common_reads, key, r, required)
    for name, scalar, elements, rel, snippet in DIRECT_READS:
        require(norm_ws(snippet) in norm_ws(read(tree, rel)), "%s: no longer reads %s as assumed" % (rel, name))
        full_keys.add("=" + name, scalar, elements)

    # What llama.cpp's own saver writes, so that its files pass for archs whose
    # loader does not read the key.
    saver = strip_comments(read(tree, "src/llama-model-saver.cpp"))
    saver_keys = KeyTypes()
    for kv, expr in re.findall(r"\badd_kv\(\s*(LLM_KV_\w+)\s*,\s*([^;]*)\);", saver):
        expr = split_args(expr)[0]
        m = re.match(r"^hparams\.(\w+)$", expr)
        cm = re.match(r"^(uint32_t|int32_t|float|bool)\(", expr)
        if m:
            t = find_decl(types.hparams, m.group(1)) or ""
            am = re.match(r"^std::array<\s*([\w:]+)", t)
            t = am.group(1) if am else t
            if t in SCALAR_OF_CTYPE:
                saver_keys.add(key_of(kv, "saver"), {SCALAR_OF_CTYPE[t]}, {SCALAR_OF_CTYPE[t]} if am else set())
        elif cm:
            saver_keys.add(key_of(kv, "saver"), {SCALAR_OF_CTYPE[cm.group(1)]}, set())

    # gguf-py: key names (constants.py) and the types its writer uses.
    consts = read(tree, "gguf-py/gguf/constants.py")
    keys_cls = consts[consts.index("class Keys:"):]
    keys_cls = keys_cls[:re.search(r"^\S", keys_cls[len("class Keys:"):], re.M).start() + len("class Keys:")]
    py_names = {}
    cls = None
    for line in keys_cls.splitlines():
        m = re.match(r"^    class (\w+)\b", line)
        if m:
            cls = m.group(1)
            continue
        m = re.match(r"^        (\w+)\s*=\s*\"([^\"]+)\"", line)
        if m and cls:
            py_names["Keys.%s.%s" % (cls, m.group(1))] = m.group(2)
    writer = read(tree, "gguf-py/gguf/gguf_writer.py")
    py_types = KeyTypes()
    pytype = {"uint8": U8, "int8": I8, "uint16": U16, "int16": I16, "uint32": U32, "int32": I32,
              "float32": F32, "uint64": U64, "int64": I64, "float64": F64, "bool": BOOL, "string": STR}
    # Each writer method: its parameter annotations, then its add_* calls.
    methods = re.split(r"\n    def ", writer)
    for method in methods:
        header = method.split(":\n", 1)[0]
        for method_name, ref in re.findall(r"self\.add_(\w+)\(\s*(Keys\.\w+\.\w+)", method):
            if ref not in py_names:
                continue
            key = py_template(py_names[ref]) or py_names[ref]
            if method_name == "array":
                # gguf-py picks the element type from the values; only a
                # parameter typed as a sequence of str fixes it (strings)
                strings = re.search(r":\s*(?:Sequence|list|Iterable)\[str\]", header)
                py_types.add(key, set(), {STR} if strings else ALL_SCALARS)
            elif method_name in pytype:
                py_types.add(key, {pytype[method_name]}, set())

    # clip.* keys of multimodal projectors (read by tools/mtmd/clip.cpp).
    clip_h = strip_comments(read(tree, "tools/mtmd/clip-impl.h"))
    clip_cpp = strip_comments(read(tree, "tools/mtmd/clip.cpp"))
    clip_defs = dict(re.findall(r"#define\s+(KEY_\w+)\s+\"([^\"]+)\"", clip_h))
    clip_keys = KeyTypes()
    helper_types = {"u32": ({U32}, set()), "i32": ({I32}, set()), "f32": ({F32}, set()), "bool": ({BOOL}, set()),
                    "string": ({STR}, set()), "arr_int": (set(), {I32, U32})}
    for helper in helper_types:
        require(re.search(r"void get_" + helper + r"\(const std::string & key", clip_cpp),
                "clip.cpp: helper get_%s changed" % helper)
    # gguf_get_val_u32 asserts the type; since 2026-08 the value is also
    # refused above INT32_MAX (not modelled: no clip size is near it)
    require("output = gguf_get_val_u32(ctx_gguf.get(), i);" in clip_cpp or
            "const uint32_t val = gguf_get_val_u32(ctx_gguf.get(), i);" in clip_cpp, "clip.cpp: get_u32 no longer exact")
    for helper, key in re.findall(r"\bget_(u32|i32|f32|bool|string|arr_int)\(\s*(?:string_format\(\s*)?(KEY_\w+)", clip_cpp):
        name = clip_defs.get(key)
        if name is None or not name.startswith("clip."):
            continue
        for prefix in (["vision", "audio"] if "%s" in name else [None]):
            clip_keys.add("=" + (name % prefix if prefix else name), *helper_types[helper])
    for name in clip_defs.values():
        if name.startswith("clip."):
            for prefix in (["vision", "audio"] if "%s" in name else [None]):
                clip_keys.add("=" + (name % prefix if prefix else name), set(), set())

    # imatrix.* keys (tools/imatrix writes them; llama-quantize reads them).
    imatrix = strip_comments(read(tree, "tools/imatrix/imatrix.cpp"))
    # the names: in imatrix.cpp, or since 2026-08 in common/imatrix-loader.h
    names_src = imatrix
    if os.path.exists(os.path.join(tree, "common/imatrix-loader.h")):
        names_src += strip_comments(read(tree, "common/imatrix-loader.h"))
    imatrix_names = dict(re.findall(r"(LLM_KV_IMATRIX_\w+)\s*=\s*\"([^\"]+)\"", names_src))
    imatrix_keys = KeyTypes()
    for fn, var in re.findall(r"gguf_set_(val_u32|val_str|arr_str)\(\s*\w+\s*,\s*(LLM_KV_IMATRIX_\w+)", imatrix):
        t = {"val_u32": ({U32}, set()), "val_str": ({STR}, set()), "arr_str": (set(), {STR})}[fn]
        imatrix_keys.add("=" + imatrix_names[var], *t)
    require(imatrix_keys.t, "imatrix.cpp: no keys found")

    # quantize.imatrix.* (tools/quantize records the importance matrix used).
    quantize = strip_comments(read(tree, "tools/quantize/quantize.cpp"))
    quantize_names = re.findall(r"LLM_KV_QUANTIZE_\w+\s*=\s*\"(quantize\.[^\"]+)\"", quantize)
    require(set(quantize_names) == set(HISTORICAL_TYPES), "tools/quantize: quantize.* keys changed: %s" % quantize_names)

    # Control vectors (tools/cvector-generator): their own "architecture".
    cvec = strip_comments(read(tree, "tools/cvector-generator/cvector-generator.cpp"))
    m = re.search(r"const std::string arch = \"(\w+)\";", cvec)
    require(m, "cvector-generator.cpp: the control-vector architecture name not found")
    cvec_arch = m.group(1)
    cvec_types = {"str": STR, "i32": I32, "u32": U32, "f32": F32}
    cvec_keys = KeyTypes()
    for fn, suffix in re.findall(r"gguf_set_val_(str|i32|u32|f32)\(\s*ctx\s*,\s*\(arch \+ \"\.(\w+)\"\)", cvec):
        cvec_keys.add("=%s.%s" % (cvec_arch, suffix), {cvec_types[fn]}, set())
    require(cvec_keys.t, "cvector-generator.cpp: no control-vector keys found")

    # ---- assemble ------------------------------------------------------------

    # Architecture key suffixes: every %s. name, plus gguf-py's {arch}. names.
    suffixes = {}
    for kv, name in kv_names.items():
        key = template_of(name)
        if not key.startswith("="):
            suffixes[key] = [set(), set(), None]
    for name in py_names.values():
        key = py_template(name)
        if key and not key.startswith("="):
            suffixes.setdefault(key, [set(), set(), None])
    for key, entry in suffixes.items():
        # What some loader branch reads it as, plus what llama.cpp's saver
        # writes; gguf-py's writer decides only keys no loader reads (its
        # add_array element types depend on the caller's values).
        sources = (loader_keys, saver_keys) if key in loader_keys.t else (saver_keys, py_types)
        for src in sources:
            if key in src.t:
                s, e, l = src.t[key]
                entry[0] |= s
                entry[1] |= e
                if src is loader_keys and l is not None:
                    entry[2] = l

    full = {}
    for kv, name in kv_names.items():
        key = template_of(name)
        if key.startswith("="):
            full[key] = [set(), set(), None]
    for name in py_names.values():
        key = py_template(name)
        if key and key.startswith("="):
            full.setdefault(key, [set(), set(), None])
    for src in (clip_keys, imatrix_keys, cvec_keys):
        for key in src.t:
            full.setdefault(key, [set(), set(), None])
    for name in quantize_names:
        full.setdefault("=" + name, [set(), set(), None])
    for key, entry in full.items():
        name = key[1:]
        if name in HISTORICAL_TYPES:
            entry[0], entry[1] = set(HISTORICAL_TYPES[name][0]), set(HISTORICAL_TYPES[name][1])
            continue
        if name.startswith("general.sampling."):
            # recommended sampler settings: read back as text by
            # llama_model_meta_val_str, and gguf-py's types for them changed
            entry[0], entry[1] = set(ALL_SCALARS), set()
            continue
        # the loader's own reads decide; gguf-py's writer only where no loader reads
        for group in ((full_keys, loader_keys, clip_keys, imatrix_keys, cvec_keys), (saver_keys,), (py_types,)):
            got = False
            for src in group:
                if key in src.t:
                    s, e, l = src.t[key]
                    if s or e:
                        entry[0] |= s
                        entry[1] |= e
                        got = True
                    if l is not None:
                        entry[2] = l
            if got:
                break

    # Per-layer float arrays read by full name (xielu.*) also live in arch reads.
    # Patterns: gguf-py names with {id}/{name} placeholders outside {arch}.
    patterns = {}
    for ref, name in py_names.items():
        if name.startswith("{arch}.") or "{" not in name:
            continue
        pat = re.sub(r"\{id\}", "{n}", name)
        pat = re.sub(r"\{name\}$", "{*}", pat)
        if "{" in pat.replace("{n}", "").replace("{*}", ""):
            continue
        s, e, _ = py_types.t.get(name, (set(), set(), None))
        if not s and not e:
            s = set(ALL_SCALARS)
        patterns[pat] = [set(s), set(e), None]

    # Names of other kinds of file llama.cpp reads with other code: clip
    # projectors (libmtmd; LLM_ARCH_CLIP exists only for llama-quantize) and
    # control vectors.
    require(arch_names.get("LLM_ARCH_CLIP") == "clip" and clip_defs, "clip is no longer an mtmd projector")
    other_kinds = {"clip", cvec_arch}
    archs = []
    for enum, name in arch_names.items():
        loadable = enum in arch_class
        if not loadable:
            memory = "kNone"
        elif enum in recurrent:
            memory = "kRecurrent"
        elif enum in hybrid:
            memory = "kHybrid"
        elif enum in no_memory:
            memory = "kNone"
        else:
            memory = "kKvCache"
        # The arch's own reads; a key the common part reads too gets what
        # both accept (the common reads are emitted once, for every arch).
        reads = {}
        if loadable:
            for key, v in arch_reads.get(enum, {}).items():
                reads[key] = [set(v[0]), set(v[1]), v[2], v[3]]
                if key in common_reads:
                    c = common_reads[key]
                    cur = reads[key]
                    s, e = cur[0] & c[0], cur[1] & c[1]
                    cur[0], cur[1] = (s, e) if (s or e) else (cur[0] | c[0], cur[1] | c[1])
                    cur[2] = cur[2] if cur[2] is not None else c[2]
                    cur[3] = cur[3] or c[3]
            # A KV-cache model's tensors and cache are shaped by n_head: the
            # loader takes 0 when head_count is absent, and the file then fails
            # on tensor shapes. Demand it as llama.cpp effectively does.
            if memory == "kKvCache" and "attention.head_count" not in reads:
                c = common_reads["attention.head_count"]
                reads["attention.head_count"] = [set(c[0]), set(c[1]), c[2], True]
        # wavtokenizer-dec: the common part reads hparams.n_embd from features_length
        n_embd_key = "embedding_length"
        for r in base_reads:
            if r.only_archs and enum in r.only_archs and norm_ws(r.kv) == "LLM_KV_FEATURES_LENGTH":
                n_embd_key = "features_length"
        kind = "kModel" if loadable else ("kOtherFile" if name in other_kinds else "kNameOnly")
        archs.append({"enum": enum, "name": name, "kind": kind, "memory": memory,
                      "reads": reads, "shape": shapes.get(enum, {"token_embd": False, "output": False, "attention": False}),
                      "n_embd_key": n_embd_key, "nextn_below": enum in nextn_below,
                      "nextn_equal": enum in nextn_equal,
                      "asserts": sorted((k, op, n) for a, k, op, n in asserts if a == enum)})
    archs.append({"enum": None, "name": cvec_arch, "kind": "kOtherFile", "memory": "kNone", "reads": {},
                  "shape": {"token_embd": False, "output": False, "attention": False},
                  "n_embd_key": "embedding_length", "nextn_below": False, "nextn_equal": False, "asserts": []})
    require(nextn_below, "no architecture asserts %r any more" % NEXTN_BELOW_ASSERT)
    archs.sort(key=lambda a: a["name"].encode())
    hparams_h = strip_comments(read(tree, "src/llama-hparams.h"))
    limits = {}
    for name in ("LLAMA_MAX_LAYERS", "LLAMA_MAX_EXPERTS"):
        m = re.search(r"#define\s+" + name + r"\s+(\d+)", hparams_h)
        require(m, "src/llama-hparams.h: no #define %s" % name)
        limits[name] = int(m.group(1))
    return emit(commit, archs, common_reads, suffixes, full, patterns, limits)


# ---------------------------------------------------------------------------
# Output

def typeset(types):
    if not types:
        return "0"
    if frozenset(types) == ALL_SCALARS:
        return "kAnyScalar"
    if frozenset(types) == ANY_INT:
        return "kAnyInt"
    order = [U8, I8, U16, I16, U32, I32, F32, BOOL, STR, U64, I64, F64]
    return " | ".join(CPP_BIT[t] for t in order if t in types)


def types_expr(scalar, elements):
    """The two TypeSets; a key no source gives a type for is left unchecked."""
    if not scalar and not elements:
        return "kAnyScalar, kAnyScalar"
    return "%s, %s" % (typeset(scalar), typeset(elements))


def length_expr(length):
    if length is None:
        return "kAnyLength"
    if length == PER_LAYER:
        return "kPerLayerLength"
    if length == PER_LAYER_MINUS_NEXTN:
        return "kPerLayerMinusNextnLength"
    return str(length)


def cpp_str(s):
    require(re.match(r"^[\x20-\x7e]*$", s) and '"' not in s and "\\" not in s, "odd name %r" % s)
    return '"%s"' % s


def key_row(name, entry):
    """One KnownKey initialiser from [scalar, elements, length(, required)]."""
    required = len(entry) > 3 and entry[3]
    return "    {%s, %s, %s, %s}," % (cpp_str(name), types_expr(entry[0], entry[1]), length_expr(entry[2]),
                                     "true" if required else "false")


def emit(commit, archs, common_reads, suffixes, full, patterns, limits):
    out = []
    w = out.append

    def table(name, comment, rows):
        w("")
        out.extend("// " + line for line in comment)
        w("inline constexpr KnownKey %s[] = {" % name)
        out.extend(rows)
        w("};")

    w("// GENERATED by scripts/gen_llama_tables.py from llama.cpp %s. Do not edit:" % commit)
    w("// rerun the script (docs/knowledge.md). Included by known_keys.cc only.")
    w("// clang-format off")
    w("")
    w("inline constexpr std::string_view kLlamaCppCommit = %s;" % cpp_str(commit))
    w("// src/llama-hparams.h's limits (known_keys.cc checks the rules use them).")
    w("inline constexpr uint32_t kGeneratedLlamaMaxLayers = %d;" % limits["LLAMA_MAX_LAYERS"])
    w("inline constexpr uint32_t kGeneratedLlamaMaxExperts = %d;" % limits["LLAMA_MAX_EXPERTS"])
    table("kGeneratedKeys",
          ["Whole key names: what llama.cpp's loader, vocabulary, adapter, clip and",
           "imatrix code read them as (else what llama.cpp's saver or gguf-py writes)."],
          [key_row(k[1:], full[k]) for k in sorted(full, key=lambda k: k[1:].encode())])
    table("kGeneratedPatternKeys",
          ["Families with a variable segment ({n}: digits, final {*}: the rest), from gguf-py."],
          [key_row(k, patterns[k]) for k in sorted(patterns, key=str.encode)])
    table("kGeneratedArchKeys",
          ["What follows \"{arch}.\": the union of the types every loader branch reads",
           "(and the saver and gguf-py write), for architectures that do not read it."],
          [key_row(k, suffixes[k]) for k in sorted(suffixes, key=str.encode)])
    table("kGeneratedCommonReads",
          ["Keys llama_model_base::load_hparams and the vocabulary loader read for every",
           "loadable architecture, sorted: \"{arch}.\" keys by suffix, whole names",
           "prefixed \"=\". required: read with a throwing get_key on every path."],
          [key_row(k, common_reads[k]) for k in sorted(common_reads, key=str.encode)])
    w("")
    w("// Per architecture, the keys its own load_arch_hparams (or an arch-only block")
    w("// of the common part) reads, sorted the same way; a key both read must")
    w("// satisfy both.")
    w("inline constexpr KnownKey kGeneratedArchReads[] = {")
    ranges = []
    pos = 0
    for a in archs:
        keys = sorted(a["reads"], key=lambda k: k.encode())
        ranges.append((pos, len(keys)))
        if keys:
            w("    // %s" % a["name"])
        for key in keys:
            w(key_row(key, a["reads"][key]))
        pos += len(keys)
    w("};")
    w("")
    w("// Every name in LLM_ARCH_NAMES and the control-vector name, sorted. kModel:")
    w("// llama_model_mapping builds a model for it; kOtherFile: another kind of file")
    w("// (clip projector, control vector); kNameOnly: named, but no model is built.")
    w("inline constexpr ArchInfo kGeneratedArchs[] = {")
    for a, (first, count) in zip(archs, ranges):
        w("    {%s, ArchKind::%s, ArchMemory::%s, %s, %s, %s, %s, %d, %d}," % (
            cpp_str(a["name"]), a["kind"], a["memory"], "true" if a["shape"]["attention"] else "false",
            "true" if a["shape"]["token_embd"] else "false", "true" if a["shape"]["output"] else "false",
            cpp_str(a["n_embd_key"]), first, count))
    w("};")
    w("")
    w("// The architectures whose load_arch_hparams asserts")
    w("// %s (aborts on nextn_predict_layers >= block_count), sorted." % NEXTN_BELOW_ASSERT)
    w("inline constexpr std::string_view kGeneratedNextnBelowBlockCount[] = {")
    for a in archs:
        if a["nextn_below"]:
            w("    %s," % cpp_str(a["name"]))
    w("};")
    w("// ... and those that assert %s (an assistant model of" % NEXTN_EQUAL_ASSERT)
    w("// next-N layers only: any other value aborts, an absent key too), sorted.")
    w("inline constexpr std::string_view kGeneratedNextnEqualBlockCount[] = {")
    for a in archs:
        if a["nextn_equal"]:
            w("    %s," % cpp_str(a["name"]))
    w("};")
    w("")
    w("// GGML_ASSERT(hparams.F OP NUMBER) or GGML_ASSERT(hparams.F) in an")
    w("// architecture's load_arch_hparams, with F read from the key named")
    w("// (\"{arch}.\" suffix): a value that breaks it aborts the load. By arch, key.")
    w("inline constexpr ArchAssert kGeneratedArchAsserts[] = {")
    for a in archs:
        for key, op, number in a["asserts"]:
            w("    {%s, %s, AssertOp::%s, %r}," % (cpp_str(a["name"]), cpp_str(key), op, number))
    w("};")
    w("// clang-format on")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", help="llama.cpp source tree (a checkout, or the files listed above)")
    ap.add_argument("--commit", help="upstream commit of the tree (default: git rev-parse HEAD in it)")
    ap.add_argument("--out", help="output file (default: stdout)")
    args = ap.parse_args()
    commit = args.commit
    if not commit:
        try:
            commit = subprocess.run(["git", "-C", args.tree, "rev-parse", "HEAD"], check=True,
                                    capture_output=True, text=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            sys.exit("gen_llama_tables: not a git checkout; pass --commit SHA")
    if not re.match(r"^[0-9a-f]{7,40}$", commit):
        sys.exit("gen_llama_tables: --commit must be a hex commit id")
    try:
        text = generate(args.tree, commit)
    except (GenError, OSError) as e:
        sys.exit("gen_llama_tables: %s" % e)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
