/**
 * When the model fetches /state again (retries with backoff, catch-up after a reconnect,
 * a bounded resync on a seq gap) and how its change notifications are coalesced. Timers
 * only: what a refresh does is the model's.
 */

const MAX_BACKOFF_MS = 60_000;
const MIN_BACKOFF_MS = 1_000;
const GAP_RESYNC_MS = 10_000;
const CATCH_UP_MS = [5_000, 15_000, 35_000];

export class RefreshScheduler {
  /** `refresh` fetches /state; `onResync` counts gap resyncs. */
  constructor(
    private _refresh: () => void,
    private _onResync: () => void
  ) {}

  /** A retry after the current backoff (doubling up to 60 s); one pending at a time. */
  retry(): void {
    if (this._timer !== null || this._disposed) {
      return;
    }
    const delay = this._backoff;
    this._backoff = Math.min(this._backoff * 2, MAX_BACKOFF_MS);
    this._timer = window.setTimeout(() => {
      this._timer = null;
      this._refresh();
    }, delay);
  }

  /** A fetch succeeded. */
  resetBackoff(): void {
    this._backoff = MIN_BACKOFF_MS;
  }

  /** Cancel the pending retry (a fetch starts now). */
  clearRetry(): void {
    if (this._timer !== null) {
      window.clearTimeout(this._timer);
      this._timer = null;
    }
  }

  /**
   * After a reconnect, JupyterLab's event socket resubscribes on its own
   * backoff (up to 30 s) and events emitted meanwhile are not buffered: fetch
   * /state a few more times (bounded) to cover that window.
   */
  catchUp(): void {
    for (const t of this._catchUp) {
      window.clearTimeout(t);
    }
    this._catchUp = CATCH_UP_MS.map(delay => window.setTimeout(() => this._refresh(), delay));
  }

  /** Events were missed: fetch again, at most every 10 s. */
  gap(): void {
    const now = Date.now();
    if (now - this._lastGapResync < GAP_RESYNC_MS) {
      return;
    }
    this._lastGapResync = now;
    this._onResync();
    // Let the current event finish applying first.
    setTimeout(() => this._refresh(), 0);
  }

  dispose(): void {
    this._disposed = true;
    this.clearRetry();
    this._catchUp.forEach(t => window.clearTimeout(t));
  }

  private _backoff = MIN_BACKOFF_MS;
  private _timer: number | null = null;
  private _catchUp: number[] = [];
  private _lastGapResync = 0;
  private _disposed = false;
}

/**
 * Runs `flush` once per animation frame however often `schedule` is called (and after
 * 250 ms at the latest: hidden tabs get no animation frames).
 */
export class FrameCoalescer {
  constructor(private _flush: () => void) {}

  schedule(): void {
    if (this._frame !== null) {
      return;
    }
    const flush = () => {
      if (this._frame !== null) {
        window.clearTimeout(this._frameTimer);
        cancelAnimationFrame(this._frame);
      }
      this._frame = null;
      this._flush();
    };
    this._frame = requestAnimationFrame(flush);
    this._frameTimer = window.setTimeout(flush, 250);
  }

  private _frame: number | null = null;
  private _frameTimer = 0;
}
