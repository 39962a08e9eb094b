// Writes a results folder's latest.md and latest.svg again from its latest.json, measuring nothing:
// for a change to how results are shown (test/bench/report.ts). `npm run bench` writes all three.
//   node test/bench/render.ts [--out test/bench/results]
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { type BenchResults, writeResults } from './report.ts';

const { values: flags } = parseArgs({ options: { out: { type: 'string', default: 'test/bench/results' } } });
const out = resolve(PROJECT_ROOT, flags.out);
const results = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8')) as BenchResults;
process.stdout.write(
  `written: ${writeResults(out, results)
    .map((file) => join(flags.out, file))
    .join(', ')}\n`,
);
