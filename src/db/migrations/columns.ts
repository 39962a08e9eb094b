// The column definitions most tables share, written once for the migrations (the entities' side
// is src/db/columns.ts). They are part of applied history: a fragment never changes once a
// released migration uses it (add another instead). A fragment of several columns is joined as
// the migrations indent their columns, so the statements' text is the same as written out.
const NEXT_COLUMN = ',\n        ';

/** A uuid primary key. */
export const ID = 'id uuid primary key';

/** The tenant a row belongs to. */
export const TENANT_ID = 'tenant_id uuid not null references tenants (id)';

/** `id` and `tenant_id`: a tenant's row (tenantOwned() in src/db/columns.ts). */
export const TENANT_OWNED = [ID, TENANT_ID].join(NEXT_COLUMN);

/** Set by the database on insert. */
export const CREATED_AT = 'created_at timestamptz not null default now()';

/** `created_at` and `updated_at`, set by the database on insert (timestamps() in src/db/columns.ts). */
export const TIMESTAMPS = [CREATED_AT, 'updated_at timestamptz not null default now()'].join(NEXT_COLUMN);
