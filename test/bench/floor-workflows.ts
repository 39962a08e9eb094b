// The floors the benchmark measures the gateway against: the least a workflow on the same Temporal
// server can cost. Bundled by the benchmark's own worker; never part of the gateway.
import { condition, setHandler } from '@temporalio/workflow';
import { pingUpdate } from './floor-definitions.ts';

/** Answers one `ping` update, then ends: the floor of an Update-with-Start round trip. */
export async function floorUpdateWorkflow(): Promise<void> {
  let answered = false;
  setHandler(pingUpdate, (value: string) => {
    answered = true;
    return value;
  });
  await condition(() => answered);
}

/** Ends at once: the floor of a start → result round trip. */
export async function floorEmptyWorkflow(): Promise<string> {
  return 'done';
}
