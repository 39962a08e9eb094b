// Ends every run with one plain line, `N passed, N failed, N skipped`, that CI systems and people
// can read without knowing vitest's own summary format.
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed += 1;
        else if (state === 'failed') counts.failed += 1;
        else counts.skipped += 1;
      }
      // A file that failed to load has no tests but did fail.
      if (
        module.state() === 'failed' &&
        ![...module.children.allTests()].some((test) => test.result().state === 'failed')
      ) {
        counts.failed += 1;
      }
    }
    counts.failed += unhandledErrors.length;
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
