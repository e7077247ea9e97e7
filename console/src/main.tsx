// The console's entry: React renders the shell into #root. No inline script anywhere (the gateway's
// Content-Security-Policy allows scripts of this origin only).
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import "uplot/dist/uPlot.min.css";
import "./styles.css";
import { App } from "./App.tsx";

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
