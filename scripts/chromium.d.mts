// Types of scripts/chromium.mjs for the TypeScript that imports it (test/support/browser.ts).
export declare const CHROMIUM_CANDIDATES: string[];
export declare const CHROMIUM_MISSING: string;
export declare function findChromium(env?: Record<string, string | undefined>): string | undefined;
