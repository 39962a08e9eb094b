// The Worker options of each worker process, in one place so that the test harness
// (test/support/worker.ts) runs its workers exactly as production does.
import type { WorkerOptions } from '@temporalio/worker';

/**
 * The webhook worker's slots: at most `slots` attempts at once, whoever's they are (attempts are
 * activities; runs recorded while they were local activities take local-activity slots). A tenant holds at most
 * WEBHOOK_TENANT_CONCURRENCY of them (src/webhooks/attempt-slots.ts). Workflow tasks keep the SDK's
 * default slots: a delivery's workflow task is short, and one waiting for a tenant slot has none.
 */
export function webhookWorkerSlots(
  slots: number,
): Pick<WorkerOptions, 'maxConcurrentActivityTaskExecutions' | 'maxConcurrentLocalActivityExecutions'> {
  return { maxConcurrentActivityTaskExecutions: slots, maxConcurrentLocalActivityExecutions: slots };
}

/**
 * A lane's slots (the worker's batches and sandbox lanes, decisions §18): at most `slots`
 * activities, local activities and workflow tasks at once, all the lane's own, so that however much
 * work waits there it never holds a slot of the gateway queue's Worker, where live single transfers
 * run.
 */
export function laneWorkerSlots(
  slots: number,
): Pick<
  WorkerOptions,
  'maxConcurrentActivityTaskExecutions' | 'maxConcurrentLocalActivityExecutions' | 'maxConcurrentWorkflowTaskExecutions'
> {
  return {
    maxConcurrentActivityTaskExecutions: slots,
    maxConcurrentLocalActivityExecutions: slots,
    maxConcurrentWorkflowTaskExecutions: slots,
  };
}
