// How an agent gets and keeps its certificate, on the Control service (as kubeadm's token
// discovery: the token never crosses a connection the agent has not verified):
//   ClusterCa  no credentials: the CA and HMAC-SHA256(cluster token, CA PEM), which the agent checks
//   Join       the cluster token, over TLS the agent verified against that CA: a certificate for node_id
//   Renew      the node's current certificate (mutual TLS): a new one for the same node
// and the check Register and Heartbeat make: the caller's certificate is the node's it reports.
import * as grpc from "@grpc/grpc-js";
import { log } from "../../common/logging.ts";
import { hasClusterToken, UNAUTHENTICATED, type ControlHandlers } from "../../common/proto.ts";
import type { ControlPlaneTls } from "../../common/tls/control-plane.ts";
import { peerIdentities } from "../../common/tls/credentials.ts";
import { caMac } from "../../common/tls/discovery.ts";
import { NODE_ID, nodeIdOf } from "../../common/tls/identity.ts";

type Issuing = Pick<ControlPlaneTls, "caPem" | "issueNode">;
type Refusal = { code: grpc.status; details: string };

const PLAINTEXT: Refusal = { code: grpc.status.FAILED_PRECONDITION, details: "this control plane runs the agent protocol in plaintext (LLMGW_INSECURE_GRPC=1): no certificates" };

/** The node id of the call's verified client certificate, or a refusal. */
export function callerNode(call: Parameters<typeof peerIdentities>[0]): string | Refusal {
  const ids = peerIdentities(call);
  const node = ids.map(nodeIdOf).find((n) => n !== null);
  if (node) return node;
  if (ids.length === 0) return { code: grpc.status.UNAUTHENTICATED, details: "no verified client certificate: an agent enrols first (Join)" };
  return { code: grpc.status.PERMISSION_DENIED, details: `the client certificate is not a node's (${ids.join(", ")})` };
}

/** Refusal when the call's certificate is not that of `nodeId` (null: it is, or TLS is off). */
export function refuseUnlessNode(tls: Issuing | null, call: Parameters<typeof peerIdentities>[0], nodeId: string | undefined): Refusal | null {
  if (!tls) return null;
  const node = callerNode(call);
  if (typeof node !== "string") return node;
  if (node !== nodeId) return { code: grpc.status.PERMISSION_DENIED, details: `the client certificate is node "${node}"'s, not "${nodeId ?? ""}"'s` };
  return null;
}

export function enrolmentHandlers(o: { tls: Issuing | null; token: string }): Pick<ControlHandlers, "ClusterCa" | "Join" | "Renew"> {
  const issue = (nodeId: string, csrPem: string, how: string, cb: grpc.sendUnaryData<{ certPem: string; caPem: string }>) => {
    const tls = o.tls;
    if (!tls) return cb(PLAINTEXT);
    if (!tls.issueNode) {
      return cb({
        code: grpc.status.FAILED_PRECONDITION,
        details: "this control plane issues no certificates (LLMGW_TLS_CERT_FILE without LLMGW_TLS_CA_KEY_FILE): give the agent LLMGW_TLS_CERT_FILE and LLMGW_TLS_KEY_FILE",
      });
    }
    tls.issueNode(nodeId, csrPem).then(
      (certPem) => {
        log.info(`agent ${how}: certificate issued`, { node: nodeId });
        cb(null, { certPem, caPem: tls.caPem() });
      },
      (err: Error) => cb({ code: grpc.status.INVALID_ARGUMENT, details: `csr_pem: ${err.message}` }),
    );
  };

  return {
    ClusterCa(_call, cb) {
      if (!o.tls) return cb(PLAINTEXT);
      const caPem = o.tls.caPem();
      cb(null, { caPem, mac: caMac(o.token, caPem) });
    },
    Join(call, cb) {
      if (!hasClusterToken(call, o.token)) return cb(UNAUTHENTICATED);
      const { nodeId, csrPem } = call.request;
      if (!NODE_ID.test(nodeId)) return cb({ code: grpc.status.INVALID_ARGUMENT, details: `node_id "${nodeId}" must be letters, digits, ".", "_" or "-"` });
      issue(nodeId, csrPem, "joined", cb);
    },
    Renew(call, cb) {
      if (!hasClusterToken(call, o.token)) return cb(UNAUTHENTICATED);
      if (!o.tls) return cb(PLAINTEXT);
      const node = callerNode(call);
      if (typeof node !== "string") return cb(node);
      issue(node, call.request.csrPem, "renewed", cb);
    },
  };
}
