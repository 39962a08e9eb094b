// A stack with two live connectors, as decisions §13 and §17 are tested on them: the Paystack
// simulator and the generic test bank (test/simulators/generic-bank.ts, its own process), in the
// LIVE_CONNECTORS order a file gives. The test bank calls the gateway back, so it starts once the
// gateway listens; its journal (every offer of a transfer, taken or not) is its own record of what
// it was sent.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type GenericTestBank, startGenericTestBank } from '../simulators/generic-bank.ts';
import type { PaystackSimulator } from '../simulators/paystack.ts';
import { freePort } from './ports.ts';
import { type GatewayStack, useGatewayStack } from './stack.ts';

export interface LiveBanks {
  stack: GatewayStack;
  paystack: PaystackSimulator;
  bank: GenericTestBank;
  /** GENERIC_BANK_API_KEY: the bearer key of every call to the test bank, its control calls too. */
  bankKey: string;
  /** GENERIC_BANK_WEBHOOK_SECRET: what signs the test bank's callbacks. */
  bankSecret: string;
}

/** The file's stack and banks, there from its first test on. */
export function useLiveBanks(options: {
  taskQueue: string;
  liveConnectors: 'paystack,generic' | 'generic,paystack';
}): LiveBanks {
  const banks = {
    bankKey: `bank-key-${randomBytes(8).toString('hex')}`,
    bankSecret: `whsec_${randomBytes(32).toString('base64')}`,
  } as LiveBanks;
  let bankPort: number;
  let bankDir: string;
  beforeAll(async () => {
    bankPort = await freePort();
    bankDir = mkdtempSync(join(tmpdir(), 'live-banks-'));
  });
  useGatewayStack(
    {
      taskQueue: options.taskQueue,
      providerTimeoutMs: 500,
      paystack: true,
      // The generic test bank at the port it will listen on.
      liveConnectorEnv: () => ({
        LIVE_CONNECTORS: options.liveConnectors,
        GENERIC_BANK_URL: `http://127.0.0.1:${bankPort}`,
        GENERIC_BANK_API_KEY: banks.bankKey,
        GENERIC_BANK_WEBHOOK_SECRET: banks.bankSecret,
      }),
    },
    (started) => {
      banks.stack = started;
      banks.paystack = started.paystack!;
    },
  );
  beforeAll(async () => {
    banks.bank = await startGenericTestBank({
      apiKey: banks.bankKey,
      webhookSecret: banks.bankSecret,
      dataDir: bankDir,
      port: bankPort,
      callbackUrl: `${banks.stack.gatewayUrl}/provider-callbacks/generic`,
      completionDelayMs: 200,
    });
  });
  afterAll(async () => {
    await banks.bank?.stop();
    if (bankDir) rmSync(bankDir, { recursive: true, force: true });
  });
  return banks;
}

/** How many times the test bank was sent the transfer, taken or not (its journal). */
export function offersAt(bank: GenericTestBank, reference: string): number {
  return readFileSync(bank.journalPath, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { kind: string; reference?: string })
    .filter((entry) => entry.kind === 'transfer.attempted' && entry.reference === reference).length;
}
