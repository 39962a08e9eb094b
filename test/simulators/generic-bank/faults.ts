// Faults an operator or a test plans for the bank's next calls (never for /control/*): a 503, an
// HTML error page from a proxy, a hang (never answered), a reset connection, a 422 `limit_exceeded`
// (the contract's "refused, not taken", as a limit check that already counts an earlier attempt
// answers) — as a bank's edge answers before the bank itself sees the call — and a lost answer:
// the submission is done and recorded, then its connection is destroyed before a byte of the
// answer is written. Plans live in memory only: a restarted bank has none, like a proxy that was
// restarted with it.

export type FaultKind = '503' | 'html' | 'hang' | 'reset' | 'limit_422' | 'lose_answer';

export interface FaultPlan {
  fault: FaultKind;
  /** How many more calls meet it. */
  remaining: number;
  /** `METHOD /path` prefix the call must match, e.g. `POST /transfers`; any call when null. */
  route: string | null;
}

export class Faults {
  readonly plans: FaultPlan[] = [];

  plan(fault: FaultKind, count: number, route: string | null): void {
    this.plans.push({ fault, remaining: count, route });
  }

  clear(): void {
    this.plans.length = 0;
  }

  /** The edge fault this call meets, if any (taking one from its plan). */
  atEdge(method: string, path: string): Exclude<FaultKind, 'lose_answer'> | undefined {
    const plan = this.plans.find(
      (candidate) => candidate.fault !== 'lose_answer' && matches(candidate.route, method, path),
    );
    if (!plan) return undefined;
    this.use(plan);
    return plan.fault as Exclude<FaultKind, 'lose_answer'>;
  }

  /** Whether this submission's answer is to be lost (taking one from the plan). */
  losesAnswer(): boolean {
    const plan = this.plans.find((candidate) => candidate.fault === 'lose_answer');
    if (!plan) return false;
    this.use(plan);
    return true;
  }

  private use(plan: FaultPlan): void {
    plan.remaining -= 1;
    if (plan.remaining <= 0) this.plans.splice(this.plans.indexOf(plan), 1);
  }
}

function matches(route: string | null, method: string, path: string): boolean {
  return route === null || `${method} ${path}`.startsWith(route);
}
