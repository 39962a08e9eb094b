// The console in a real browser: Debian's Chromium (found as scripts/chromium.mjs finds it, never
// a downloaded bundle) driven by playwright-core, one browser per test file. People join through
// their invitation and sign in through the real forms, with TOTP codes as an authenticator app
// makes them; pages are checked with axe-core and photographed.
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { CHROMIUM_MISSING, findChromium } from '../../scripts/chromium.mjs';
import { Authenticator, TEST_PASSWORD } from './console.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Launches Chromium headless, or fails with the one line that says how to install it. */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error(CHROMIUM_MISSING);
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
}

export interface SharedBrowser {
  browser: Browser;
  /** A page in a fresh context (its own cookies), at `baseURL` when given. */
  newPage(options?: { baseURL?: string }): Promise<Page>;
}

/** The test file's browser: launched before its tests, closed after them. */
export function useBrowser(): SharedBrowser {
  const shared = {
    browser: undefined as unknown as Browser,
    async newPage(options: { baseURL?: string } = {}) {
      const context = await shared.browser.newContext(options.baseURL ? { baseURL: options.baseURL } : {});
      context.setDefaultTimeout(15_000);
      return context.newPage();
    },
  };
  beforeAll(async () => {
    shared.browser = await launchBrowser();
  });
  afterAll(async () => {
    await shared.browser?.close();
  });
  return shared;
}

/** A person of the console at the browser: their email and password, and their authenticator. */
export class Person {
  totpSecret: string | undefined;
  private readonly authenticator = new Authenticator();

  readonly email: string;
  readonly password: string;

  constructor(email: string, password = TEST_PASSWORD) {
    this.email = email;
    this.password = password;
  }

  /** A code the server will take now (see Authenticator). */
  code(): Promise<string> {
    if (!this.totpSecret) throw new Error(`${this.email} has no TOTP key`);
    return this.authenticator.code(this.totpSecret);
  }
}

/**
 * Joins through an invitation link in the browser: reads the key the page shows, types the
 * password twice and a code, and lands on the overview.
 */
export async function joinInBrowser(page: Page, link: string, person: Person): Promise<void> {
  await page.goto(link);
  person.totpSecret = (await page.getByTestId('totp-secret').textContent())?.trim();
  expect(person.totpSecret).toMatch(/^[A-Z2-7]+$/);
  await page.fill('#password', person.password);
  await page.fill('#confirm', person.password);
  await page.fill('#code', await person.code());
  await Promise.all([page.waitForURL(/\/dashboard$/), page.getByRole('button', { name: 'Join' }).click()]);
}

/**
 * Fills in the sign-in form and sends it (a fresh code unless `code` is given). Signed in (303): waits
 * for the page it leads to; refused: waits for the form's error. The form's answer's status.
 */
export async function signInInBrowser(
  page: Page,
  person: Person,
  options: { code?: string; password?: string } = {},
): Promise<number> {
  if (!/\/dashboard\/sign-in/.test(page.url())) await page.goto('/dashboard/sign-in');
  await page.fill('#email', person.email);
  await page.fill('#password', options.password ?? person.password);
  await page.fill('#code', options.code ?? (person.totpSecret ? await person.code() : ''));
  const [answer] = await Promise.all([
    page.waitForResponse((response) => response.request().method() === 'POST' && /\/sign-in/.test(response.url())),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  if (answer.status() === 303) await page.waitForURL((url) => !url.pathname.startsWith('/dashboard/sign-in'));
  else await page.locator('.error[role=alert]').waitFor();
  return answer.status();
}

/** Signs out with the header's button; waits for the sign-in page. */
export async function signOutInBrowser(page: Page): Promise<void> {
  await Promise.all([page.waitForURL(/\/dashboard\/sign-in/), page.getByRole('button', { name: 'Sign out' }).click()]);
}

const AXE_SOURCE = readFileSync(join(root, 'node_modules/axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * Runs axe-core on the page and fails listing every serious or critical violation (its rule, what
 * it asks for, and where). The console's CSP allows no script at all, so axe is not added as a
 * <script>: its source is evaluated through the DevTools protocol, which the CSP does not govern.
 */
export async function expectAccessible(page: Page): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<any> } }).axe;
    const results = await axe.run((globalThis as any).document, { resultTypes: ['violations'] });
    return results.violations as AxeViolation[];
  });
  const serious = violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.impact} ${violation.id}: ${violation.help} at ${violation.nodes
          .map((node) => JSON.stringify(node.target))
          .join(', ')}`,
    );
  expect(serious, `axe on ${page.url()}`).toEqual([]);
}

let screenshotDir: string | undefined;

/**
 * Photographs the whole page: into docs/console/<name>.png with UPDATE_SCREENSHOTS=1, otherwise
 * into a temporary folder (always taken, but a normal run leaves the repository alone). Its path.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  if (!screenshotDir) {
    screenshotDir =
      process.env.UPDATE_SCREENSHOTS === '1'
        ? join(root, 'docs/console')
        : mkdtempSync(join(tmpdir(), 'console-screenshots-'));
    mkdirSync(screenshotDir, { recursive: true });
  }
  const path = join(screenshotDir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** The value of a cookie of the page's context (undefined: none). */
export async function cookieOf(context: BrowserContext, name: string): Promise<string | undefined> {
  return (await context.cookies()).find((cookie) => cookie.name === name)?.value;
}
