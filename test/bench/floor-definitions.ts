// The floor workflows' update, importable outside the workflow bundle.
import { defineUpdate } from '@temporalio/workflow';

export const pingUpdate = defineUpdate<string, [string]>('ping');
