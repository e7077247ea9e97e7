// The console's shell: who is signed in, the navigation their roles open, and the page for the path.
import { useEffect, useState, type ReactNode } from "react";
import { request } from "./api.ts";
import { initialLanguage, LANGUAGES, MessagesContext, type Language } from "./messages/index.ts";
import { ErrorBox, Link } from "./parts/common.tsx";
import { can, type Capability } from "./roles.ts";
import { BASE, usePath } from "./router.ts";
import { loadSession, MeContext, type SessionState } from "./session.ts";
import { Audit } from "./pages/Audit.tsx";
import { Guardrails } from "./pages/Guardrails.tsx";
import { McpServers } from "./pages/McpServers.tsx";
import { Mesh } from "./pages/Mesh.tsx";
import { MyKeys } from "./pages/MyKeys.tsx";
import { Models } from "./pages/Models.tsx";
import { Nodes } from "./pages/Nodes.tsx";
import { Overview } from "./pages/Overview.tsx";
import { Pictures } from "./pages/Pictures.tsx";
import { Playground } from "./pages/Playground.tsx";
import { SignIn } from "./pages/SignIn.tsx";
import { Tenancy } from "./pages/Tenancy.tsx";
import { Usage } from "./pages/Usage.tsx";

type NavKey = "overview" | "models" | "nodes" | "usage" | "tenancy" | "myKeys" | "playground" | "pictures" | "mesh" | "guardrails" | "mcp" | "audit";
interface Page {
  path: string;
  nav: NavKey;
  needs?: Capability;
  render: () => ReactNode;
}

const PAGES: Page[] = [
  { path: "/", nav: "overview", needs: "models.read", render: () => <Overview /> },
  { path: "/models", nav: "models", needs: "models.read", render: () => <Models /> },
  { path: "/nodes", nav: "nodes", needs: "nodes.read", render: () => <Nodes /> },
  { path: "/usage", nav: "usage", needs: "usage.read", render: () => <Usage /> },
  { path: "/tenancy", nav: "tenancy", needs: "tenancy.read", render: () => <Tenancy /> },
  { path: "/keys", nav: "myKeys", render: () => <MyKeys /> },
  { path: "/playground", nav: "playground", render: () => <Playground /> },
  { path: "/pictures", nav: "pictures", render: () => <Pictures /> },
  { path: "/3d", nav: "mesh", render: () => <Mesh /> },
  { path: "/guardrails", nav: "guardrails", needs: "admin", render: () => <Guardrails /> },
  { path: "/mcp", nav: "mcp", needs: "admin", render: () => <McpServers /> },
  { path: "/audit", nav: "audit", needs: "admin", render: () => <Audit /> },
];

export function App() {
  const [lang, setLang] = useState<Language>(initialLanguage);
  const [session, setSession] = useState<SessionState>({ kind: "loading" });
  const path = usePath();
  const t = LANGUAGES[lang];
  useEffect(() => void loadSession().then(setSession), []);
  useEffect(() => {
    document.documentElement.lang = lang;
    localStorage.setItem("llmgw.lang", lang);
  }, [lang]);

  const me = session.kind === "signed-in" ? session.me : null;
  const open = PAGES.filter((p) => !p.needs || can(me, p.needs));
  // A person who may not see the overview lands on their keys.
  const page = path === "/" && me && !can(me, "models.read") ? PAGES.find((p) => p.path === "/keys") : open.find((p) => p.path === path);
  const signOut = () => void request("POST", "/auth/logout").finally(() => location.assign(`${BASE}/signin`));

  let main: ReactNode;
  if (session.kind === "loading") main = <p role="status">{t.loading}</p>;
  else if (session.kind === "signed-out" || path === "/signin") main = <SignIn />;
  else if (session.kind === "error") main = <ErrorBox error={session.error} />;
  else if (!page) main = <p role="alert">{PAGES.some((p) => p.path === path) ? t.forbidden : t.notFound}</p>;
  else main = page.render();

  return (
    <MessagesContext.Provider value={t}>
      <MeContext.Provider value={me}>
        <a className="skip" href="#main">
          {t.skipToContent}
        </a>
        <header>
          <span className="brand">{t.appName}</span>
          {me ? (
            <nav aria-label="Main">
              <ul>
                {open.map((p) => (
                  <li key={p.path}>
                    <Link to={p.path} current={p === page}>
                      {t.nav[p.nav]}
                    </Link>
                  </li>
                ))}
              </ul>
            </nav>
          ) : null}
          <div className="who">
            <label>
              {t.language}{" "}
              <select value={lang} onChange={(e) => setLang(e.target.value as Language)}>
                <option value="en">English</option>
                <option value="tr">Türkçe</option>
              </select>
            </label>
            {me ? (
              <>
                <span className="person">{me.person.name ?? me.person.email ?? me.person.id}</span>
                <button type="button" onClick={signOut}>
                  {t.nav.signOut}
                </button>
              </>
            ) : null}
          </div>
        </header>
        <main id="main" tabIndex={-1}>
          {main}
        </main>
      </MeContext.Provider>
    </MessagesContext.Provider>
  );
}
