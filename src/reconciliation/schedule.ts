// The daily reconciliation Schedule on Temporal: created by the worker on start, brought in line
// with RECONCILIATION_TIME when that changes, removed when it is `off`. Schedules are the
// Temporal-native cron: a missed run (server down) is caught up within a day, and runs never
// overlap. Operators see and trigger it in the Web UI (Schedules) or with `temporal schedule`.
import {
  type Client,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type ScheduleOptions,
} from '@temporalio/client';
import {
  RECONCILIATION_WORKFLOW_TYPE,
  type ReconciliationInput,
  reconciliationScheduleId,
} from '../../workflows/reconciliation/definitions.ts';

export type ScheduleChange = 'created' | 'updated' | 'unchanged' | 'removed' | 'off';

export async function ensureReconciliationSchedule(
  client: Client,
  options: { taskQueue: string; time: string },
): Promise<ScheduleChange> {
  const scheduleId = reconciliationScheduleId(options.taskQueue);
  const handle = client.schedule.getHandle(scheduleId);
  if (options.time === 'off') {
    try {
      await handle.delete();
      return 'removed';
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) return 'off';
      throw error;
    }
  }
  const [hour, minute] = options.time.split(':').map(Number) as [number, number];
  const args: [ReconciliationInput] = [{ trigger: 'schedule' }];
  const schedule: ScheduleOptions = {
    scheduleId,
    spec: { calendars: [{ hour, minute }], timezone: 'UTC' },
    action: {
      type: 'startWorkflow',
      workflowType: RECONCILIATION_WORKFLOW_TYPE,
      workflowId: `reconciliation:scheduled:${options.taskQueue}`,
      taskQueue: options.taskQueue,
      args,
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
  };
  try {
    await client.schedule.create(schedule);
    return 'created';
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
  const current = await handle.describe();
  const calendar = current.spec.calendars?.[0];
  const same =
    current.spec.calendars?.length === 1 &&
    JSON.stringify(calendar?.hour) === JSON.stringify([{ start: hour, end: hour, step: 1 }]) &&
    JSON.stringify(calendar?.minute) === JSON.stringify([{ start: minute, end: minute, step: 1 }]) &&
    current.action.type === 'startWorkflow' &&
    current.action.taskQueue === options.taskQueue;
  if (same) return 'unchanged';
  await handle.update((previous) => ({ ...previous, spec: schedule.spec, action: schedule.action }));
  return 'updated';
}
