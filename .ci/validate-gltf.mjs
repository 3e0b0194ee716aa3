// Runs the Khronos glTF-Validator over every .glb/.gltf under the folders given; exits 1 on any error.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import validator from 'gltf-validator';

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(glb|gltf)$/i.test(name)) out.push(p);
  }
  return out;
}

const files = process.argv.slice(2).flatMap((d) => walk(d, []));
let failed = 0;
let errors = 0;
let warnings = 0;
for (const f of files) {
  const report = await validator.validateBytes(new Uint8Array(readFileSync(f)), {
    uri: f,
    maxIssues: 50,
    externalResourceFunction: (uri) =>
      Promise.resolve(new Uint8Array(readFileSync(join(dirname(f), decodeURIComponent(uri))))),
  });
  const { numErrors, numWarnings } = report.issues;
  errors += numErrors;
  warnings += numWarnings;
  if (numErrors > 0) {
    failed++;
    console.log(`FAIL ${f}: ${numErrors} errors`);
    for (const m of report.issues.messages.filter((m) => m.severity === 0).slice(0, 10)) {
      console.log(`  ${m.code} ${m.pointer ?? ''}: ${m.message}`);
    }
  } else if (numWarnings > 0 && process.env.GLTF_SHOW_WARNINGS) {
    console.log(`warn ${f}: ${report.issues.messages.map((m) => m.code).join(', ')}`);
  }
}
console.log(`glTF-Validator: ${files.length} files, ${failed} with errors (${errors} errors, ${warnings} warnings)`);
if (files.length === 0) {
  console.log('glTF-Validator: no glTF files were written by the tests');
  process.exit(1);
}
process.exit(failed > 0 ? 1 : 0);
