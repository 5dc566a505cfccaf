/**
 * Prints the scenario report of docs/investigations.md; with `--write`, replaces the report
 * between its markers in that file. `npm run scenarios:report -w @monitor/investigator [-- --write]`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { scenarioReport } from './scenario-report.js';

const start = '<!-- scenario-report:start -->';
const end = '<!-- scenario-report:end -->';
const docPath = fileURLToPath(new URL('../../../../docs/investigations.md', import.meta.url));

const report = scenarioReport({ extraSeeds: 30 });
if (process.argv.includes('--write')) {
  const doc = readFileSync(docPath, 'utf8');
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${docPath} has no ${start} … ${end} markers`);
  writeFileSync(docPath, `${doc.slice(0, from + start.length)}\n${report}\n${doc.slice(to)}`);
  console.log(`wrote the report into ${docPath}`);
} else {
  console.log(report);
}
