// Ports for engines: the next one in the node's range, round robin, that no replica holds and that
// binds now on the engine's interface, on loopback and on every interface (so no other program
// listens there in any way). A port being handed out is held until its replica is recorded.
import * as grpc from "@grpc/grpc-js";
import { canBind } from "./engine-process.ts";
import { ReplicaError } from "./start-request.ts";

export class EnginePorts {
  private readonly pending = new Set<number>();
  private next: number;

  constructor(
    private readonly min: number,
    private readonly max: number,
  ) {
    if (min > max) throw new Error(`engine port range ${min}-${max} is empty`);
    this.next = min;
  }

  /** A free port (`held`: those live replicas listen on); release it once its replica is recorded. */
  async pick(host: string, held: Iterable<number>): Promise<number> {
    const { min, max } = this;
    const span = max - min + 1;
    const taken = new Set<number>(this.pending);
    for (const p of held) taken.add(p);
    for (let i = 0; i < span; i++) {
      const port = min + ((this.next - min + i) % span);
      if (taken.has(port) || this.pending.has(port)) continue;
      this.pending.add(port);
      if ((await canBind(port, "127.0.0.1")) && (await canBind(port)) && (await canBind(port, host))) {
        this.next = port + 1 > max ? min : port + 1;
        return port;
      }
      this.pending.delete(port);
    }
    throw new ReplicaError(grpc.status.RESOURCE_EXHAUSTED, `no free engine port in ${min}-${max}`);
  }

  release(port: number): void {
    this.pending.delete(port);
  }
}
