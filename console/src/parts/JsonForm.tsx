// A JSON document typed into a text area and sent as the body of a POST: the guardrail policy and
// MCP server forms. Text that is not JSON is named before sending; the API names a bad field.
import { useState, type FormEvent } from "react";
import { useT } from "../messages/index.ts";

export function JsonForm({ label, submit, example, onSend }: { label: string; submit: string; example: string; onSend: (body: unknown) => void }) {
  const t = useT();
  const [bad, setBad] = useState<string>();
  const send = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const text = String(new FormData(e.currentTarget).get("doc") ?? "");
    try {
      const body: unknown = JSON.parse(text);
      setBad(undefined);
      onSend(body);
    } catch (err) {
      setBad(`${t.admin.notJson}: ${(err as Error).message}`);
    }
  };
  return (
    <form onSubmit={send} aria-label={submit} className="json-form">
      <label>
        {label}
        <textarea name="doc" rows={8} cols={80} required spellCheck={false} placeholder={example} />
      </label>
      {bad ? (
        <p role="alert" className="error">
          {bad}
        </p>
      ) : null}
      <button type="submit">{submit}</button>
    </form>
  );
}
