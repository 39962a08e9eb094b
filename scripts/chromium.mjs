// Where the browser tests find Chromium: Debian's `chromium` package, driven by playwright-core
// (which never downloads a browser here: no `playwright install`). Shared by scripts/install-tools.mjs
// (which installs the package when it is missing) and test/support/browser.ts (which launches it).
import { accessSync, constants } from 'node:fs';

/** Where Chromium is looked for, in order: CHROMIUM_PATH, then Debian's and Ubuntu's names. */
export const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** What to do when there is none: the one line both the install and the browser tests print. */
export const CHROMIUM_MISSING =
  "no Chromium for the browser tests: install Debian's package (as root: apt-get update && apt-get install -y chromium) " +
  'or set CHROMIUM_PATH=/path/to/chromium';

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The Chromium executable to use (CHROMIUM_PATH when set, even if absent: it is then reported), or undefined. */
export function findChromium(env = process.env) {
  if (env.CHROMIUM_PATH) return executable(env.CHROMIUM_PATH) ? env.CHROMIUM_PATH : undefined;
  return CHROMIUM_CANDIDATES.find(executable);
}
