// Activity options more than one workflow uses, written once. Constants only; bundled with the
// workflows that import them.
import type { ActivityOptions } from '@temporalio/workflow';

/** Ledger and projection writes: they must happen eventually, whatever the database's hiccups. */
export const UNTIL_RECORDED: ActivityOptions = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '30s' },
};

/** A provider call while the API request waits: a few quick attempts, then the request answers. */
export const WHILE_THE_API_WAITS: ActivityOptions = {
  startToCloseTimeout: '5s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumAttempts: 3 },
};
