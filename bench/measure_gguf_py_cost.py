#!/usr/bin/python3
"""How long gguf-py's GGUFReader (what vLLM and transformers read GGUF files with) takes per metadata key, per
array element and per tensor info: the measurement behind GG9213 vllm-parser-cost (docs/runtimes.md).

    /usr/bin/python3 bench/measure_gguf_py_cost.py GGUF_PY_TREE [--repeat 3]

GGUF_PY_TREE holds gguf/gguf_reader.py (and what it imports) from ggml-org/llama.cpp's gguf-py; it stays outside
the repository (docs/runtimes.md says how it was made). Needs numpy (Debian: python3-numpy). Writes headers of
growing size to a temporary directory: N u32 keys; one u32 array of N elements; one string array of N one-byte
strings; N one-element F32 tensors. Prints, per shape, seconds and microseconds per item for each N (the best of
--repeat runs), so that linearity can be read off: the per-item cost should not grow with N.
"""

import argparse
import os
import struct
import sys
import tempfile
import time


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def header(n_tensors, kvs):
    return struct.pack("<IIQQ", 0x46554747, 3, n_tensors, len(kvs)) + b"".join(kvs)


def u32_keys(n):
    return header(0, [gguf_string(f"k.{i}") + struct.pack("<II", 4, i) for i in range(n)])


def u32_array(n):
    return header(0, [gguf_string("a") + struct.pack("<IIQ", 9, 4, n) + struct.pack(f"<{n}I", *range(n))])


def string_array(n):
    body = b"".join(struct.pack("<Q", 1) + b"x" for _ in range(n))
    return header(0, [gguf_string("a") + struct.pack("<IIQ", 9, 8, n) + body])


def tensors(n):
    infos = b"".join(gguf_string(f"t.{i}") + struct.pack("<IQIQ", 1, 1, 0, 32 * i) for i in range(n))
    blob = header(n, []) + infos
    blob += b"\0" * (-len(blob) % 32)
    return blob + b"\0" * (32 * n)


SHAPES = {"u32 keys": u32_keys, "u32 array elements": u32_array, "string array elements": string_array,
          "tensor infos": tensors}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tree")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="10000,100000,400000")
    args = ap.parse_args()
    sys.path.insert(0, args.tree)
    from gguf.gguf_reader import GGUFReader  # noqa: E402 (the tree given on the command line)

    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for shape, make in SHAPES.items():
            for n in sizes:
                path = os.path.join(tmp, "h.gguf")
                with open(path, "wb") as f:
                    f.write(make(n))
                best = None
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    GGUFReader(path)
                    took = time.perf_counter() - start
                    best = took if best is None else min(best, took)
                print(f"{shape:24s} N={n:8d}  {best:8.3f} s  {best / n * 1e6:7.2f} us/item", flush=True)


if __name__ == "__main__":
    main()
