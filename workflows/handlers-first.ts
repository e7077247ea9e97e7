// Waiting on state that a workflow's handlers change, the same way whatever order replay hands a
// task's signals and updates over in (patch handlers-before-operations; model-entity.ts says why).
import { allHandlersFinished, condition } from "@temporalio/workflow";

/**
 * Until `ready()`; with `handlersFirst`, until every handler of the task has ended and `ready()`
 * still holds. Without it this is `condition(ready)` itself, not wrapped: one more await in between
 * moves where a run begun before the patch issues its commands, and its replay fails
 * (tests/unit/model-entity-replay.test.ts). The order is a matter of microtasks: the integration
 * tests that replay a signal and an update of one task also pass with only one more await here and
 * no wait for the handlers. The wait is what holds whatever the SDK's number of awaits: within a
 * task every job is handed over before any continuation runs, so a started update counts as
 * unfinished until its answer is out.
 */
export function settled(ready: () => boolean, handlersFirst: boolean): Promise<void> {
  return handlersFirst ? afterHandlers(ready) : condition(ready);
}

async function afterHandlers(ready: () => boolean): Promise<void> {
  for (;;) {
    await condition(ready);
    await condition(allHandlersFinished);
    if (ready()) return;
  }
}
