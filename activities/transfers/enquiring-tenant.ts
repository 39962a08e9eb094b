// Whose name enquiry an activity is making, for the enquiry slots' fair shares
// (src/connectors/name-enquiry-slots.ts): the tenant of the run that asks, read from its id
// (`transfer:<tenant>:<reference>`, a single transfer's create or failover; `transfer-batch:<tenant>:…`,
// a batch's enquiries), so the nameEnquiry activity keeps its input as it was recorded in histories.
import { Context } from '@temporalio/activity';
import { transferBatchWorkflowId, transferWorkflowId } from '../../workflows/transfers/definitions.ts';

/** The run's tenant; another run's own id (a share of its own); '' outside an activity. */
export function enquiringTenant(): string {
  let workflowId: string | undefined;
  try {
    workflowId = Context.current().info.workflowExecution?.workflowId;
  } catch {
    return '';
  }
  if (workflowId === undefined) return '';
  const [, tenantId = '', ...rest] = workflowId.split(':');
  const key = rest.join(':');
  const transfers =
    workflowId === transferWorkflowId(tenantId, key) || workflowId === transferBatchWorkflowId(tenantId, key);
  return transfers ? tenantId : workflowId;
}
