// How a long-lived workflow here continues as new: only once every signal and update handler has
// finished, so that none is cut off, and with the next run's arguments read after that wait, so
// that they carry what those handlers changed meanwhile.
import { type Workflow, allHandlersFinished, condition, continueAsNew } from '@temporalio/workflow';

/** Waits for every handler to finish, then continues as new with the arguments `nextArgs` reads then. */
export async function continueAsNewOnceHandled<F extends Workflow>(nextArgs: () => Parameters<F>): Promise<never> {
  await condition(allHandlersFinished);
  return continueAsNew<F>(...nextArgs());
}
