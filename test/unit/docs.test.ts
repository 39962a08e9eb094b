// The README and docs/ against the code they describe, so that a fact cannot drift unnoticed: the
// README stays short and its two commands real; every link and every file path a page names
// exists; every environment variable, operator command, ledger check and webhook event is where a
// reader looks for it. (The endpoints are checked against the app's own OpenAPI document in
// test/integration/http-platform.test.ts.)
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.ts';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { EVENT_TYPES } from '../../src/features.ts';

const read = (path: string) => readFileSync(join(PROJECT_ROOT, path), 'utf8');

/** README.md, every page under docs/, and the benchmark's results page: the project's prose. */
function pages(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
    );
  return ['README.md', ...walk('docs'), 'test/bench/results/latest.md'];
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...withoutCode.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));
}

const NUMBER_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];

describe('the README', () => {
  const readme = read('README.md');

  it('is at most 300 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
  });

  it('gives the two commands as they work: npm start and npm test after npm install, as CI runs them', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm install && npm test');
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe('node src/stack/start.ts');
    expect(scripts.test).toMatch(/^npm run lint && npm run typecheck && vitest run /);
    expect(read('.ci/run')).toMatch(/npm install[^\n]*\nnpm test\n?$/);
  });
});

describe('every page', () => {
  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const page of pages()) {
      const text = read(page).replace(/^```[\s\S]*?^```/gm, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const file = path === '' ? page : join(dirname(page), path);
        if (!existsSync(join(PROJECT_ROOT, file))) {
          broken.push(`${page}: ${target} (no ${file})`);
        } else if (anchor && file.endsWith('.md') && !anchorsOf(read(file)).has(anchor)) {
          broken.push(`${page}: ${target} (no heading #${anchor} in ${file})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('names only files and folders that exist', () => {
    const missing: string[] = [];
    for (const page of pages()) {
      for (const [, path] of read(page).matchAll(
        /`((?:src|test|workflows|activities|worker|scripts|docs|\.ci)\/[^`\s]*)`/g,
      )) {
        // A pattern (`src/<feature>/`, `workflows/*-definitions.ts`) or an elision names no one file.
        if (/[<>*{}…]/.test(path!)) continue;
        if (!existsSync(join(PROJECT_ROOT, path!))) missing.push(`${page}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('the reference pages', () => {
  it('docs/configuration.md names every variable src/config.ts reads', () => {
    const variables = [...read('src/config.ts').matchAll(/^ {4}([A-Z][A-Z0-9_]+): /gm)].map((match) => match[1]!);
    expect(variables.length).toBeGreaterThan(40);
    const page = read('docs/configuration.md');
    expect(variables.filter((name) => !page.includes(`\`${name}\``))).toEqual([]);
  });

  it('docs/operations.md names every command of the admin CLI', () => {
    const help = spawnSync(process.execPath, [join(PROJECT_ROOT, 'src/admin-cli/main.ts'), 'help'], {
      encoding: 'utf8',
    });
    const usage = `${help.stdout}${help.stderr}`;
    const commands = [...usage.matchAll(/^ {2}([a-z-]+ [a-z-]+)(?= |$)/gm)].map((match) => match[1]!);
    expect(commands.length).toBeGreaterThan(20);
    const page = read('docs/operations.md');
    expect(commands.filter((command) => !new RegExp(`\`${command}[ \`]`).test(page))).toEqual([]);
  });

  it('docs/ledger.md lists every check of `ledger verify`, and every page gives their number as it is', async () => {
    const { checks } = await verifyLedger(() => Promise.resolve([]));
    const page = read('docs/ledger.md');
    expect(checks.filter((check) => !page.includes(`\`${check.name}\``))).toEqual([]);
    expect(page).toContain(`${NUMBER_WORDS[checks.length] ?? checks.length} checks`);
    // Anywhere a page counts them ("eight checks", "all 8 checks"), the count is today's; the
    // benchmark's recorded run says what held at its own commit, and a new run rewrites it.
    const wrong = pages()
      .filter((file) => file !== 'test/bench/results/latest.md')
      .flatMap((file) =>
        [...read(file).matchAll(/\b(zero|one|two|three|four|five|six|seven|eight|nine|ten|\d+) checks\b/gi)]
          .filter(([, number]) => {
            const word = number!.toLowerCase();
            return (/^\d+$/.test(word) ? Number(word) : NUMBER_WORDS.indexOf(word)) !== checks.length;
          })
          .map((match) => `${file}: ${match[0]}`),
      );
    expect(wrong).toEqual([]);
  });

  it('docs/webhooks.md names every event a tenant can subscribe to', () => {
    const page = read('docs/webhooks.md');
    expect(EVENT_TYPES.filter((type) => !page.includes(`\`${type}\``))).toEqual([]);
  });
});
