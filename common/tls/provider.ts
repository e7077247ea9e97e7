// grpc-js's (experimental) CertificateProvider over certificates held in memory: servers and
// channels built on it take a renewed certificate or a new CA for their next handshake, without a
// restart.
import * as grpc from "@grpc/grpc-js";

type Provider = grpc.experimental.CertificateProvider;
type CaListener = grpc.experimental.CaCertificateUpdateListener;
type IdListener = grpc.experimental.IdentityCertificateUpdateListener;
type CaUpdate = grpc.experimental.CaCertificateUpdate;
type IdUpdate = grpc.experimental.IdentityCertificateUpdate;

export class MemoryCertificateProvider implements Provider {
  private ca: CaUpdate | null = null;
  private identity: IdUpdate | null = null;
  private readonly caListeners = new Set<CaListener>();
  private readonly idListeners = new Set<IdListener>();

  /** Sets the trusted CA certificate(s) and/or this process's certificate and key (PEM). */
  set(update: { caPem?: string; certPem?: string; keyPem?: string }): void {
    if (update.caPem !== undefined) {
      this.ca = { caCertificate: Buffer.from(update.caPem) };
      for (const l of this.caListeners) l(this.ca);
    }
    if (update.certPem !== undefined && update.keyPem !== undefined) {
      this.identity = { certificate: Buffer.from(update.certPem), privateKey: Buffer.from(update.keyPem) };
      for (const l of this.idListeners) l(this.identity);
    }
  }

  get ready(): boolean {
    return this.ca !== null && this.identity !== null;
  }

  // Delivered on a later tick, never inside add…Listener: grpc-js's server registers the watcher
  // that applies an update only after adding its listeners (server.js createHttp2Server), so an
  // update given synchronously would be lost and the port would drop every connection.
  addCaCertificateListener(l: CaListener): void {
    this.caListeners.add(l);
    setImmediate(() => {
      if (this.ca && this.caListeners.has(l)) l(this.ca);
    });
  }

  removeCaCertificateListener(l: CaListener): void {
    this.caListeners.delete(l);
  }

  addIdentityCertificateListener(l: IdListener): void {
    this.idListeners.add(l);
    setImmediate(() => {
      if (this.identity && this.idListeners.has(l)) l(this.identity);
    });
  }

  removeIdentityCertificateListener(l: IdListener): void {
    this.idListeners.delete(l);
  }
}
