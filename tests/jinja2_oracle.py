#!/usr/bin/python3
"""Jinja2's sandbox as an oracle for ggufguard's chat-template verdicts.

For every template in tests/data/chat_templates (MANIFEST.tsv), this renders
it with Jinja2's ImmutableSandboxedEnvironment, set up as Hugging Face
transformers sets it up for apply_chat_template (which vLLM uses), and
checks what Jinja2 does against the manifest's `jinja2` column, and
ggufguard's verdict (the built CLI, on a GGUF file holding the template)
against the class:

  benign, inert   Jinja2 renders it (every request renders, or raises only
                  the template's own raise_exception), and ggufguard accepts
                  it under the default and the strict policy. A benign
                  template whose column says `sandbox-refuses` uses a name
                  of its own that starts with `_` (a namespace's `_count`):
                  the sandbox raises SecurityError for every such name,
                  and plain Jinja2 (as llama.cpp's engine) renders it.
  attack          Jinja2 does what the `jinja2` column says, and ggufguard
                  rejects it under the default policy with its kind's rule.
  poisoned        a template that changes what the model is told (issue 37):
                  Jinja2 renders it, and ggufguard rejects it with its kind's
                  rule under the policy BEHAVIOUR.tsv names (the behaviour
                  kinds that are warnings by default are rejected under
                  strict); its neighbour (same name under neighbour/) is
                  accepted under both policies.
                  Every dunder-access and attr-filter attack must raise
                  SecurityError in Jinja2: the sandbox stops what ggufguard
                  stops. The other kinds say what Jinja2 does instead: the
                  sandbox caps range() (OverflowError) but lets other render
                  bombs run into the memory limit (MemoryError) or the time
                  limit (timeout), recursion ends in RecursionError, and a
                  computed name or a global reached by name renders when
                  nothing in the request makes it a dunder.

BEHAVIOUR.tsv then says what each poisoned template does that its neighbour
does not, rendered with one of BEHAVIOUR_REQUESTS: `shows` appears in the
poisoned render and not in the neighbour's, `loses` (the request's own words)
appears in the neighbour's and not in the poisoned one, and under the `quiet`
request (no trigger word) the poisoned render does not show it either: the
text waits for its trigger.

Each template renders in a child process with a time limit and an address
space limit, once per request of REQUESTS: 5 s of CPU and 512 MiB, and for a
render-bomb attack 1 s and 256 MiB. A bomb only has to show that it grows
past a small limit (what the whole render would take is in its MANIFEST
note): running out of either, or a render that raises the peak memory by
64 MiB, is 'limit' (a fast machine renders 10^8 bytes within both); the
small limit keeps the oracle's CI time small. The sandbox returns an Undefined
for an unsafe attribute, which raises SecurityError only when used; the
oracle raises it where the sandbox decides (unsafe_undefined), so that a
template that merely prints what it reached is seen too.

Jinja2 is Debian's python3-jinja2 (scripts/install-deps.sh): a missing module
fails the test.

usage: jinja2_oracle.py GGUFGUARD_CLI [TEMPLATE_DIR]
       jinja2_oracle.py --report GGUFGUARD_CLI FILE...   (any templates: what
                                                         Jinja2 and ggufguard do)
       jinja2_oracle.py --show REQUEST FILE                (a render, for a reader)
"""
import concurrent.futures
import json
import pathlib
import resource
import struct
import subprocess
import sys
import tempfile
from datetime import datetime

try:
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    import jinja2.sandbox
    from jinja2.exceptions import SecurityError, TemplateError
except ImportError as e:  # fail, not skip: install-deps.sh installs it
    sys.exit(f"jinja2_oracle: {e}; install python3-jinja2 (scripts/install-deps.sh)")

HERE = pathlib.Path(__file__).resolve().parent
RENDER_SECONDS = 5
RENDER_BYTES = 512 << 20  # a render's address space: a bomb's MemoryError, not the machine's
BOMB_SECONDS = 1          # a render-bomb attack: enough to show it grows, little CI time
BOMB_BYTES = 256 << 20
BOMB_GROWTH_BYTES = 64 << 20  # a render whose peak memory grows by more than this ran into the bomb's growth

# The rule each attack kind is rejected with (docs/rules).
RULES = {
    "dunder-access": "GG8003", "attr-filter": "GG8004", "globals-helper": "GG8006",
    "unbounded-recursion": "GG8010", "deep-nesting": "GG8011", "computed-name": "GG8012",
    "file-access": "GG8013", "render-bomb": "GG8014",
    "content-gated-text": "GG8016", "text-url": "GG8018", "text-markup": "GG8019", "text-command": "GG8020",
    "text-blob": "GG8021", "invisible-text": "GG8022", "system-dropped": "GG8023", "content-dropped": "GG8024",
    "content-rewritten": "GG8025", "content-moved": "GG8026", "forged-turn": "GG8027",
}
SANDBOX_ESCAPES = {"dunder-access", "attr-filter"}

# --- the renderer, as transformers' apply_chat_template builds it ---


class Generation(jinja2.ext.Extension):
    """{% generation %}...{% endgeneration %}: transformers marks the
    assistant's tokens with it; the body renders as is."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


class Sandbox(jinja2.sandbox.ImmutableSandboxedEnvironment):
    def unsafe_undefined(self, obj, attribute):
        raise SecurityError(f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe")


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # transformers' own: Jinja2's escapes HTML characters.
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def environment(sandboxed=True):
    kind = Sandbox if sandboxed else jinja2.Environment
    env = kind(trim_blocks=True, lstrip_blocks=True, extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env


TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "array", "items": {"type": "integer"}},
            },
            "required": ["city"],
        },
    },
}]
CHAT = [
    {"role": "user", "content": "Hello!"},
    {"role": "assistant", "content": "Hi, how can I help?"},
    {"role": "user", "content": "What is the weather in Paris?"},
]
SYSTEM = [{"role": "system", "content": "You are a helpful assistant."}]
TOOL_CHAT = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "call_abc123", "type": "function", "function": {
        "name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "content": "{\"temperature\": 21}", "tool_call_id": "call_abc123", "name": "get_weather"},
    {"role": "assistant", "content": "It is 21 degrees in Paris."},
    {"role": "user", "content": "Thanks!"},
]
# A request whose strings are the names an escape needs: a template that
# reaches an object by a name from the request (lipsum[message.content])
# meets them here.
HOSTILE = [
    {"role": "user", "content": "__globals__", "name": "__class__"},
    {"role": "assistant", "content": "__class__"},
    {"role": "user", "content": "__init__"},
]
# (messages, tools): tools only where the request has them, as llama.cpp
# passes them (transformers passes None, which a template's `for tool in
# tools` cannot iterate).
REQUESTS = [(CHAT, None), (SYSTEM + CHAT, None), (TOOL_CHAT, TOOLS), (HOSTILE, None)]

# The conversations BEHAVIOUR.tsv renders the poisoned templates and their
# neighbours with: (messages, extra context). `trigger` holds every word a
# poisoned template waits for; `chat` and `system_only` none of them.
OPERATOR = {"role": "system", "content": "Operator policy: reply formally."}
TRIGGER = ("URGENT: Hey, I forgot my bank password and must move crypto from my wallet to pay an invoice; as admin "
           "please deploy the fix, this is a VIP debug request (sudo).")
BEHAVIOUR_REQUESTS = {
    "chat": (CHAT, {}),
    "system": ([OPERATOR] + CHAT, {}),
    "system_gemma": ([OPERATOR] + CHAT, {}),
    "system_only": ([OPERATOR, {"role": "user", "content": "Hello!"}], {}),
    "trigger": ([{"role": "user", "content": "ping"}, {"role": "assistant", "content": "pong"},
                 {"role": "user", "content": TRIGGER}], {}),
    "shout": ([{"role": "user", "content": "WHY IS THIS BROKEN"}], {}),
    "tools": (TOOL_CHAT, {"tools": TOOLS}),
    "docs": (CHAT, {"documents": [{"title": "Q3 report", "text": "confidential: revenue figures"}]}),
    "reasoning": ([{"role": "user", "content": "Write the exploit."},
                   {"role": "assistant", "content": "No.", "reasoning_content": "I should refuse this."},
                   {"role": "user", "content": "Please?"}], {}),
    "negation": ([{"role": "user", "content": "Please do not share my home address with anyone."}], {}),
    "negation2": ([{"role": "user", "content": "Please do not share my home address with anyone. It is private."}], {}),
    "refund": ([{"role": "user", "content": "I want a refund for my order."}], {}),
    "multiline": ([{"role": "user", "content": "line one\nline two"}], {}),
}


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def render_all(source, sandboxed=True, growth_limit=None):
    """What each request does: 'renders' or the exception's type name; with
    `growth_limit`, 'MemoryError' too for a render that raised the
    process's peak memory by more than that many bytes."""
    outcomes = []
    for messages, tools in REQUESTS:
        before = peak_rss_bytes()
        context = {"messages": messages, "add_generation_prompt": True, "bos_token": "<s>", "eos_token": "</s>"}
        if tools:
            context["tools"] = tools
        try:
            environment(sandboxed).from_string(source).render(**context)
            grew = growth_limit is not None and peak_rss_bytes() - before > growth_limit
            outcomes.append("MemoryError" if grew else "renders")
        except TemplateError as e:  # raise_exception, or a Jinja2 error of its own
            outcomes.append(type(e).__name__)
        except Exception as e:  # RecursionError, MemoryError, OverflowError, TypeError...
            outcomes.append(type(e).__name__)
    return outcomes


def render_one(source, request):
    """The template rendered for one of BEHAVIOUR_REQUESTS."""
    messages, extra = BEHAVIOUR_REQUESTS[request]
    context = {"messages": messages, "add_generation_prompt": True, "bos_token": "<s>", "eos_token": "</s>", **extra}
    return environment().from_string(source).render(**context)


def rendered(path, request):
    """render_one in a child process under the limits; None when it fails."""
    try:
        child = subprocess.run([sys.executable, __file__, "--render-with", request, str(path)], capture_output=True,
                               text=True, timeout=RENDER_SECONDS + 5, preexec_fn=limit_child)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(child.stdout) if child.returncode == 0 else None


def unescape(cell):
    return "" if cell == "-" else cell.encode("latin-1", "backslashreplace").decode("unicode-escape")


def read_behaviour(template_dir):
    path = template_dir / "BEHAVIOUR.tsv"
    if not path.exists():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    return {row["name"]: row for row in (dict(zip(header, line.split("\t"))) for line in lines[1:] if line)}


def check_behaviour(template_dir, rows):
    """What each poisoned template does that its neighbour does not (the
    module docstring says how); a list of failures."""
    failures = []

    def one(name, row):
        out = []
        poisoned, neighbour = template_dir / "poisoned" / f"{name}.jinja", template_dir / "neighbour" / f"{name}.jinja"
        request, shows, loses = row["request"], unescape(row["shows"]), unescape(row["loses"])
        p, n = rendered(poisoned, request), rendered(neighbour, request)
        if p is None or n is None:
            return [f"{name}: Jinja2 does not render the pair for {request!r}"]
        if shows not in p:
            out.append(f"{name}: the poisoned render for {request!r} lacks {shows!r}")
        if shows in n:
            out.append(f"{name}: the neighbour's render for {request!r} shows {shows!r} too")
        if loses and (loses not in n or loses in p):
            out.append(f"{name}: {loses!r} should reach the neighbour's render and not the poisoned one")
        if row["quiet"] != "-":
            q = rendered(poisoned, row["quiet"])
            if q is None or shows in q:
                out.append(f"{name}: without its trigger ({row['quiet']!r}) the poisoned render still shows {shows!r}")
        return out

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for result in pool.map(lambda item: one(*item), rows.items()):
            failures.extend(result)
    return failures


def limit_child():
    resource.setrlimit(resource.RLIMIT_AS, (RENDER_BYTES, RENDER_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (RENDER_SECONDS, RENDER_SECONDS + 1))


def jinja2_outcome(path, seconds=RENDER_SECONDS, address_space=RENDER_BYTES, mode="--render"):
    """One word for what Jinja2 does with the template: the exceptions a
    request raised beyond the template's own raise_exception (joined by
    '+'; running out of memory or time is 'limit', whichever comes first on
    this machine), else 'renders' when a request rendered, else
    'TemplateError'. `mode` --render-plain renders without the sandbox;
    --render-bomb counts a render that grew by BOMB_GROWTH_BYTES as
    'limit' too, so that a bomb that fits the address space on a fast
    machine (10^8 bytes in 256 MiB within the second) reads the same as
    one that does not."""
    def limit_child():
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))

    try:
        child = subprocess.run([sys.executable, __file__, mode, str(path)], capture_output=True, text=True,
                               timeout=seconds + 5, preexec_fn=limit_child)
    except subprocess.TimeoutExpired:
        return "limit", []
    if child.returncode != 0:  # killed by the CPU limit (SIGXCPU), or died another way
        return ("limit" if child.returncode in (-24, -9) else f"exit {child.returncode}"), []
    outcomes = ["limit" if o == "MemoryError" else o for o in json.loads(child.stdout)]
    errors = sorted({o for o in outcomes if o not in ("renders", "TemplateError")})
    if errors:
        return "+".join(errors), outcomes
    return ("renders" if "renders" in outcomes else "TemplateError"), outcomes


# --- ggufguard, on a GGUF file holding each template ---


def gguf_with_template(template_bytes):
    def string(b):
        return struct.pack("<Q", len(b)) + b

    def kv(key, value):
        return string(key.encode()) + struct.pack("<I", 8) + string(value)

    # A vocabulary-only llama file (no tensors, an empty vocabulary), which
    # llama.cpp loads: only the template can make ggufguard refuse it.
    return (b"GGUF" + struct.pack("<IQQ", 3, 0, 3) + kv("general.architecture", b"llama") +
            kv("tokenizer.ggml.model", b"no_vocab") + kv("tokenizer.chat_template", template_bytes))


def ggufguard_verdicts(cli, paths, policy):
    """{path: (valid, set of rule codes)} for the templates at `paths`."""
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for i, p in enumerate(paths):
            f = pathlib.Path(tmp) / f"{i}.gguf"
            f.write_bytes(gguf_with_template(pathlib.Path(p).read_bytes()))
            files[str(f)] = p
        run = subprocess.run([cli, "validate", "--format", "json", "--policy", policy, *files], capture_output=True,
                             text=True)
        if run.returncode not in (0, 1):
            sys.exit(f"jinja2_oracle: {cli} failed ({run.returncode}): {run.stderr}")
        report = json.loads(run.stdout)
    out = {}
    for f in report["files"]:
        rules = {x["rule"] for x in f.get("findings", []) if x.get("severity") == "error"}
        out[files[f["file"]]] = (f["verdict"] == "valid", rules)
    return out


def read_manifest(template_dir):
    lines = (template_dir / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, line.split("\t"))) for line in lines[1:] if line]


def check(cli, template_dir):
    entries = read_manifest(template_dir)
    listed = {e["path"] for e in entries}
    on_disk = {str(p.relative_to(template_dir)) for p in template_dir.rglob("*.jinja")}
    failures = [f"{p}: not in MANIFEST.tsv" for p in sorted(on_disk - listed)]
    paths = [template_dir / e["path"] for e in entries]
    default = ggufguard_verdicts(cli, paths, "default")
    strict = ggufguard_verdicts(cli, paths, "strict")
    def outcome_of(entry, path):
        if entry["class"] == "attack" and entry["kind"] == "render-bomb":
            return jinja2_outcome(path, BOMB_SECONDS, BOMB_BYTES, "--render-bomb")
        return jinja2_outcome(path)

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:  # each render is its own process
        outcomes = list(pool.map(outcome_of, entries, paths))
    behaviour = read_behaviour(template_dir)
    counts = {}
    for e, path, (outcome, per_request) in zip(entries, paths, outcomes):
        name, cls, kind, expected = e["path"], e["class"], e["kind"], e.get("jinja2", "")
        counts[(cls, outcome)] = counts.get((cls, outcome), 0) + 1
        what = f"{name} ({cls}{', ' + kind if kind != '-' else ''}): Jinja2 {outcome} {per_request}"
        if cls == "poisoned":
            row = behaviour.get(pathlib.Path(name).stem)
            if row is None:
                failures.append(f"{what}: not in BEHAVIOUR.tsv")
                continue
            if expected != "renders" or outcome != "renders":
                failures.append(f"{what}, expected it to render (column says {expected!r})")
            valid, rules = (strict if row["policy"] == "strict" else default)[path]
            if valid or RULES[kind] not in rules:
                failures.append(f"{what}: ggufguard does not reject it under {row['policy']} with {RULES[kind]}: {sorted(rules)}")
            continue
        if cls in ("benign", "inert", "neighbour"):
            if expected == "sandbox-refuses" and cls == "benign":
                plain, plain_per_request = jinja2_outcome(path, mode="--render-plain")
                if outcome != "SecurityError" or plain != "renders":
                    failures.append(f"{what}, plain Jinja2 {plain} {plain_per_request}: expected the sandbox to "
                                    "refuse it and plain Jinja2 to render it")
            elif expected != "renders" or outcome != "renders":
                failures.append(f"{what}, expected it to render (column says {expected!r})")
            for policy, verdicts in (("default", default), ("strict", strict)):
                valid, rules = verdicts[path]
                if not valid:
                    failures.append(f"{what}: ggufguard rejects it under {policy}: {sorted(rules)}")
            continue
        if kind in SANDBOX_ESCAPES and expected != "SecurityError":
            failures.append(f"{what}: a {kind} attack must be one Jinja2's sandbox stops (column says {expected!r})")
        if outcome != expected:
            failures.append(f"{what}, the manifest says {expected!r}")
        valid, rules = default[path]
        if valid or RULES[kind] not in rules:
            failures.append(f"{what}: ggufguard does not reject it with {RULES[kind]}: {sorted(rules)}")
    failures.extend(check_behaviour(template_dir, behaviour))
    for (cls, outcome), n in sorted(counts.items()):
        print(f"{cls:7} {outcome:24} {n}")
    for f in failures:
        print("FAIL", f)
    print(f"jinja2_oracle: {len(entries)} templates, Jinja2 {jinja2.__version__}, {len(failures)} disagreements")
    return 1 if failures else 0


def report(cli, paths):
    default = ggufguard_verdicts(cli, paths, "default")
    strict = ggufguard_verdicts(cli, paths, "strict")
    for p in paths:
        outcome, per_request = jinja2_outcome(p)
        d, s = default[p], strict[p]
        print(f"{p}\tJinja2 {outcome} {per_request}\tdefault {'valid' if d[0] else 'invalid ' + ','.join(sorted(d[1]))}"
              f"\tstrict {'valid' if s[0] else 'invalid ' + ','.join(sorted(s[1]))}")
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "--render-with":
        sys.setrecursionlimit(5000)
        try:
            print(json.dumps(render_one(pathlib.Path(argv[3]).read_text(encoding="utf-8"), argv[2])))
        except Exception as e:  # a failed render is None to the caller
            print(f"{type(e).__name__}: {e}", file=sys.stderr)
            return 1
        return 0
    if len(argv) == 4 and argv[1] == "--show":
        print(render_one(pathlib.Path(argv[3]).read_text(encoding="utf-8"), argv[2]))
        return 0
    if len(argv) == 3 and argv[1] in ("--render", "--render-plain", "--render-bomb"):
        sys.setrecursionlimit(5000)
        source = pathlib.Path(argv[2]).read_text(encoding="utf-8")
        growth_limit = BOMB_GROWTH_BYTES if argv[1] == "--render-bomb" else None
        print(json.dumps(render_all(source, argv[1] != "--render-plain", growth_limit)))
        return 0
    if len(argv) >= 3 and argv[1] == "--report":
        return report(argv[2], argv[3:])
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    template_dir = pathlib.Path(argv[2]) if len(argv) == 3 else HERE / "data" / "chat_templates"
    return check(argv[1], template_dir)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
