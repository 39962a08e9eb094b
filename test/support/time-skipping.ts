// Temporal's time-skipping test server from the pinned binary in .tools/ (nothing downloaded).
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { findTool } from '../../src/stack/tools.ts';
import { installRuntime } from './worker.ts';

export async function startTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  installRuntime();
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: findTool('temporal-test-server') } },
  });
}
