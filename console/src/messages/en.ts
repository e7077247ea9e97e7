// Every text the console shows, in English. tr.ts has the same keys (the type makes it so).
export const en = {
  appName: "llmgw console",
  skipToContent: "Skip to content",
  nav: { overview: "Overview", models: "Models", nodes: "Nodes", usage: "Usage", tenancy: "Tenancy", myKeys: "My keys", playground: "Playground", pictures: "Pictures", mesh: "3D", guardrails: "Guardrails", mcp: "MCP servers", audit: "Audit", signOut: "Sign out" },
  language: "Language",
  loading: "Loading…",
  forbidden: "Your role does not allow this",
  signedOut: "You are signed out: sign in again",
  notFound: "No such page",
  signIn: { title: "Sign in", intro: "Sign in with your company account.", with: "Sign in with", none: "No sign-in provider is configured; ask an administrator.", failed: "Could not list the sign-in providers" },
  overview: { title: "Overview", models: "Models", nodes: "Nodes", operations: "Operations", notifications: "Recent notifications", noneRunning: "No operation started from this console is running", none: "None", running: "Running operations", started: "Started" },
  col: {
    name: "Name", ready: "Ready", asked: "Asked", versions: "Versions", weights: "Version weights", node: "Node", gpus: "GPUs", lastHeard: "Last heard",
    replicas: "Replicas", state: "State", version: "Version", engine: "Engine", address: "Address", cordoned: "Cordoned", actions: "Actions",
    when: "When", kind: "Kind", message: "Message", project: "Project", team: "Team", prefix: "Prefix", band: "Band", revoked: "Revoked",
    created: "Created", keys: "Keys", org: "Organization", models: "Models", expires: "Expires", status: "Status", operation: "Operation",
  },
  models: {
    title: "Models", serve: "Serve", scale: "Scale", stop: "Stop", replicas: "Replicas", version: "Version (optional)", engine: "Engine (optional)",
    replicasInvalid: "Replicas must be a whole number from 0 to 1000", versionInvalid: "A version is 1–64 letters, digits, dots, dashes or underscores",
    started: "Operation started", upgrade: "Upgrade", canary: "Canary", toVersion: "To version", wave: "Wave size", weight: "Traffic share (%)", for: "Judge for (e.g. 5m)",
    weightInvalid: "The share is a number above 0 and below 100", durationInvalid: "A duration is a number with ms, s, m or h (e.g. 90s, 5m)", waveInvalid: "A wave is a whole number from 1 to 1000",
    versionRequired: "Name the version", rollout: "Upgrade or canary", pause: "Pause", resume: "Resume", abort: "Abort", promote: "Promote", watch: "Open in the Temporal Web UI", progress: "Progress", noReplicas: "No replica",
    explain: "Explain placement", placement: "Where it would go", needs: "Each replica needs {gpus} GPU(s) with {gib} GiB free: {basis}", replicaOn: "Replica {n}: {node}{gpus}", nothingFits: "Nothing fits:",
  },
  nodes: { title: "Nodes", cordon: "Cordon", uncordon: "Uncordon", drain: "Drain", confirmDrain: "Drain node {id}? Its replicas move elsewhere.", memory: "memory" },
  usage: {
    title: "Usage", dimension: "Group by", from: "From", to: "To", show: "Show", csv: "Download CSV", requests: "Requests", tokens: "Tokens",
    cost: "Cost", gpuSeconds: "GPU-seconds", budgets: "Budgets", noData: "No usage in this range", chartOf: "{measure} per day by {dimension}",
    day: "Day", spentMoney: "Spent this month / budget", spentGpuHours: "GPU-hours this month / budget",
    dimensions: { org: "organization", team: "team", project: "project", person: "person", model: "model", key: "key" },
  },
  tenancy: {
    title: "Tenancy", orgs: "Organizations", teams: "Teams", projects: "Projects", keys: "API keys", newProject: "New project", newKey: "New key",
    create: "Create", revoke: "Revoke", keyName: "Key name", team: "Team (ORG/TEAM)", project: "Project", models: "Models (comma-separated, empty: all)",
    rotate: "Rotate", rotateHelp: "A new key now; the old one keeps working for an hour",
  },
  keys: {
    title: "My keys", create: "Create key", name: "Name", shownOnce: "Copy this key now: it is shown once and never again.", copy: "Copy", copied: "Copied",
    revoke: "Revoke", none: "You have no key yet",
  },
  playground: {
    title: "Playground", key: "API key", keyHelp: "A key of yours; it stays in this tab only.", makeKey: "Make a playground key", model: "Model", noModels: "This key may use no model",
    prompt: "Message", send: "Send", stop: "Stop", answer: "Answer", loadModels: "Load models",
  },
  limits: {
    title: "Limits and budgets", set: "Set limits", clear: "Clear", rpm: "Requests/min", tpm: "Tokens/min", concurrent: "Concurrent", monthlyBudget: "Monthly budget",
    monthlyBudgetGpuHours: "Monthly GPU-hours", invalid: "a number, 0 or more (whole for counts)", nothing: "Fill in at least one limit",
    help: "Only the fields filled in change; \"-\" clears one. A team is ORG/TEAM, a key its id.",
  },
  people: {
    title: "People and roles", person: "Person", choose: "Choose a person", memberships: "Memberships", scope: "Scope", scopeName: "Scope name", role: "Role",
    source: "Source", add: "Add membership", remove: "Remove", none: "No membership",
  },
  logs: { title: "Engine logs", show: "Logs", stop: "Stop", of: "Log of replica", live: "live" },
  slurm: {
    title: "Slurm", llmgw: "In llmgw", state: "In Slurm", jobs: "Jobs", lend: "Lend", reclaim: "Reclaim", notLendable: "Not lendable",
    disabled: "Slurm is not enabled on this platform", confirmLend: "Lend node {id} to Slurm? Its replicas move elsewhere first.",
  },
  pictures: { title: "Pictures", prompt: "Describe the picture", size: "Size", make: "Make picture", making: "Making…", result: "Picture", noModels: "This key may use no picture model" },
  mesh: { title: "3D", picture: "Picture", make: "Make mesh", job: "Job", pictureNeeded: "Choose a picture", viewerAlt: "The finished mesh" },
  admin: { remove: "Remove", notJson: "Not JSON" },
  guard: {
    title: "Guardrails", policies: "Policies", events: "Blocks and flags (last day)", scope: "Scope", rules: "Rules", updated: "Updated", document: "Policy (JSON, as ctl guard policy add takes it)",
    add: "Add policy", policy: "Policy", rule: "Rule", action: "Action",
  },
  mcp: { title: "MCP servers", servers: "Servers", target: "URL or command", timeout: "Timeout", rate: "Calls/min", test: "Test", tools: "Tools", document: "Server (JSON, as ctl mcp add sends it)", add: "Add server" },
  audit: {
    title: "Audit", since: "Since", source: "Source", actor: "Who", action: "Action", target: "Target", before: "Before", after: "After", older: "Older events", shown: "events shown, newest first",
    sources: { all: "everything", admin: "admin changes", mcp: "MCP tool calls" },
  },
};
export type Messages = typeof en;
