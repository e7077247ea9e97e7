// Imports run one way (docs/architecture.md, "Layers of the gateway"): `npm run lint` fails on a
// cycle anywhere, and on an import upward between the gateway's layers, type-only imports included.
//
//   gateway/server.ts            the process: puts every part together
//   client-api  admin-api  control-grpc      the APIs, beside each other: neither imports the other
//   jobs  usage  people  scim  guard  mcp  metrics.ts   services the APIs call
//   router                       endpoints, admission, picking, proxying
//   auth                         keys and limits
//   errors.ts  http/             what every layer throws; HTTP helpers both APIs share
//   common/                      below the gateway: never imports it
//
// A layer may import any layer below it, never one above; a layer's folders may import each other
// except the APIs (one concept each, side by side).

const GATEWAY_LAYERS = [
  { name: "api", path: "^gateway/(server\\.ts|client-api/|admin-api/|control-grpc/)" },
  { name: "services", path: "^gateway/(jobs/|usage/|people/|scim/|guard/|mcp/|cache/|metrics\\.ts)" },
  { name: "router", path: "^gateway/router/" },
  { name: "auth", path: "^gateway/auth/" },
  { name: "base", path: "^gateway/(errors\\.ts|http/|heap-tuning\\.ts)" },
];

/** One rule per layer: nothing in it imports a layer above it. */
const upward = GATEWAY_LAYERS.slice(1).map((layer, i) => ({
  name: `gateway-${layer.name}-imports-upward`,
  comment: `gateway/ layers run api → services → router → auth → base → common; ${layer.name} may not import ${GATEWAY_LAYERS.slice(0, i + 1)
    .map((l) => l.name)
    .join(", ")}`,
  severity: "error",
  from: { path: layer.path },
  to: { path: GATEWAY_LAYERS.slice(0, i + 1).map((l) => l.path) },
}));

const APIS = ["client-api", "admin-api", "control-grpc"];
const apisApart = APIS.map((api) => ({
  name: `gateway-${api}-imports-another-api`,
  comment: "the APIs sit side by side at the top: what two of them share goes a layer down (gateway/http/, gateway/errors.ts)",
  severity: "error",
  from: { path: `^gateway/${api}/` },
  to: { path: APIS.filter((a) => a !== api).map((a) => `^gateway/${a}/`) },
}));

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "a cycle has no bottom to build or test from; split out what both sides need",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    ...upward,
    ...apisApart,
    {
      name: "common-imports-gateway",
      comment:
        "common/ is below the gateway. One exception: common/children.ts starts the gateway process with the node flags gateway/heap-tuning.ts works out from the config (a leaf importing only common/config.ts), so the process that is started and its flags stay in one file",
      severity: "error",
      from: { path: "^common/", pathNot: "^common/children\\.ts$" },
      to: { path: "^gateway/" },
    },
    {
      name: "common-children-imports-gateway",
      comment: "common/children.ts may import gateway/heap-tuning.ts alone (see common-imports-gateway)",
      severity: "error",
      from: { path: "^common/children\\.ts$" },
      to: { path: "^gateway/", pathNot: "^gateway/heap-tuning\\.ts$" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|common/generated|\\.data)/" },
    // Type-only imports count: a type is a dependency on the module's meaning all the same.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js", ".json"] },
  },
};
