// The language the console speaks: the one chosen (kept in localStorage), else the browser's if we have it.
import { createContext, useContext } from "react";
import { en, type Messages } from "./en.ts";
import { tr } from "./tr.ts";

export const LANGUAGES = { en, tr } as const;
export type Language = keyof typeof LANGUAGES;

export function initialLanguage(): Language {
  const kept = localStorage.getItem("llmgw.lang");
  if (kept === "en" || kept === "tr") return kept;
  return navigator.language.toLowerCase().startsWith("tr") ? "tr" : "en";
}

export const MessagesContext = createContext<Messages>(en);
export const useT = () => useContext(MessagesContext);

/** A message with {name} placeholders filled. */
export const fill = (text: string, values: Record<string, string | number>) => text.replace(/\{(\w+)\}/g, (_m, k: string) => String(values[k] ?? `{${k}}`));
