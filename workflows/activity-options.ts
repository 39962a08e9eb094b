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

/**
 * Loading a card at the processor: it waits out a processor that is down. An attempt in flight
 * in a worker that dies is only retried after its start-to-close timeout.
 */
export const UNTIL_THE_PROCESSOR_TAKES_IT: ActivityOptions = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1 minute' },
};
