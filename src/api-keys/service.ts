// The use cases of keys the tenant manages (decisions §19): list the caller's tenant mode's keys,
// make one (scopes within the caller's), roll one (a new secret, the old one working for the
// overlap), revoke one (never the last that can manage keys). Each change and its audit entry are
// one transaction. Another tenant's key, or the other mode's, is not found, as an unknown id is.
import type { MikroORM } from '@mikro-orm/postgresql';
import { type RequestActor, recordAuditEntry } from '../audit/log.ts';
import type { ResolvedKey } from '../http/auth.ts';
import { ApiError } from '../http/errors.ts';
import { isUuid } from '../http/ids.ts';
import { type Window, paginationView } from '../http/pagination.ts';
import { holdsScope, isScope } from '../http/scopes.ts';
import { readTransferPolicy } from '../transfer-policy/service.ts';
import { issueKey, listModeKeys, modeKeyById, revokeModeKey, rollKeySecret } from '../tenants/tenants.ts';
import { type CreateKeyBody, MAX_KEY_LIFETIME_DAYS, type RollKeyBody } from './schemas.ts';
import { keyView } from './views.ts';

/** How long a rolled key's old secret works when the roll does not say. */
export const DEFAULT_ROLL_OVERLAP_HOURS = 24;

const notFound = (id: string) => ApiError.notFound(`API key ${id}`);

export class ApiKeyService {
  private readonly orm: MikroORM;

  constructor(orm: MikroORM) {
    this.orm = orm;
  }

  async list(key: ResolvedKey, window: Window) {
    const page = await listModeKeys(this.orm.em.fork(), key.tenantId, window);
    return { items: page.rows.map(keyView), pagination: paginationView(window, page.total) };
  }

  async create(key: ResolvedKey, body: CreateKeyBody, by: RequestActor) {
    // A key gives only what it holds: `*` gives anything, any other key a subset of its own.
    for (const scope of body.scopes) {
      if (!isScope(scope) || (scope === '*' ? !key.scopes.includes('*') : !holdsScope(key.scopes, scope))) {
        throw new ApiError('forbidden', `this API key cannot give the scope ${scope}: it does not hold it`, {
          required_scope: scope,
        });
      }
    }
    const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw ApiError.validation([{ path: 'expires_at', message: 'must be in the future' }]);
    }
    if (expiresAt && expiresAt.getTime() > Date.now() + MAX_KEY_LIFETIME_DAYS * 86_400_000) {
      throw ApiError.validation([
        { path: 'expires_at', message: `must be within ${MAX_KEY_LIFETIME_DAYS} days from now` },
      ]);
    }
    const allowedIps = body.allowed_ips ?? [];
    return this.orm.em.fork().transactional(async (tx) => {
      if (key.mode === 'live' && allowedIps.length === 0) {
        const policy = await readTransferPolicy(tx, key.tenantId);
        if (policy.live_keys_need_ip_allow_list) {
          throw new ApiError(
            'failed_precondition',
            'the transfer policy requires every live key to have an IP allow-list: give allowed_ips',
            { reason: 'ip_allow_list_required' },
          );
        }
      }
      const issued = await issueKey(tx, key.tenantId, key.mode, {
        name: body.name,
        scopes: body.scopes,
        allowedIps,
        expiresAt,
      });
      const row = (await modeKeyById(tx, key.tenantId, issued.key_id))!;
      await recordAuditEntry(tx, {
        tenantId: key.tenantId,
        action: 'api_key.created',
        ...by,
        target: { type: 'api_key', id: row.id },
        details: {
          name: row.name,
          prefix: row.prefix,
          scopes: row.scopes,
          allowed_ips: row.allowedIps,
          expires_at: row.expiresAt?.toISOString() ?? null,
        },
      });
      return { ...keyView(row), secret: issued.api_key };
    });
  }

  async roll(key: ResolvedKey, id: string, body: RollKeyBody, by: RequestActor) {
    if (!isUuid(id)) throw notFound(id);
    const overlapHours = body?.expires_in_hours ?? DEFAULT_ROLL_OVERLAP_HOURS;
    return this.orm.em.fork().transactional(async (tx) => {
      const rolled = await rollKeySecret(tx, key.tenantId, id, overlapHours);
      if (rolled.outcome === 'not_found') throw notFound(id);
      if (rolled.outcome === 'not_working') {
        throw new ApiError('failed_precondition', `API key ${id} is revoked or expired: it cannot be rolled`);
      }
      await recordAuditEntry(tx, {
        tenantId: key.tenantId,
        action: 'api_key.rolled',
        ...by,
        target: { type: 'api_key', id },
        details: {
          name: rolled.row.name,
          previous_prefix: rolled.previousPrefix,
          prefix: rolled.row.prefix,
          expires_in_hours: overlapHours,
          previous_secret_expires_at: rolled.previousExpiresAt,
        },
      });
      return {
        ...keyView(rolled.row),
        secret: rolled.secret,
        previous_secret_expires_at: rolled.previousExpiresAt,
      };
    });
  }

  async revoke(key: ResolvedKey, id: string, by: RequestActor) {
    if (!isUuid(id)) throw notFound(id);
    return this.orm.em.fork().transactional(async (tx) => {
      const revoked = await revokeModeKey(tx, key.tenantId, id);
      if (revoked.outcome === 'not_found') throw notFound(id);
      if (revoked.outcome === 'last_key_admin') {
        throw new ApiError(
          'failed_precondition',
          'this is the last working key that can manage keys (keys:write): make another one before revoking it',
          { reason: 'last_key_admin' },
        );
      }
      if (revoked.outcome === 'revoked') {
        await recordAuditEntry(tx, {
          tenantId: key.tenantId,
          action: 'api_key.revoked',
          ...by,
          target: { type: 'api_key', id },
          details: { name: revoked.row.name, prefix: revoked.row.prefix },
        });
      }
      return keyView(revoked.row);
    });
  }
}
