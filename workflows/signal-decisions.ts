// When the model's signal handlers (repair, evacuate, wake) decide from its state. A worker that
// takes up a model cold can be handed an operation's result and a later signal in one activation,
// and the SDK runs the signal first: the handler decides from the state before the result. Replay
// hands the two over in two activations, the result first, so the handler decided otherwise there
// and the restarted worker found the run nondeterministic (tests/integration/serve-durability.test.ts,
// the wake case). With the patch on, a handler decides only while the main loop waits for work:
// after everything else of its activation, live and on replay alike.
import { condition } from "@temporalio/workflow";

export class SignalDecisions {
  /** The main loop is waiting for work: no operation's result is left to apply. */
  loopWaits = false;
  /** Patch signal-decisions-after-results is on (read once, after the workflow's earlier patches: their order is in the history). */
  deferred = false;

  /** Runs `decision` now (runs begun before the patch) or once the main loop waits. */
  async decide(decision: () => void): Promise<void> {
    if (this.deferred) await condition(() => this.loopWaits);
    decision();
  }
}
