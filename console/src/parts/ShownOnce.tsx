// A new key, shown once: selected text and a copy button. It is never kept anywhere by the console
// except, for the playground, in this tab's memory.
import { useState } from "react";
import { useT } from "../messages/index.ts";

export function ShownOnce({ secret }: { secret: string }) {
  const t = useT();
  const [copied, setCopied] = useState(false);
  return (
    <div className="shown-once" role="status">
      <p>{t.keys.shownOnce}</p>
      <code className="secret" data-testid="new-key">
        {secret}
      </code>{" "}
      <button type="button" onClick={() => void navigator.clipboard?.writeText(secret).then(() => setCopied(true), () => setCopied(false))}>
        {copied ? t.keys.copied : t.keys.copy}
      </button>
    </div>
  );
}

/** The last key made in this tab, for the playground (never stored). */
let lastKey: string | undefined;
export const keepForPlayground = (key: string) => void (lastKey = key);
export const playgroundKey = () => lastKey;
