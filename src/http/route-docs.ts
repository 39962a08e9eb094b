// A tenant route's schema, written once: its area's tag, a summary, the API key as security, and
// its shapes (params, querystring, body, response). Error answers are added by error-docs.ts.
export function tenantRouteSchema<const Shapes extends object>(tag: string, summary: string, shapes: Shapes) {
  return { tags: [tag], summary, security: [{ apiKey: [] }], ...shapes };
}

/** The schema writer of one area's routes: `const doc = routeSchemasOf('cards')`. */
export function routeSchemasOf(tag: string) {
  return <const Shapes extends object>(summary: string, shapes: Shapes) => tenantRouteSchema(tag, summary, shapes);
}
