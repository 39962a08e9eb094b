// Workflow tests with stubbed activities (test/workflows/): the time-skipping test server, the
// project's workflow bundle built once per file, and per test a worker whose activities are plain
// functions that record every call (no database, no bank). Each test runs its own worker on its own
// task queue, so its stubs see only its workflows.
import { Context } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { afterAll, beforeAll } from 'vitest';
import { startTimeSkippingEnv } from './time-skipping.ts';
import { workflowBundle } from './worker.ts';

/** One call an activity stub saw: its argument, and when (server time) that attempt was scheduled. */
export interface StubCall<Name extends string = string> {
  name: Name;
  input: any;
  scheduledAtMs: number;
}

type ActivityMap = Record<string, (input: any) => Promise<unknown>>;

/**
 * Wraps each stub so that every attempt is recorded in order; `calledWith(name)` resolves with the
 * first call's input once the workflow has called that activity (for tests that act meanwhile).
 */
export function recordingStubs<A extends ActivityMap>(stubs: A) {
  const calls: StubCall<keyof A & string>[] = [];
  const waiting = new Map<string, ((input: unknown) => void)[]>();
  const activities = Object.fromEntries(
    Object.entries(stubs).map(([name, stub]) => [
      name,
      async (input: unknown) => {
        calls.push({ name, input, scheduledAtMs: Context.current().info.currentAttemptScheduledTimestampMs });
        for (const resolve of waiting.get(name) ?? []) resolve(input);
        waiting.delete(name);
        return stub(input);
      },
    ]),
  ) as unknown as A;
  return {
    activities,
    calls,
    /** The activities called, by name, in order. */
    names: () => calls.map((call) => call.name),
    /** The calls, by name and input, in order. */
    seen: () => calls.map(({ name, input }) => ({ name, input })),
    /** The inputs of every call of one activity, in order. */
    inputsOf: (name: keyof A & string) => calls.filter((call) => call.name === name).map((call) => call.input),
    calledWith(name: keyof A & string): Promise<any> {
      const earlier = calls.find((call) => call.name === name);
      if (earlier) return Promise.resolve(earlier.input);
      return new Promise((resolve) => waiting.set(name, [...(waiting.get(name) ?? []), resolve]));
    },
  };
}

/** A promise a stub awaits until the test opens it: holds an activity while the test acts. */
export function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

export interface StubWorkflowEnv {
  env: TestWorkflowEnvironment;
  /** Runs `body` while a worker with these activities polls a task queue of its own (passed to body). */
  withWorker<R>(activities: object, body: (taskQueue: string) => Promise<R>): Promise<R>;
}

/** The time-skipping server and the workflow bundle, for the file's tests; torn down after them. */
export function useStubWorkflowEnv(name: string): StubWorkflowEnv {
  let env: TestWorkflowEnvironment | undefined;
  let bundle: WorkflowBundleWithSourceMap | undefined;
  let queues = 0;
  beforeAll(async () => {
    env = await startTimeSkippingEnv({ searchAttributes: true });
    bundle = await workflowBundle();
  });
  afterAll(async () => {
    await env?.teardown();
  });
  return {
    get env() {
      return env!;
    },
    async withWorker(activities, body) {
      queues += 1;
      const taskQueue = `${name}-${queues}`;
      const worker = await Worker.create({
        connection: env!.nativeConnection,
        taskQueue,
        workflowBundle: bundle!,
        activities,
      });
      return worker.runUntil(body(taskQueue));
    },
  };
}
