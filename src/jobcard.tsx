/**
 * The notebook's job card: a renderer for `application/vnd.diamond.job+json`, the part
 * of the card's output that the kernel writes (diamond_jupyter/jobcard.py).
 *
 * The saved JSON is the card's record (what a reopened notebook shows at once); the live
 * state comes from the sidebar's model, which follows the server's events and replays the
 * store after a restart. The card therefore re-attaches to its job on its own, whatever
 * became of the kernel that displayed it.
 */
import * as React from 'react';

import { IRenderMime } from '@jupyterlab/rendermime';
import { ReactWidget, UseSignal } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';

import { fetchLogs } from './api';
import { IJobActions } from './components/Jobs';
import { fmtHms, fmtPredictedStart, parseTime, stateClass, terminalText } from './format';
import { attentionNow, attentionText } from './jobstate';
import { DiamondModel } from './model';
import { IFetchResult, IJob, ILookout, TERMINAL_STATES } from './types';

export const JOB_MIME = 'application/vnd.diamond.job+json';
const TAIL_LINES = 20;

/** The JSON the kernel writes (jobcard.card_json). */
export interface ICardData {
  version: number;
  job: IJob;
  time_limit_s: number | null;
  stdout_tail: string | null;
  stderr_tail: string | null;
  files: string[];
  error: string | null;
  /** A submit whose answer was lost: where the search for its job by its token stands. */
  lookout?: ILookout | null;
  rendered_at?: string;
}


/** The lookout to show: while the job, still under its provisional id, is open ("looking"),
 * or once it is closed so ("never-submitted"); none once the job was found (it shows as
 * itself, under its native id). */
function lookoutShown(data: ICardData, job: IJob): ILookout | null {
  const lookout = data.lookout;
  if (!lookout || !job.id.includes(':pending-')) {
    return null;
  }
  if (!TERMINAL_STATES.has(job.state)) {
    return lookout.state === 'looking' ? lookout : null;
  }
  if (lookout.state === 'never-submitted') {
    return lookout;
  }
  // saved while it was looked for; closed since, with no kernel to say so
  const closed = `${job.id} is closed as never submitted; a new submit is safe`;
  return { ...lookout, state: 'never-submitted', message: job.reason ? `${job.reason}: ${closed}` : closed };
}

/** What the card can do besides the sidebar's job actions. */
export interface ICardActions extends IJobActions {
  /** Open a file (a path under the server root) in JupyterLab. */
  open(path: string): void;
}

function tail(text: string | null | undefined): string {
  const lines = terminalText(text ?? '').replace(/\n+$/, '').split('\n');
  return lines.slice(-TAIL_LINES).join('\n');
}

function outcome(job: IJob): string {
  if (!TERMINAL_STATES.has(job.state)) {
    return '';
  }
  const code = job.exit_code !== null && job.exit_code !== undefined ? `, exit code ${job.exit_code}` : '';
  const reason =
    job.state !== 'COMPLETED' && job.reason && job.reason.trim() !== `exit code ${job.exit_code}`
      ? ` — ${job.reason}`
      : '';
  return `${job.state}${code}${reason}`;
}

/** Why the job runs where it does (the placement's verdicts, as on the sidebar). */
function why(job: IJob): string {
  const pl = job.placement;
  if (!pl || !pl.ranked || pl.ranked.length === 0) {
    return 'site chosen by the user';
  }
  const others = pl.ranked
    .filter(v => v.site !== job.site)
    .map(v => {
      const reason = (v.reasons ?? []).join('; ') || v.verdict || '';
      return reason ? `${v.site}: ${reason}` : v.site;
    });
  const policy = pl.policy ? ` by policy ${pl.policy}` : '';
  return `placed${policy}` + (others.length ? ` (over ${others.join(', ')})` : '');
}

function Timing(props: { job: IJob; limit: number | null; now: number }): JSX.Element {
  const { job, limit, now } = props;
  const sub = parseTime(job.submitted_at);
  const start = parseTime(job.started_at);
  const end = parseTime(job.ended_at) ?? now;
  const queued = sub !== null ? ((start ?? end) - sub) / 1000 : null;
  const ran = start !== null ? (end - start) / 1000 : null;
  const span = Math.max((queued ?? 0) + (limit ?? ran ?? 0), (queued ?? 0) + (ran ?? 0)) || 1;
  const done = TERMINAL_STATES.has(job.state);
  const runState = done ? job.state : 'RUNNING';
  let label: string;
  if (start === null) {
    label = done ? `queued ${fmtHms(queued)}, never ran` : `queued ${fmtHms(queued)}`;
  } else {
    const of = limit ? ` of ${fmtHms(limit)} limit` : '';
    label = `queued ${fmtHms(queued)} · ran ${fmtHms(ran)}${of}${done ? '' : ' so far'}`;
  }
  return (
    <div className="jp-diamond-card-timing">
      <div className="jp-diamond-card-bar" aria-hidden="true">
        <span
          className="jp-diamond-seg-queued"
          style={{ width: `${(100 * (queued ?? 0)) / span}%` }}
        />
        <span
          className={`jp-diamond-seg-${runState.toLowerCase()}`}
          style={{ width: `${(100 * (ran ?? 0)) / span}%` }}
        />
      </div>
      <span data-diamond-elapsed="">{label}</span>
    </div>
  );
}

/** The card itself (pure rendering; the widget owns the state). */
export function JobCard(props: {
  data: ICardData;
  job: IJob;
  live: boolean;
  logs: { stdout: string; stderr: string } | null;
  fetched: IFetchResult | null;
  fetching: boolean;
  now: number;
  actions: ICardActions;
  onFetch: () => void;
}): JSX.Element {
  const { data, job, logs, fetched, actions } = props;
  const done = TERMINAL_STATES.has(job.state);
  const failed = done && job.state !== 'COMPLETED';
  const label = job.name || job.id;
  const stdout = tail(logs?.stdout ?? data.stdout_tail);
  const stderr = tail(logs?.stderr ?? data.stderr_tail);
  const predicted =
    !done && !job.started_at ? fmtPredictedStart(job.predicted_start, props.now) : null;
  const attention = attentionNow(job);
  const lookout = lookoutShown(data, job);
  return (
    <div
      className={`jp-diamond-card ${stateClass(job.state)}`}
      data-diamond-card={job.id}
      data-diamond-state={job.state}
      data-diamond-live={props.live ? 'true' : 'false'}
      data-diamond-lookout={lookout?.state}
    >
      <div className="jp-diamond-card-head">
        <span className={`jp-diamond-badge ${stateClass(job.state)}`}>{job.state}</span>
        <strong className="jp-diamond-card-name">{label}</strong>
        <span className="jp-diamond-muted">
          {job.id} on {job.site}
        </span>
        {!props.live && (
          <span className="jp-diamond-muted" title="The server does not know this job now; this is the saved record.">
            (saved record)
          </span>
        )}
      </div>
      {lookout ? (
        <div
          className={lookout.state === 'looking' ? 'jp-diamond-muted' : 'jp-diamond-error-text'}
          data-diamond-lookout-message=""
        >
          <b>{lookout.state === 'looking' ? 'looking for it:' : 'never submitted:'}</b>{' '}
          {lookout.message}
        </div>
      ) : (
        <div className="jp-diamond-muted" data-diamond-why="">
          {why(job)}
        </div>
      )}
      {predicted && (
        <div data-diamond-predicted="">predicted start {predicted}</div>
      )}
      <Timing job={job} limit={data.time_limit_s} now={props.now} />
      {attention && (
        <div className="jp-diamond-attention" data-diamond-attention={attention.attention}>
          <b>attention:</b> {attentionText(attention)}
        </div>
      )}
      {done && (
        <div data-diamond-outcome="">
          <b>outcome:</b> {outcome(job)}
        </div>
      )}
      {failed && stderr && (
        <>
          <div>
            <b>stderr (tail)</b>
          </div>
          <pre className="jp-diamond-card-tail" data-diamond-stderr="">
            {stderr}
          </pre>
        </>
      )}
      {stdout && (
        <>
          <div>
            <b>stdout (tail)</b>
          </div>
          <pre className="jp-diamond-card-tail" data-diamond-stdout="">
            {stdout}
          </pre>
        </>
      )}
      {fetched ? (
        <div data-diamond-fetched={fetched.dest}>
          <b>fetched to {fetched.dest}:</b>{' '}
          {fetched.paths.map(p => (
            <a
              key={p}
              href="#"
              className="jp-diamond-card-file"
              data-diamond-file={p}
              onClick={e => {
                e.preventDefault();
                actions.open(p);
              }}
            >
              {p.split('/').pop()}
            </a>
          ))}
        </div>
      ) : (
        data.files.length > 0 && (
          <div className="jp-diamond-muted">
            <b>files:</b> {data.files.map(f => f.split('/').pop()).join(', ')}
          </div>
        )
      )}
      {data.error && <div className="jp-diamond-error-text">{data.error}</div>}
      <div className="jp-diamond-job-actions">
        {!done && (
          <button
            className="jp-mod-styled jp-diamond-small-button jp-mod-warn"
            aria-label={`Cancel ${label}`}
            onClick={() => actions.cancel(job)}
          >
            Cancel
          </button>
        )}
        <button
          className="jp-mod-styled jp-diamond-small-button"
          aria-label={`Show logs of ${label}`}
          onClick={() => actions.logs(job)}
        >
          Logs
        </button>
        {done && (
          <button
            className="jp-mod-styled jp-diamond-small-button"
            aria-label={`Fetch results of ${label}`}
            disabled={props.fetching}
            onClick={props.onFetch}
          >
            {props.fetching ? 'Fetching…' : 'Fetch'}
          </button>
        )}
      </div>
    </div>
  );
}

/** The rendermime renderer: one per output. */
export class JobCardRenderer extends ReactWidget implements IRenderMime.IRenderer {
  constructor(
    private _model: DiamondModel,
    private _actions: ICardActions
  ) {
    super();
    this.addClass('jp-diamond-card-output');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = model.data[JOB_MIME] as unknown as ICardData | undefined;
    if (!data || !data.job || !data.job.id) {
      this.node.textContent = 'diamond: this output has no job.';
      return;
    }
    this._data = { ...data, files: data.files ?? [] };
    void this._model.ensureJob(data.job.id);
    this.update();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    // elapsed time ticks while the job is not over (a redraw, no request)
    this._timer = window.setInterval(() => {
      if (!TERMINAL_STATES.has(this._job()?.state ?? 'COMPLETED')) {
        this.update();
      }
    }, 1000);
  }

  protected onBeforeDetach(msg: Message): void {
    window.clearInterval(this._timer);
    super.onBeforeDetach(msg);
  }

  dispose(): void {
    window.clearInterval(this._timer);
    super.dispose();
  }

  render(): JSX.Element | null {
    if (!this._data) {
      return null;
    }
    return (
      <UseSignal signal={this._model.changed}>
        {() => {
          const job = this._job()!;
          this._maybeReadLogs(job);
          return (
            <JobCard
              data={this._data!}
              job={job}
              live={this._model.getJob(job.id) !== undefined}
              logs={this._logs}
              fetched={this._fetched}
              fetching={this._fetching}
              now={Date.now()}
              actions={this._actions}
              onFetch={() => void this._fetch(job)}
            />
          );
        }}
      </UseSignal>
    );
  }

  /** The live job when the model knows it, else the saved one. */
  private _job(): IJob | undefined {
    if (!this._data) {
      return undefined;
    }
    const live = this._model.getJob(this._data.job.id);
    return live ? { ...this._data.job, ...live } : this._data.job;
  }

  /** A job that ended after its card was saved: read its output tails once. */
  private _maybeReadLogs(job: IJob): void {
    const saved = this._data!.job;
    if (this._logsAsked || !TERMINAL_STATES.has(job.state) || TERMINAL_STATES.has(saved.state)) {
      return;
    }
    this._logsAsked = true;
    fetchLogs(job.id, this._model.settings)
      .then(logs => {
        this._logs = logs;
        this.update();
      })
      .catch(() => undefined); // the kernel's card or the Logs button still show them
  }

  private async _fetch(job: IJob): Promise<void> {
    this._fetching = true;
    this.update();
    try {
      const result = await this._actions.fetch(job);
      if (result) {
        this._fetched = result;
      }
    } finally {
      this._fetching = false;
      this.update();
    }
  }

  private _data: ICardData | null = null;
  private _logs: { stdout: string; stderr: string } | null = null;
  private _logsAsked = false;
  private _fetched: IFetchResult | null = null;
  private _fetching = false;
  private _timer = 0;
}

/** The rendermime factory (safe: everything is rendered as text). */
export function jobCardFactory(
  model: DiamondModel,
  actions: ICardActions
): IRenderMime.IRendererFactory {
  return {
    safe: true,
    mimeTypes: [JOB_MIME],
    defaultRank: 10, // before HTML (50): the live card where this extension runs
    createRenderer: () => new JobCardRenderer(model, actions)
  };
}
