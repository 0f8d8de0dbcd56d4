// The loader oracle: every file goes through ggufguard (policy `default`)
// and through llama.cpp's real loader (runner.mjs); a file that ggufguard
// accepts and that crashes or hangs the loader is a bug in ggufguard. Files
// that ggufguard rejects and llama.cpp loads are listed as possible false
// positives (a loader that does not crash can still be fooled, so they are
// not failures by themselves).
//
//   node fuzz/oracle/differential.mjs --ggufguard BIN [--mutants BIN FIRST_SEED COUNT]
//        [--batch N] [--minutes M] [--work DIR] [--out FILE.jsonl] [--keep DIR] [--timeout-ms N]
//        [--memory-mb N] [--stages load|context|decode] [PATH...]
//
//   --mutants   oracle_mutants (built with the dev preset) writes the base
//               model and COUNT mutants from FIRST_SEED, N at a time
//               (--batch, default 500) under --work; each batch is deleted
//               once judged, so an hour-long run needs ~30 MB of disk
//   --minutes   start no new batch after M minutes (for long runs: give a
//               large COUNT and stop by time)
//   --keep      copy there every file that crashed or hung the loader (accepted
//               or not) and every possible false positive
//   --out       one JSON line per file: verdicts, rules, loader outcome and stage, mutations
//   --stages    run llama.cpp up to this stage (runner.mjs): load the model,
//               create a context, decode a token (the default)
//   --memory-mb the loader child's memory limit (runner.mjs; 1024)
//
// A file "loaded" when it passed every stage; otherwise llama.cpp refused it,
// crashed or hung at a stage (`refused@context`). A refusal for memory (the
// child's limit) is `refused@STAGE (oom)`, not a crash.
//
// Exit 0 when no accepted file crashed the loader and the base model loaded
// and was accepted; 1 otherwise; 2 on usage errors. See docs/fuzzing.md, "The real loader as an oracle".
import {execFile} from "node:child_process";
import {copyFileSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {basename, join, resolve} from "node:path";
import {promisify} from "node:util";

import {collectFiles, kStages, runLoader} from "./runner.mjs";
import {judge} from "./verdicts.mjs";

const run = promisify(execFile);

// Crash classes that issue 10 gives to the `verdicts` branch: the report
// names them so that a failure on a branch without that work says whose it
// is. Matched against llama.cpp's abort message.
const kVerdictsClasses = [
  [/n_expert|n_group_used|LLAMA_MAX_EXPERTS/, "expert counts and groups (issue 10, verdicts)"],
  [/n_head_kv|head_count_kv/, "per-layer head_count_kv (issue 10, verdicts)"],
  [/SIGFPE|ne\[1\]|division/, "zero tensor dimension (issue 10, verdicts)"],
];

function parseArgs(argv) {
  const o = {paths: [], batch: 500, timeoutMs: 30000, mutants: null, minutes: Infinity, memoryMb: 1024, stages: 3};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--ggufguard") o.ggufguard = next();
    else if (a === "--mutants") o.mutants = {tool: next(), first: Number(next()), count: Number(next())};
    else if (a === "--batch") o.batch = Number(next());
    else if (a === "--minutes") o.minutes = Number(next());
    else if (a === "--work") o.work = next();
    else if (a === "--out") o.out = next();
    else if (a === "--keep") o.keep = next();
    else if (a === "--timeout-ms") o.timeoutMs = Number(next());
    else if (a === "--memory-mb") o.memoryMb = Number(next());
    else if (a === "--stages") o.stages = kStages.indexOf(next()) + 1;
    else if (a.startsWith("--")) throw new Error(`unknown option ${a}`);
    else o.paths.push(a);
  }
  if (!o.ggufguard) throw new Error("--ggufguard BIN is required");
  if (o.mutants && !(Number.isInteger(o.mutants.first) && Number.isInteger(o.mutants.count))) {
    throw new Error("--mutants BIN FIRST_SEED COUNT");
  }
  if (!(o.batch > 0) || !(o.timeoutMs > 0) || !(o.minutes > 0) || !(o.memoryMb > 0)) {
    throw new Error("--batch, --minutes, --timeout-ms and --memory-mb must be positive");
  }
  if (o.stages === 0) throw new Error(`--stages: one of ${kStages.join(", ")}`);
  return o;
}

// ggufguard's verdict per file under the default policy, from its JSON
// report; 100 files per process.
function readMutations(dir) {
  const index = new Map();
  const path = join(dir, "mutants.jsonl");
  if (!existsSync(path)) return index;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line === "") continue;
    const m = JSON.parse(line);
    index.set(join(dir, m.file), m.mutations);
  }
  return index;
}

function owner(message) {
  for (const [re, who] of kVerdictsClasses) if (re.test(message)) return who;
  return null;
}

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`differential: ${err.message}\n`);
    process.exit(2);
  }
  const work = o.work ?? mkdtempSync(join(tmpdir(), "ggufguard-oracle-"));
  mkdirSync(work, {recursive: true});
  if (o.keep) mkdirSync(o.keep, {recursive: true});
  const out = o.out ? createWriteStream(o.out) : null;

  const counts = {};
  const failures = [];
  const falsePositives = [];
  let baseOk = o.mutants === null;
  let total = 0;

  async function check(files, mutations) {
    const verdicts = await judge(o.ggufguard, files);
    const records = await runLoader(files, {timeoutMs: o.timeoutMs, memoryMb: o.memoryMb, stages: o.stages});
    for (const r of records) {
      const v = verdicts.get(r.file);
      const row = {file: r.file, ggufguard: v.accepted ? "accepted" : "rejected", rules: v.rules,
                   loader: r.outcome, loader_stage: r.stage, loader_message: r.message, signal: r.signal,
                   oom: r.oom, mutations: mutations.get(r.file)};
      const key = `${row.ggufguard}/${row.loader}${r.stage ? `@${r.stage}` : ""}${r.oom ? " (oom)" : ""}`;
      counts[key] = (counts[key] ?? 0) + 1;
      ++total;
      out?.write(JSON.stringify(row) + "\n");
      const bad = r.outcome === "crashed" || r.outcome === "timeout";
      if (bad && v.accepted) failures.push(row);
      if (r.outcome === "loaded" && !v.accepted) falsePositives.push(row);
      if (basename(r.file) === "base.gguf" && mutations.has(r.file)) {
        baseOk = r.outcome === "loaded" && v.accepted;
      }
      // Every file that crashed the loader, accepted or not (to judge again
      // after a fix), and every possible false positive.
      if (o.keep && (bad || (r.outcome === "loaded" && !v.accepted))) {
        const tag = bad ? (v.accepted ? "crash-accepted" : "crash-rejected") : "fp";
        copyFileSync(r.file, join(o.keep, `${tag}-${basename(r.file)}`));
      }
    }
  }

  const fixed = collectFiles(o.paths);
  if (fixed.length > 0) await check(fixed, new Map());
  if (o.mutants) {
    const {tool, first, count} = o.mutants;
    const deadline = Date.now() + o.minutes * 60000;
    for (let seed = first; seed < first + count && Date.now() < deadline; seed += o.batch) {
      const n = Math.min(o.batch, first + count - seed);
      const dir = join(work, `mutants-${seed}`);
      mkdirSync(dir, {recursive: true});
      await run(tool, [dir, String(seed), String(n)]);
      const mutations = readMutations(dir);
      // The base model once, then only mutants.
      const files = collectFiles([dir]).filter((f) => seed === first || basename(f) !== "base.gguf");
      await check(files, mutations);
      rmSync(dir, {recursive: true, force: true});
      process.stderr.write(`differential: seeds ${first}..${seed + n - 1}: ${total} files, ` +
                           `${failures.length} accepted and crashed\n`);
    }
  }
  if (out) await new Promise((done) => out.end(done));  // flushed before process.exit below
  if (!o.work) rmSync(work, {recursive: true, force: true});

  const lines = [];
  lines.push(`loader oracle: ${total} files (ggufguard verdict / llama.cpp outcome@stage; ` +
             `stages: ${kStages.slice(0, o.stages).join(", ")}):`);
  for (const key of Object.keys(counts).sort()) lines.push(`  ${key.padEnd(30)} ${counts[key]}`);
  if (!baseOk) lines.push("FAIL: the unmutated base model did not load in llama.cpp, or ggufguard rejected it");
  if (falsePositives.length > 0) {
    lines.push(`${falsePositives.length} file(s) rejected by ggufguard that llama.cpp loads ` +
               "(possible false positives; rules fired):");
    const byRules = new Map();
    for (const r of falsePositives) {
      const k = r.rules.join(",");
      byRules.set(k, [...(byRules.get(k) ?? []), r]);
    }
    for (const [rules, rows] of [...byRules].sort((a, b) => b[1].length - a[1].length)) {
      const example = rows[0];
      lines.push(`  ${rules.padEnd(24)} ${String(rows.length).padStart(5)}  e.g. ${basename(example.file)}` +
                 (example.mutations ? ` (${example.mutations.join("; ")})` : ""));
    }
  }
  if (failures.length > 0) {
    lines.push(`FAIL: ${failures.length} file(s) accepted by ggufguard crash or hang llama.cpp's loader:`);
    const byCrash = new Map();
    for (const r of failures) {
      const k = `${r.loader}@${r.loader_stage} ${r.signal ?? ""} ${r.loader_message}`;
      byCrash.set(k, [...(byCrash.get(k) ?? []), r]);
    }
    for (const [crash, rows] of [...byCrash].sort((a, b) => b[1].length - a[1].length)) {
      const who = owner(crash);
      lines.push(`  ${rows.length} x ${crash}${who ? `  [known class: ${who}]` : ""}`);
      for (const r of rows.slice(0, 3)) {
        lines.push(`      ${r.file}` + (r.mutations ? `: ${r.mutations.join("; ")}` : ""));
      }
    }
  }
  process.stdout.write(lines.join("\n") + "\n");
  process.exit(failures.length === 0 && baseOk ? 0 : 1);
}

await main();
