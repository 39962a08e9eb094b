// Temporary virtual accounts expire on time through a durable timer, checked under Temporal's
// time-skipping test server.
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { TransferService } from '../../src/transfers/service.ts';
import { banksOf } from '../../src/connectors/registry.ts';
import { VirtualAccountService } from '../../src/virtual-accounts/service.ts';
import { expiryStatusQuery, expiryWorkflowId } from '../../workflows/virtual-accounts/definitions.ts';
import { bvnKeysFrom } from '../../src/identity/bvn.ts';
import { TEST_BVN_SECRET, createFundedTenant, resolvedTestKey } from '../support/app.ts';
import { recordHistoryOf } from '../support/histories.ts';
import type { TestDatabase } from '../support/database.ts';
import { useTimeSkippingStack } from '../support/time-skipping.ts';

const TASK_QUEUE = 'va-expiry';

let env: TestWorkflowEnvironment;
let db: TestDatabase;
let accounts: VirtualAccountService;

useTimeSkippingStack({ taskQueue: TASK_QUEUE, bank: true, providerTimeoutMs: 2_000 }, (stack) => {
  ({ env, db } = stack);
  // A plain client, not the environment's: waiting on the create workflow's result must not
  // skip time (the environment's client lets the server skip every timer while it waits, the
  // expiry's 24 h included); time moves only with env.sleep below.
  const client = new Client({ connection: env.connection });
  accounts = new VirtualAccountService({
    orm: db.orm,
    client,
    taskQueue: TASK_QUEUE,
    providers: stack.providers,
    bvnKeys: bvnKeysFrom(TEST_BVN_SECRET),
    transfers: new TransferService({
      orm: db.orm,
      client,
      taskQueue: TASK_QUEUE,
      banks: (mode) => banksOf(stack.providers, mode),
    }),
  });
});

describe('a temporary virtual account', () => {
  it('moves to expired at expires_at, and a standard one does not', async () => {
    const tenant = await createFundedTenant(db.orm);
    const key = resolvedTestKey(tenant.tenantId, ['standard', 'dedicated', 'temporary']);
    const temporary = (
      await accounts.create(key, { customer_id: 'c', account_name: 'Short Lived', account_type: 'temporary' })
    ).body as { id: string; expires_at: string };
    const standard = (await accounts.create(key, { customer_id: 'c', account_name: 'Long Lived' })).body as {
      id: string;
    };
    expect(temporary.expires_at).not.toBeNull();

    await env.sleep('23 hours');
    expect((await accounts.get(tenant.tenantId, temporary.id)).status).toBe('active');
    const handle = env.client.workflow.getHandle(expiryWorkflowId(temporary.id));
    expect(await handle.query(expiryStatusQuery)).toEqual({
      accountId: temporary.id,
      expiresAt: temporary.expires_at,
      status: 'waiting',
    });
    await env.sleep('2 hours');
    expect(await handle.result()).toBe('expired');
    await recordHistoryOf('virtual-account-expiry', handle);
    expect((await accounts.get(tenant.tenantId, temporary.id)).status).toBe('expired');
    expect((await accounts.get(tenant.tenantId, standard.id)).status).toBe('active');
  }, 120_000);
});
