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
