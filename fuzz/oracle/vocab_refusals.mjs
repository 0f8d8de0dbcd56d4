// The vocabulary oracle: llama.cpp's real loader (runner.mjs, vocabulary
// only: no weights are read, so a file costs a few milliseconds) against
// ggufguard's vocabulary-load rules. For each refusal the rules predict:
//
//   - llama.cpp refuses a file with that message  =>  ggufguard reports the rule;
//   - ggufguard reports the rule                   =>  llama.cpp does not load the file
//     (it may refuse it for an earlier reason: the loader stops at the first).
//
//   node fuzz/oracle/vocab_refusals.mjs --ggufguard BIN PATH...
//
// Exit 0 when both hold for every file, 1 otherwise, 2 on usage errors.
// llama.cpp here is the build node-llama-cpp bundles (package.json pins
// it); `since` names a refusal that build predates: the second check is
// skipped for it (the file loads there, and refuses in the llama.cpp the
// generated tables come from, src/ggufguard/rules/llama_vocab_tables.inc).
import {collectFiles, runLoader} from "./runner.mjs";
import {judge} from "./verdicts.mjs";

const kRefusals = [
  {rule: "GG7006", message: /unknown tokenizer: '/},
  {rule: "GG7007", message: /unknown pre-tokenizer type: '/},
  {rule: "GG7008", message: /is true, but \S+ is not set/, since: "check_add_special_token"},
  {rule: "GG7009", message: /cannot find tokenizer (vocab|merges) in model file/},
  {rule: "GG7010", message: /precompiled_charsmap too small|Index out of array bounds in precompiled charsmap/},
  // A phi-3 name makes the loader look up four token texts with
  // unordered_map::at (libstdc++ says "_Map_base::at", libc++ "unordered_map::at").
  {rule: "GG9164", message: /_Map_base::at|unordered_map::at/},
  // RWKV's tokenizer loops on "\n", appending a token each time, until the
  // child's memory limit makes the allocation throw. Any other allocation
  // failure reads the same, so only the second check runs for it: a file
  // ggufguard flags must not load.
  {rule: "GG7011", message: /std::bad_alloc/, oneWay: true},
];

async function main(argv) {
  let ggufguard = null;
  const paths = [];
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === "--ggufguard") ggufguard = argv[++i];
    else paths.push(argv[i]);
  }
  if (ggufguard === null || paths.length === 0) {
    process.stderr.write("usage: node vocab_refusals.mjs --ggufguard BIN PATH...\n");
    process.exit(2);
  }
  const files = collectFiles(paths);
  const verdicts = await judge(ggufguard, files);
  const records = await runLoader(files, {vocabOnly: true, timeoutMs: 30000});
  const failures = [];
  const counts = Object.fromEntries(kRefusals.map((r) => [r.rule, {refused: 0, flagged: 0}]));
  for (const rec of records) {
    const {rules} = verdicts.get(rec.file);
    const refused = rec.outcome === "refused" ? rec.message ?? "" : null;
    for (const {rule, message, since, oneWay} of kRefusals) {
      const flagged = rules.includes(rule);
      const refusedForIt = refused !== null && message.test(refused);
      if (flagged) counts[rule].flagged++;
      if (refusedForIt) counts[rule].refused++;
      if (refusedForIt && !flagged && !oneWay) {
        failures.push(`${rec.file}: llama.cpp refuses it ("${refused.slice(0, 200)}"), ggufguard reports no ${rule}`);
      }
      if (flagged && rec.outcome === "loaded" && since === undefined) {
        failures.push(`${rec.file}: ggufguard reports ${rule}, llama.cpp loads its vocabulary`);
      }
    }
  }
  const summary = kRefusals.map(({rule}) => `${rule} ${counts[rule].flagged} flagged/${counts[rule].refused} refused`);
  process.stdout.write(`vocabulary oracle: ${records.length} files; ${summary.join(", ")}\n`);
  for (const f of failures) process.stdout.write(`FAIL ${f}\n`);
  process.exit(failures.length === 0 ? 0 : 1);
}

await main(process.argv.slice(2));
