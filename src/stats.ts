/**
 * Counters of the live update path, exposed as `window.__diamondStats` for the
 * UI tests and the benchmark (cheap: a few integers and a bounded set of seqs).
 */
export class DiamondStats {
  /** Diamond emissions taken from the event stream. */
  received = 0;
  /** Emissions with a store seq that changed the model. */
  applied = 0;
  /** Emissions with a seq already reflected (snapshot or a newer job state). */
  duplicates = 0;
  /** Seq gaps seen, and /state reloads they caused. */
  gaps = 0;
  resyncs = 0;
  /** GET /state fetches, and model change notifications (coalesced renders). */
  fetches = 0;
  renders = 0;
  /** Heartbeats answered, and events they replayed (missed by the event stream). */
  heartbeats = 0;
  replayed = 0;
  /** ms from a /state request to the jobs list painted, for the last fetch. */
  lastPaintMs: number | null = null;
  firstPaintMs: number | null = null;

  /** How many distinct seqs in [from, to] were received. */
  seen(from: number, to: number): number {
    let n = 0;
    for (const s of this._seqs) {
      if (s >= from && s <= to) {
        n++;
      }
    }
    return n;
  }

  noteSeq(seq: number): void {
    if (this._seqs.size >= MAX_SEQS) {
      this._seqs.clear();
    }
    this._seqs.add(seq);
  }

  private _seqs = new Set<number>();
}

const MAX_SEQS = 200_000;

export function installStats(stats: DiamondStats): void {
  (window as unknown as { __diamondStats: DiamondStats }).__diamondStats = stats;
}
