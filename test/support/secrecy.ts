// Where a secret (a BVN) could leak, gathered as text for a test to search: every row of every
// table of the gateway's database, and a workflow's history with its payloads decoded. Written
// once for every test that checks a secret stays out of them.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { expect } from 'vitest';
import { canonicalJson, sha256 } from '../../src/lib/canonical.ts';

/** Every row of every table of the gateway's database (schema public), each as JSON text. */
export async function everyRow(orm: MikroORM): Promise<string[]> {
  const em = orm.em.fork();
  const tables = await em.execute<{ table_name: string }[]>(
    `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
  );
  const rows: string[] = [];
  for (const { table_name: table } of tables) {
    const found = await em.execute<{ row: string }[]>(`select row_to_json(t)::text as row from "${table}" t`);
    rows.push(...found.map((row) => row.row));
  }
  return rows;
}

/** The workflow's history as JSON, followed by every payload in it decoded (they are base64 JSON). */
export async function historyText(client: Client, workflowId: string): Promise<string> {
  const json = historyToJSON(await client.workflow.getHandle(workflowId).fetchHistory());
  const decoded = [...json.matchAll(/"data":\s*"([A-Za-z0-9+/=]+)"/g)].map((match) =>
    Buffer.from(match[1]!, 'base64').toString('utf8'),
  );
  return `${json}\n${decoded.join('\n')}`;
}

/**
 * Expects no secret in any place. Every place must have content: an empty one would show nothing.
 * `secrets` names each secret for the failure message.
 */
export function expectFoundNowhere(places: Record<string, string>, secrets: Record<string, string>): void {
  for (const [place, text] of Object.entries(places)) {
    expect(text.length, `${place} has content`).toBeGreaterThan(0);
    for (const [name, secret] of Object.entries(secrets)) {
      expect(text.includes(secret), `${name} in ${place}`).toBe(false);
    }
  }
}

/**
 * Expects the idempotency record of `key` to keep neither the secret nor the plain digest of the
 * request that carried it (`method path\nbody`, the body as the store canonicalises it): a digest
 * of a BVN-bearing body is as good as the BVN to whoever can try the 10^11 of them.
 */
export async function expectIdempotencyRecordKeepsNoSecret(
  orm: MikroORM,
  key: string,
  request: { method: string; path: string; body: unknown },
  secret: string,
): Promise<void> {
  const plainDigest = sha256(`${request.method} ${request.path}\n${canonicalJson(request.body)}`);
  const [stored] = await orm.em
    .fork()
    .execute<{ request_hash: string; text: string }[]>(
      'select request_hash, row_to_json(k)::text as text from idempotency_keys k where key = ?',
      [key],
    );
  expect(stored, `an idempotency record for ${key}`).toBeDefined();
  expect(stored!.request_hash).toMatch(/^[0-9a-f]{64}$/);
  expect(stored!.request_hash).not.toBe(plainDigest);
  expect(stored!.text).not.toContain(secret);
}
