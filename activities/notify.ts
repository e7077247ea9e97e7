// Notifications raised by workflows, which hold no I/O: the workflow asks, the worker's notifier
// queues it (common/notifier.ts).
import { raise, type RaisedNotification } from "../common/notifier.ts";

export function notifyActivities() {
  return {
    async raiseNotification(n: RaisedNotification): Promise<void> {
      raise(n);
    },
  };
}
