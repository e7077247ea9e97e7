// gRPC credentials for the agent protocol: mutual TLS over a process's certificate provider, or
// plaintext where LLMGW_INSECURE_GRPC=1 (tls null). Peers are told apart by their certificate's
// URI SAN (common/tls/identity.ts), on both ends.
import type { PeerCertificate } from "node:tls";
import * as grpc from "@grpc/grpc-js";
import { log } from "../logging.ts";
import { expectPeer, isControl, isNode, nodeIdentity, uriSans } from "./identity.ts";

/** A process's side of the agent protocol's TLS: whom it trusts and who it is, kept current. */
export interface GrpcTls {
  provider: grpc.experimental.CertificateProvider;
  /** The CA certificate(s) trusted now, PEM. */
  caPem(): string;
  /** Resolves once the process has a certificate (an agent enrolling waits for it). */
  ready: Promise<void>;
  /** Stops renewing. */
  close(): void;
}

let warned = false;

/** Whether the agent protocol runs in plaintext (LLMGW_INSECURE_GRPC=1); warns once per process. */
export function plaintextGrpc(setting: string | undefined): boolean {
  if (setting !== "1") return false;
  if (!warned) {
    warned = true;
    log.warn("LLMGW_INSECURE_GRPC=1: the agent protocol runs in plaintext, without certificates; only the cluster token authenticates calls, and anyone on the network can read them");
  }
  return true;
}

/**
 * A server's credentials. `requireClientCertificate`: the handshake itself refuses a client without
 * a certificate from the CA (the agent); false lets it through, for the Control service's
 * enrolment calls, and each handler decides from peerIdentities().
 */
export function serverCredentials(tls: GrpcTls | null, requireClientCertificate: boolean): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  // The JS function takes (identity, ca, …) whatever its .d.ts names say: one provider serves both.
  return grpc.experimental.createCertificateProviderServerCredentials(tls.provider, tls.provider, requireClientCertificate);
}

/** Whom a channel expects at the other end: the control plane, any node, or one node by its id. */
export type PeerKind = "control" | "node" | { node: string };

/** A channel's credentials that verify the server against the CA, then its identity. */
export function channelCredentials(tls: GrpcTls | null, peer: PeerKind): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  let checkServerIdentity;
  if (peer === "control") checkServerIdentity = expectPeer(isControl, "the control plane's");
  else if (peer === "node") checkServerIdentity = expectPeer(isNode, "an llmgw node's");
  else {
    // The node the store says is at that address, and no other: an address can be taken over.
    const want = nodeIdentity(peer.node);
    checkServerIdentity = expectPeer((id) => id === want, `node ${peer.node}'s`);
  }
  return grpc.experimental.createCertificateProviderChannelCredentials(tls.provider, tls.provider, { checkServerIdentity });
}

/**
 * Channel options to go with channelCredentials: a fixed TLS server name, so no IP address is
 * sent as SNI (which node warns about) and nothing depends on how the peer was addressed.
 */
export const TLS_CHANNEL_OPTIONS: grpc.ChannelOptions = { "grpc.ssl_target_name_override": "llmgw" };

type ClientCtor<C> = new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => C;

/** A generated client for `address`, over TLS to a peer of `peer`'s kind (plaintext where tls is null). */
export function dial<C>(Ctor: ClientCtor<C>, address: string, tls: GrpcTls | null, peer: PeerKind): C {
  return new Ctor(address, channelCredentials(tls, peer), tls ? TLS_CHANNEL_OPTIONS : {});
}

/** An agent to call: its address, and the node it must prove to be (any node when only an address is given). */
export type AgentTarget = string | { address: string; nodeId: string };

/** A generated client for an agent, over TLS to the node `target` names. */
export function dialAgent<C>(Ctor: ClientCtor<C>, target: AgentTarget, tls: GrpcTls | null): C {
  return typeof target === "string" ? dial(Ctor, target, tls, "node") : dial(Ctor, target.address, tls, { node: target.nodeId });
}

/** The identities of a call's peer, from a certificate whose chain verified against the CA (none otherwise). */
export function peerIdentities(call: { getAuthContext(): { sslPeerCertificate?: PeerCertificate } | null }): string[] {
  // grpc-js sets sslPeerCertificate only where the socket is `authorized`: chain verified.
  return uriSans(call.getAuthContext()?.sslPeerCertificate?.subjectaltname);
}
