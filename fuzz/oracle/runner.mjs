// The loader oracle's runner: loads GGUF files one after another with
// llama.cpp's real loader (llama_model_load_from_file, from the prebuilt CPU
// binaries of node-llama-cpp, npm package @node-llama-cpp/linux-x64) in a
// child process, and records for each file whether it loaded, was refused
// (with llama.cpp's error message), crashed the process (signal, abort) or
// hung. A crash costs only the file that caused it: the next file goes to a
// fresh child (about 50 ms to start).
//
//   node fuzz/oracle/runner.mjs [--timeout-ms N] FILE|DIR...    JSON lines on stdout
//
// As a module: `runLoader(files, options)` resolves to the same records.
//
// The child drives node-llama-cpp's native addon directly, as node-llama-cpp's
// own getLlama() and LlamaModel do (dist/bindings/Llama.js, LlamaModel.js of
// 3.21.1): load the CPU backend, then AddonModel(path, {gpuLayers: 0, useMmap})
// + init(), which is llama_model_load_from_file with llama_model_default_params()
// (mmap on, check_tensors off). Not LlamaModel.loadModel(): it first parses
// the file with node-llama-cpp's own JavaScript GGUF reader and estimates
// resources from it, so a file that reader rejects would never reach
// llama.cpp, and the oracle is llama.cpp's loader alone. Not getLlama()
// either: it tests the prebuilt binary in a process of its own first, a
// second or two per restart after a crash. The addon's interface is
// internal to node-llama-cpp, so package.json pins the exact version it was
// read from, and the CTest fails unless the unmutated base model loads.
import {fork} from "node:child_process";
import {readdirSync, statSync} from "node:fs";
import {createRequire} from "node:module";
import {join, resolve} from "node:path";
import {fileURLToPath} from "node:url";

const here = fileURLToPath(import.meta.url);

// ---------------------------------------------------------------- child ---

const kAddonLogWarn = 3;  // node-llama-cpp's levels: 2 error, 3 warn, 4 info
const kAddonLogError = 2;

async function childMain() {
  const {getBinsDir} = await import("@node-llama-cpp/linux-x64");
  const binDir = join(getBinsDir().binsDir, "linux-x64");
  const addon = createRequire(import.meta.url)(join(binDir, "llama-addon.node"));
  let logs = [];
  addon.markLoaded();
  addon.setLogger((level, message) => logs.push({level, message: String(message).trim()}));
  addon.setLoggerLogLevel(kAddonLogWarn);
  addon.loadBackends(binDir);  // ggml's CPU backend variants, picked by the CPU's features
  await addon.init();
  // The logger is called through a thread-safe function, so llama.cpp's last
  // lines for a file arrive a turn of the event loop after init() settles.
  const settle = () => new Promise((done) => setTimeout(done, 2));

  process.on("message", async (request) => {
    if (request.path === undefined) return;
    logs = [];
    const started = performance.now();
    let outcome = "refused";
    let message = "";
    const model = new addon.AddonModel(request.path, {addonExports: addon, gpuLayers: 0, useMmap: true});
    try {
      if (await model.init()) outcome = "loaded";
    } catch (err) {
      message = String(err?.message ?? err);
    }
    await settle();
    if (outcome === "loaded") await model.dispose();
    if (outcome === "refused" && message === "") {
      // llama.cpp logs the cause first (gguf's parser, or "llama_model_load:
      // error loading model: <why>"), then that loading failed.
      const causes = logs
        .filter((l) => l.level === kAddonLogError && !/failed to load model( from|$)/.test(l.message))
        .map((l) => l.message.replace(/^.*error loading model: /, ""));
      message = causes.slice(0, 2).join(" | ");
    }
    process.send({
      path: request.path,
      outcome,
      message: message.slice(0, 500),
      ms: Math.round(performance.now() - started),
      max_rss_kb: process.resourceUsage().maxRSS,
    });
  });
  process.on("disconnect", () => process.exit(0));  // the parent is gone
  process.send({ready: true});
}

// --------------------------------------------------------------- parent ---

// A child that says when its backend is ready.
function startChild() {
  const child = fork(here, ["--child"], {
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    // ggml prints a backtrace on abort by attaching gdb when it can: slow,
    // and nothing the record needs.
    env: {...process.env, GGML_NO_BACKTRACE: "1"},
  });
  const state = {child, stderr: "", exited: null, ready: null, pending: null};
  child.on("error", () => {});  // a send to a child that just died; its exit event tells
  child.stderr.on("data", (chunk) => {
    state.stderr = (state.stderr + chunk.toString("utf8")).slice(-4000);
  });
  state.exit = new Promise((resolveExit) => child.on("exit", resolveExit));
  state.ready = new Promise((resolveReady, rejectReady) => {
    child.on("message", (m) => {
      if (m.ready) resolveReady();
      else if (state.pending) state.pending.resolve(m);
    });
    child.on("exit", (code, signal) => {
      state.exited = {code, signal};
      rejectReady(new Error(`loader child exited before it was ready (code ${code}, signal ${signal}): ` +
                            state.stderr.trim().slice(-1000)));
      if (state.pending) state.pending.resolve(null);
    });
  });
  state.ready.catch(() => {});
  return state;
}

// The last lines of the dead child's stderr that say why (GGML_ASSERT,
// terminate called after..., a sanitizer or libc message).
function crashMessage(stderr) {
  // Source paths of the machine that built the binary say nothing here.
  const lines = stderr.split("\n").map((l) => l.trim().replace(/\S*\/llama\.cpp\/(src|ggml)\//g, "$1/"))
    .filter((l) => l !== "");
  const telling = lines.filter((l) => /GGML_ASSERT|GGML_ABORT|terminate|error|fault|abort|what\(\)/i.test(l));
  return (telling.length > 0 ? telling.slice(-3) : lines.slice(-3)).join(" | ").slice(0, 500);
}

/**
 * Loads each file in a child process; resolves to one record per file:
 * {file, outcome: "loaded" | "refused" | "crashed" | "timeout", message, ms,
 *  signal?, exit_code?, max_rss_kb?}.
 */
export async function runLoader(files, {timeoutMs = 30000, onRecord = () => {}} = {}) {
  const records = [];
  let current = startChild();
  try {
    for (const file of files) {
      if (current.exited !== null) current = startChild();  // died after its last answer, or timed out
      await current.ready;
      current.stderr = "";
      const path = resolve(file);
      const reply = new Promise((resolveReply) => { current.pending = {resolve: resolveReply}; });
      const started = performance.now();
      let timer;
      const timeout = new Promise((resolveTimeout) => {
        timer = setTimeout(() => resolveTimeout("timeout"), timeoutMs);
      });
      current.child.send({path});
      const result = await Promise.race([reply, timeout]);
      clearTimeout(timer);
      current.pending = null;
      let record;
      if (result === "timeout") {
        current.child.kill("SIGKILL");
        await current.exit;
        record = {file, outcome: "timeout", message: `no answer in ${timeoutMs} ms`,
                  ms: Math.round(performance.now() - started)};
      } else if (result === null) {
        record = {file, outcome: "crashed", signal: current.exited.signal, exit_code: current.exited.code,
                  message: crashMessage(current.stderr), ms: Math.round(performance.now() - started)};
      } else {
        record = {file, outcome: result.outcome, message: result.message, ms: result.ms,
                  max_rss_kb: result.max_rss_kb};
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
  const paths = [];
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === "--timeout-ms") timeoutMs = Number(argv[++i]);
    else paths.push(argv[i]);
  }
  if (paths.length === 0 || !(timeoutMs > 0)) {
    process.stderr.write("usage: node runner.mjs [--timeout-ms N] FILE|DIR...\n");
    process.exit(2);
  }
  await runLoader(collectFiles(paths), {
    timeoutMs,
    onRecord: (r) => process.stdout.write(JSON.stringify(r) + "\n"),
  });
}

if (process.argv[2] === "--child") {
  await childMain();
} else if (process.argv[1] !== undefined && resolve(process.argv[1]) === here) {
  await cliMain(process.argv.slice(2));
}
