// Resource ids are UUIDs. Anything else is simply not found, without asking PostgreSQL (which
// would refuse to cast it to uuid).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
