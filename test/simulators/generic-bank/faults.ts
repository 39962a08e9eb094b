// Faults an operator or a test plans for the bank's next calls (never for /control/*): a 503, an
// HTML error page from a proxy, a hang (never answered), a reset connection, a 422 `limit_exceeded`
// (the contract's "refused, not taken", as a limit check that already counts an earlier attempt
// answers) — as a bank's edge answers before the bank itself sees the call — and a lost answer:
// the submission is done and recorded, then its connection is destroyed before a byte of the
// answer is written. A plan may be kept to some submissions only (`only`): repeats of a reference
// the bank was offered before (a retry), or, for a lost answer, submissions the bank took (a
// refusal is answered). Plans, and the record of the faults met, live in memory only: a restarted
// bank has none, like a proxy that was restarted with it.

export type FaultKind = '503' | 'html' | 'hang' | 'reset' | 'limit_422' | 'lose_answer';

/** Which submissions (`POST /transfers`) a plan meets: every call its route matches when absent. */
export type FaultOnly = 'repeats' | 'taken';

export interface FaultPlan {
  fault: FaultKind;
  /** How many more calls meet it. */
  remaining: number;
  /** `METHOD /path` prefix the call must match, e.g. `POST /transfers`; any call when null. */
  route: string | null;
  /** Left out when the plan meets every call its route matches (so plans read as they always did). */
  only?: FaultOnly;
}

/** A submission as the faults weigh it: its reference, and whether it repeats one or was taken. */
export interface Submission {
  reference: string;
  /** The bank was offered this reference before this call. */
  repeat: boolean;
}

export interface FaultMet {
  fault: FaultKind;
  /** `METHOD /path` of the call that met it. */
  call: string;
  /** The submission's reference, when the call was one. */
  reference: string | null;
  at: string;
}

export class Faults {
  readonly plans: FaultPlan[] = [];
  /** Every fault met since the bank started, in order: what a test counts of what its plans did. */
  readonly met: FaultMet[] = [];

  plan(fault: FaultKind, count: number, route: string | null, only?: FaultOnly): void {
    this.plans.push({ fault, remaining: count, route, ...(only ? { only } : {}) });
  }

  clear(): void {
    this.plans.length = 0;
  }

  /**
   * The edge fault this call meets, if any (taking one from its plan). `submission` is given for a
   * `POST /transfers` whose body names a reference; a plan kept to repeats meets nothing else.
   */
  atEdge(method: string, path: string, submission?: Submission): Exclude<FaultKind, 'lose_answer'> | undefined {
    const plan = this.plans.find(
      (candidate) =>
        candidate.fault !== 'lose_answer' &&
        matches(candidate.route, method, path) &&
        (candidate.only !== 'repeats' || submission?.repeat === true),
    );
    if (!plan) return undefined;
    this.use(plan, `${method} ${path}`, submission?.reference ?? null);
    return plan.fault as Exclude<FaultKind, 'lose_answer'>;
  }

  /**
   * Whether this submission's answer is to be lost (taking one from the plan), once the bank has
   * done its work: `taken` says whether it holds the transfer now.
   */
  losesAnswer(submission?: Submission & { taken: boolean }): boolean {
    const plan = this.plans.find(
      (candidate) =>
        candidate.fault === 'lose_answer' &&
        (candidate.only === undefined ||
          (candidate.only === 'repeats' ? submission?.repeat === true : submission?.taken === true)),
    );
    if (!plan) return false;
    this.use(plan, 'POST /transfers', submission?.reference ?? null);
    return true;
  }

  private use(plan: FaultPlan, call: string, reference: string | null): void {
    plan.remaining -= 1;
    if (plan.remaining <= 0) this.plans.splice(this.plans.indexOf(plan), 1);
    this.met.push({ fault: plan.fault, call, reference, at: new Date().toISOString() });
  }
}

function matches(route: string | null, method: string, path: string): boolean {
  return route === null || `${method} ${path}`.startsWith(route);
}
