// The loader oracle's runner: runs llama.cpp (the prebuilt CPU binaries of
// node-llama-cpp, npm package @node-llama-cpp/linux-x64) on GGUF files one
// after another in a child process, in three stages per file:
//
//   load     llama_model_load_from_file
//   context  llama_init_from_model with a small context (n_ctx 64, which
//            llama.cpp pads to 256; one sequence, batches of 8, 1 thread):
//            the KV cache, the output buffer and a reservation of the
//            compute graph, i.e. every layer's graph built once
//   decode   llama_decode of one token (the BOS token, or 0), which runs
//            that graph
//
// and records for each file whether it passed all three (`loaded`), was
// refused (llama.cpp's error message and the stage; `oom` when the cause is
// the child's memory limit), crashed the process (signal, abort message,
// stage) or hung (`timeout`, stage). A crash costs only the file that
// caused it: the next file goes to a fresh child (about 50 ms to start).
//
//   node fuzz/oracle/runner.mjs [--timeout-ms N] [--memory-mb N] [--stages load|context|decode]
//        [--vocab-only] FILE|DIR...
//
// --vocab-only loads the vocabulary and no weights (llama_model_params'
// vocab_only, the addon's `vocabOnly`): the load stage alone, which reads the
// architecture, hyperparameters and vocabulary and refuses what they refuse
// (vocab_refusals.mjs).
//
// prints one JSON line per file. As a module: `runLoader(files, options)`
// resolves to the same records.
//
// Memory: a hostile file can ask for a KV cache or compute buffers of any
// size. The child runs under RLIMIT_DATA (--memory-mb, 1024 by default:
// `ulimit -d` in the shell that execs it), which bounds every private
// writable mapping (malloc, ggml's CPU buffers, V8's heap) but not the
// read-only mmap of the model file. An allocation past the limit fails:
// llama.cpp refuses the file (ggml logs "failed to allocate"), or the child
// dies of it (std::bad_alloc, V8 out of memory, or the kernel's SIGKILL),
// which is recorded as `refused` with `oom: true`, not as a crash of
// llama.cpp.
//
// The child drives node-llama-cpp's native addon directly, as node-llama-cpp's
// own getLlama(), LlamaModel and LlamaContext do (dist/bindings/Llama.js,
// LlamaModel.js, LlamaContext.js of 3.21.1): load the CPU backend, then
// AddonModel(path, {gpuLayers: 0, useMmap}) + init(), which is
// llama_model_load_from_file with llama_model_default_params() (mmap on,
// check_tensors off), then AddonContext(model, {contextSize, batchSize,
// sequences, threads}) + init(), which is llama_init_from_model with
// llama_context_default_params() otherwise (flash attention `auto`, F16 KV
// cache), then initBatch/addToBatch/decodeBatch, which is llama_decode. Not
// LlamaModel.loadModel(): it first parses the file with node-llama-cpp's own
// JavaScript GGUF reader and estimates resources from it, so a file that
// reader rejects would never reach llama.cpp, and the oracle is llama.cpp
// alone. Not getLlama() either: it tests the prebuilt binary in a process of
// its own first, a second or two per restart after a crash. The addon's
// interface is internal to node-llama-cpp, so package.json pins the exact
// version it was read from, and the CTest fails unless the unmutated base
// model passes all three stages.
//
// llama.cpp's error lines go straight to the child's stdout (no JavaScript
// logger: the addon hands a line to JavaScript a turn of the event loop
// later, too late when the next thing the process does is abort), stderr
// goes to the same pipe, and the child writes a line there before each
// stage (`@@ggufguard-oracle ID STAGE`), so that the parent knows the stage
// of a crash and whose messages it reads.
import {spawn} from "node:child_process";
import {readdirSync, statSync, writeSync} from "node:fs";
import {createRequire} from "node:module";
import {join, resolve} from "node:path";
import {fileURLToPath} from "node:url";

const here = fileURLToPath(import.meta.url);

export const kStages = ["load", "context", "decode"];
const kMarker = "@@ggufguard-oracle";
const kAddonLogError = 2;  // node-llama-cpp's levels: 2 error, 3 warn, 4 info
const kContextSize = 64;   // llama.cpp pads it to 256, its smallest
const kBatchSize = 8;

// ---------------------------------------------------------------- child ---

async function childMain(stages, vocabOnly) {
  const {getBinsDir} = await import("@node-llama-cpp/linux-x64");
  const binDir = join(getBinsDir().binsDir, "linux-x64");
  const addon = createRequire(import.meta.url)(join(binDir, "llama-addon.node"));
  addon.markLoaded();
  // No setLogger(): lines of level error go to stdout at once.
  addon.setLoggerLogLevel(kAddonLogError);
  addon.loadBackends(binDir);  // ggml's CPU backend variants, picked by the CPU's features
  await addon.init();
  const mark = (id, what) => writeSync(1, `\n${kMarker} ${id} ${what}\n`);

  process.on("message", async (request) => {
    if (request.path === undefined) return;
    const {id} = request;
    const started = performance.now();
    let outcome = "refused";
    let stage = "load";
    let message = "";
    let note;
    mark(id, "load");
    const model = new addon.AddonModel(request.path, {addonExports: addon, gpuLayers: 0, useMmap: true, vocabOnly});
    let modelLoaded = false;
    let context = null;
    try {
      modelLoaded = await model.init();
      if (!modelLoaded) throw null;  // llama.cpp logged why
      if (stages > 1) {
        stage = "context";
        mark(id, "context");
        context = new addon.AddonContext(model, {contextSize: kContextSize, batchSize: kBatchSize, sequences: 1,
                                                 threads: 1});
        if (!(await context.init())) throw null;
      }
      if (stages > 2) {
        stage = "decode";
        mark(id, "decode");
        const arch = String(model.getModelDescription()).split(" ")[0];
        if (arch === "t5") {
          // An encoder-decoder model decodes only after llama_encode, which
          // the addon does not offer (llama_decode would abort on purpose).
          note = "decode not tried: t5 needs llama_encode first";
        } else {
          const bos = model.tokenBos();
          const token = Number.isInteger(bos) && bos >= 0 ? bos : 0;
          context.initBatch(1);
          context.addToBatch(0, 0, Uint32Array.of(token), Uint32Array.of(0));
          await context.decodeBatch();
        }
      }
      outcome = "loaded";
      stage = undefined;
    } catch (err) {
      if (err !== null) message = String(err?.message ?? err);
    }
    mark(id, "dispose");
    if (context !== null) await context.dispose();
    if (modelLoaded) await model.dispose();
    mark(id, "end");
    process.send({id, outcome, stage, message, note, ms: Math.round(performance.now() - started),
                  max_rss_kb: process.resourceUsage().maxRSS});
  });
  process.on("disconnect", () => process.exit(0));  // the parent is gone
  process.send({ready: true});
}

// --------------------------------------------------------------- parent ---

// A child under the memory limit that says when its backend is ready. Its
// stderr is read line by line: the stage markers, and what llama.cpp said
// since the current stage of the current file began.
function startChild({memoryMb, stages, vocabOnly}) {
  const args = [here, "--child", String(stages), vocabOnly ? "vocab-only" : "model"];
  // stderr joins stdout, so that the markers, llama.cpp's log lines (on
  // stdout without a JavaScript logger) and ggml's abort message (stderr)
  // come in the order they were written.
  const child = spawn("/bin/sh", ["-c", `ulimit -d ${memoryMb * 1024} && exec "$0" "$@" 2>&1`, process.execPath,
                                  ...args], {
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    // ggml prints a backtrace on abort by attaching gdb when it can: slow,
    // and nothing the record needs.
    env: {...process.env, GGML_NO_BACKTRACE: "1"},
  });
  const state = {child, partial: "", lines: [], id: null, stage: null, ended: null, exited: null, pending: null,
                 killed: false};
  child.on("error", () => {});  // a send to a child that just died; its exit event tells
  const onOutput = (chunk) => {
    const text = state.partial + chunk.toString("utf8");
    const lines = text.split("\n");
    state.partial = lines.pop().slice(-4000);
    for (const line of lines) {
      const m = line.startsWith(kMarker) ? line.slice(kMarker.length + 1).split(" ") : null;
      if (m !== null && m.length === 2) {
        if (Number(m[0]) !== state.id) continue;
        if (m[1] === "end") {
          state.ended?.();
        } else if (m[1] === "dispose") {
          state.stage = m[1];  // a crash freeing the model is one too; a refusal's lines are kept
        } else {
          state.stage = m[1];
          state.lines = [];
        }
        continue;
      }
      if (line.trim() === "") continue;
      state.lines.push(line.trim());
      if (state.lines.length > 200) state.lines.splice(20, state.lines.length - 120);  // the first and the last
    }
  };
  child.stdout.on("data", onOutput);
  child.stderr.on("data", onOutput);  // the shell's own, before exec
  state.exit = new Promise((resolveExit) => child.on("exit", resolveExit));
  state.ready = new Promise((resolveReady, rejectReady) => {
    child.on("message", (m) => {
      if (m.ready) resolveReady();
      else if (state.pending) state.pending.resolve(m);
    });
    child.on("exit", (code, signal) => {
      if (state.partial.trim() !== "") state.lines.push(state.partial.trim());
      state.exited = {code, signal};
      rejectReady(new Error(`loader child exited before it was ready (code ${code}, signal ${signal}): ` +
                            state.lines.join(" | ").slice(-1000)));
      state.ended?.();
      if (state.pending) state.pending.resolve(null);
    });
  });
  state.ready.catch(() => {});
  return state;
}

// Source paths of the machine that built the binary say nothing here.
const shortPaths = (l) => l.replace(/\S*\/llama\.cpp\/(src|ggml)\//g, "$1/");

// The lines of the dead child's stderr that say why (GGML_ASSERT, terminate
// called after..., a sanitizer or libc message).
function crashMessage(lines) {
  lines = lines.map(shortPaths);
  const telling = lines.filter((l) => /GGML_ASSERT|GGML_ABORT|terminate|error|fault|abort|what\(\)/i.test(l));
  return (telling.length > 0 ? telling.slice(-3) : lines.slice(-3)).join(" | ").slice(0, 500);
}

// What llama.cpp said when it refused a file: its error lines, less those
// that only say that loading or initialising failed.
function refusalMessage(lines) {
  return lines
    .filter((l) => !/failed to load model( from|$)|^llama_init_from_model: failed to initialize the context$/.test(l))
    .map((l) => shortPaths(l).replace(/^.*(error loading model|failed to initialize the context): /, ""))
    .slice(0, 2).join(" | ").slice(0, 500);
}

// Signs that the memory limit, not the file's structure, stopped llama.cpp.
const kOutOfMemory = /std::bad_alloc|out of memory|insufficient memory|failed to allocate|cannot allocate memory|allocation failed/i;

// A child that neither gets ready nor dies (too little memory for V8 to
// start can do that) must not hang the run.
async function readyOrTimeout(state, timeoutMs) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`loader child not ready in ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([state.ready, late]);
  } catch (err) {
    if (state.exited === null) state.child.kill("SIGKILL");
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs each file through the stages in a child process; resolves to one
 * record per file: {file, outcome: "loaded" | "refused" | "crashed" |
 * "timeout", stage ("load" | "context" | "decode", or "dispose" for a
 * crash freeing them; absent when loaded),
 * message, oom?, note?, signal?, exit_code?, ms, max_rss_kb?}.
 * `stages`: how many of load, context, decode to run (3). `vocabOnly`: load
 * the vocabulary without weights (the load stage only).
 */
export async function runLoader(files, {timeoutMs = 30000, memoryMb = 1024, stages = 3, vocabOnly = false,
                                        onRecord = () => {}} = {}) {
  if (vocabOnly) stages = 1;  // no weights: nothing to make a context of
  const records = [];
  let current = startChild({memoryMb, stages, vocabOnly});
  let nextId = 1;
  try {
    for (const file of files) {
      if (current.exited !== null) current = startChild({memoryMb, stages, vocabOnly});  // died after its last answer, or timed out
      await readyOrTimeout(current, timeoutMs);
      const id = nextId++;
      current.id = id;
      current.stage = "load";
      current.lines = [];
      const path = resolve(file);
      const reply = new Promise((resolveReply) => { current.pending = {resolve: resolveReply}; });
      // The reply and the end marker come through two pipes, in either order.
      const ended = new Promise((resolveEnded) => { current.ended = resolveEnded; });
      const started = performance.now();
      let timer;
      const timeout = new Promise((resolveTimeout) => {
        timer = setTimeout(() => resolveTimeout("timeout"), timeoutMs);
      });
      current.child.send({id, path});
      const result = await Promise.race([reply, timeout]);
      if (result !== "timeout" && result !== null) await Promise.race([ended, timeout]);
      clearTimeout(timer);
      current.pending = null;
      current.ended = null;
      const ms = Math.round(performance.now() - started);
      let record;
      if (result === "timeout") {
        current.child.kill("SIGKILL");
        await current.exit;
        record = {file, outcome: "timeout", stage: current.stage, message: `no answer in ${timeoutMs} ms`, ms};
      } else if (result === null) {
        const {signal, code} = current.exited;
        const message = crashMessage(current.lines);
        const evidence = current.lines.find((l) => kOutOfMemory.test(l));
        if (signal === "SIGKILL" || evidence !== undefined) {
          // Killed by the kernel (nobody else sends SIGKILL), or died after
          // an allocation failed: the limit, not a bug in llama.cpp.
          const why = evidence === undefined ? "SIGKILL" : shortPaths(evidence).slice(0, 200);
          record = {file, outcome: "refused", stage: current.stage, oom: true,
                    message: `out of memory (limit ${memoryMb} MiB): ${why} | ${message}`.slice(0, 500),
                    signal, exit_code: code, ms};
        } else {
          record = {file, outcome: "crashed", stage: current.stage, signal, exit_code: code, message, ms};
        }
      } else {
        record = {file, outcome: result.outcome, stage: result.stage, message: result.message, ms: result.ms,
                  max_rss_kb: result.max_rss_kb};
        if (result.outcome === "refused") {
          if (record.message === "") record.message = refusalMessage(current.lines);
          if (kOutOfMemory.test(record.message)) record.oom = true;
        }
        if (result.note) record.note = result.note;
      }
      records.push(record);
      onRecord(record);
    }
  } finally {
    if (current.exited === null) current.child.kill("SIGKILL");
  }
  return records;
}

/** Files named on the command line; directories are walked for *.gguf, sorted. */
export function collectFiles(paths) {
  const out = [];
  const walk = (p) => {
    if (statSync(p).isDirectory()) {
      for (const name of readdirSync(p).sort()) {
        const child = join(p, name);
        if (statSync(child).isDirectory() || name.endsWith(".gguf")) walk(child);
      }
    } else {
      out.push(p);
    }
  };
  for (const p of paths) walk(p);
  return out;
}

async function cliMain(argv) {
  let timeoutMs = 30000;
  let memoryMb = 1024;
  let stages = 3;
  let vocabOnly = false;
  const paths = [];
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === "--timeout-ms") timeoutMs = Number(argv[++i]);
    else if (argv[i] === "--memory-mb") memoryMb = Number(argv[++i]);
    else if (argv[i] === "--stages") stages = kStages.indexOf(argv[++i]) + 1;
    else if (argv[i] === "--vocab-only") vocabOnly = true;
    else paths.push(argv[i]);
  }
  if (paths.length === 0 || !(timeoutMs > 0) || !(Number.isInteger(memoryMb) && memoryMb > 0) || stages === 0) {
    process.stderr.write("usage: node runner.mjs [--timeout-ms N] [--memory-mb N] [--stages load|context|decode] " +
                         "[--vocab-only] FILE|DIR...\n");
    process.exit(2);
  }
  await runLoader(collectFiles(paths), {
    timeoutMs, memoryMb, stages, vocabOnly,
    onRecord: (r) => process.stdout.write(JSON.stringify(r) + "\n"),
  });
}

if (process.argv[2] === "--child") {
  await childMain(Number(process.argv[3]), process.argv[4] === "vocab-only");
} else if (process.argv[1] !== undefined && resolve(process.argv[1]) === here) {
  await cliMain(process.argv.slice(2));
}
