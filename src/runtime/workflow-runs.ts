// The create paths' replay safety, written once: a workflow runs once per id (a business key:
// request_id, Idempotency-Key, account id) and the API answers its result. A run already going, or
// finished, under the id is joined; a failed one may run again (the client's retry).
import { type Client, type WorkflowStartOptions, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Workflow, WorkflowResultType } from '@temporalio/common';

export async function executeOnce<W extends Workflow>(
  client: Client,
  workflowType: string,
  options: { workflowId: string; taskQueue: string; args: Parameters<W> },
): Promise<WorkflowResultType<W>> {
  try {
    const start = {
      workflowId: options.workflowId,
      taskQueue: options.taskQueue,
      args: options.args,
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
    } as unknown as WorkflowStartOptions<W>;
    return await client.workflow.execute<W>(workflowType, start);
  } catch (error) {
    // The id's run has already finished well: its result is the answer.
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    return client.workflow.getHandle<W>(options.workflowId).result();
  }
}
