// ggufguard's verdicts on files, for the oracles (differential.mjs,
// vocab_refusals.mjs): `ggufguard validate --format json --policy default`,
// 100 files a run.
import {execFile} from "node:child_process";
import {promisify} from "node:util";

const run = promisify(execFile);

// Resolves to a Map from each file to {accepted, rules: the IDs of its error findings}.
export async function judge(ggufguard, files) {
  const verdicts = new Map();
  for (let i = 0; i < files.length; i += 100) {
    const chunk = files.slice(i, i + 100);
    let stdout;
    try {
      ({stdout} = await run(ggufguard, ["validate", "--format", "json", "--policy", "default", ...chunk],
                            {maxBuffer: 256 << 20}));
    } catch (err) {
      if (err.code !== 1 || err.stdout === undefined) throw new Error(`ggufguard failed: ${err.message}`);
      stdout = err.stdout;  // exit 1: some file is invalid
    }
    const report = JSON.parse(stdout);
    report.files.forEach((f, k) => {
      const errors = (f.findings ?? []).filter((x) => x.severity === "error").map((x) => x.rule);
      verdicts.set(chunk[k], {accepted: f.verdict === "valid", rules: [...new Set(errors)]});
    });
  }
  return verdicts;
}
