// Small pieces every page uses: an error shown as an alert (a 403 as the role's refusal), a table,
// a section, a link within the console.
import type { ReactNode } from "react";
import { describeError } from "../api.ts";
import { useT } from "../messages/index.ts";
import { BASE, navigate } from "../router.ts";

export function ErrorBox({ error }: { error: unknown }) {
  const t = useT();
  if (error === undefined || error === null) return null;
  return (
    <p role="alert" className="error">
      {describeError(error, t.forbidden, t.signedOut)}
    </p>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <p role="status" className="notice">
      {children}
    </p>
  );
}

export function Section({ title, children }: { title: string; children: ReactNode }) {
  const id = `h-${title.replace(/\W+/g, "-").toLowerCase()}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

export function Table({ caption, head, rows, empty }: { caption: string; head: string[]; rows: ReactNode[][]; empty?: string }) {
  return (
    <table>
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          {head.map((h) => (
            <th key={h} scope="col">
              {h}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={head.length}>{empty ?? "—"}</td>
          </tr>
        ) : (
          rows.map((r, i) => (
            <tr key={i}>
              {r.map((c, j) => (
                <td key={j}>{c}</td>
              ))}
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}

export function Link({ to, children, current }: { to: string; children: ReactNode; current?: boolean }) {
  return (
    <a
      href={`${BASE}${to}`}
      aria-current={current ? "page" : undefined}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : "—");
