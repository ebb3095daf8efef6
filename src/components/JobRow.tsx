import * as React from 'react';

import { Clipboard } from '@jupyterlab/apputils';
import {
  closeIcon,
  copyIcon,
  downloadIcon,
  fileIcon,
  notebookIcon,
  runIcon
} from '@jupyterlab/ui-components';

import { fmtPredictedStart, fmtTime, predictionSource, stateClass } from '../format';
import { JobDetails } from './Placement';
import { attentionNow, attentionText } from '../jobstate';
import { fetchJob } from '../api';
import {
  IFetchResult,
  IJob,
  IJobDependency,
  IReleaseOutcome,
  TERMINAL_STATES
} from '../types';

export interface IJobActions {
  cancel(job: IJob): void;
  /** POST jobs/ID/release: sent, kept until the job's stage-in is done, or refused. */
  release(job: IJob): Promise<IReleaseOutcome>;
  logs(job: IJob): void;
  /** Copy the results under the server root; what was copied, or null on failure. */
  fetch(job: IJob): Promise<IFetchResult | null>;
  openOrigin(job: IJob): void;
}

function SmallButton(props: {
  label: string;
  title?: string;
  warn?: boolean;
  icon: typeof fileIcon;
  onClick: () => void;
  children: React.ReactNode;
}): JSX.Element {
  const Icon = props.icon;
  return (
    <button
      className={`jp-mod-styled jp-diamond-small-button${props.warn ? ' jp-mod-warn' : ''}`}
      aria-label={props.label}
      title={props.title ?? props.label}
      onClick={props.onClick}
    >
      <Icon.react tag="span" className="jp-diamond-inline-icon" />
      {props.children}
    </button>
  );
}

/** A waiting job held by its user (submitted held, or held while its stage-in copies), as
 * each scheduler's reason says it: Slurm `JobHeldUser`, PBS, LSF, Grid Engine and Flux
 * `held (...)` (an administrator's hold, `JobHeldAdmin`, is not the user's to release). */
export function heldByUser(job: IJob): boolean {
  return job.state === 'PENDING' && /^(JobHeldUser$|held \()/.test(job.reason ?? '');
}

/** What the row says once a release was asked, by `data-diamond-release`. */
const RELEASE_SAID: Record<string, string> = {
  sending: 'releasing…',
  kept: 'release kept: waiting for its input',
  sent: 'release sent'
};

/** One dependency in words, as `diamond status` says it: `afterok alpha:12 RUNNING:
 * waiting`, `... never satisfied`, `step prep: beta:7 RUNNING, held by its workflow: ...`. */
export function dependencyText(d: IJobDependency): string {
  let state = d.state ? ` ${d.state}` : '';
  let said = d.satisfied
    ? 'satisfied'
    : d.never
      ? 'never satisfied'
      : d.state || d.type === 'workflow'
        ? 'waiting'
        : 'waiting (a job diamond does not know)';
  if (d.type === 'workflow') {
    return `step ${d.step}: ${d.job ?? 'no job yet'}${state}, held by its workflow: ${said}`;
  }
  const task = d.task != null ? ` task ${d.task} of` : '';
  if (d.task != null && d.state) {
    // the task's own state, the array's beside it (as `diamond status` says it)
    state = ` (task ${d.task_state ?? 'unknown yet'}, array ${d.state})`;
    if (!d.task_state && !d.satisfied && !d.never) {
      said = "waiting (the task's state is unknown yet)";
    }
  }
  const tasks = d.tasks ? ` (tasks: ${d.tasks})` : '';
  const step = d.step ? ` (step ${d.step})` : '';
  return `${d.type}${task} ${d.job}${state}${tasks}${step}: ${said}`;
}

/** A job's state as the sidebar holds it (undefined: not loaded). */
export type StateOf = (jobId: string) => string | undefined;
const noState: StateOf = () => undefined;

/** What a job waits for, in its details `[data-diamond-depends-on]`: one
 * `[data-diamond-dependency=JOB or step][data-diamond-dependency-state=satisfied|waiting|never]`
 * each, read from GET jobs/ID when the details open and again as the job changes, as a
 * job it waits for changes state (`stateOf`), or as a job-dependency event says one turned. */
function Dependencies(props: { job: IJob; stateOf: StateOf }): JSX.Element | null {
  const { job, stateOf } = props;
  const [deps, setDeps] = React.useState<IJobDependency[] | null>(null);
  const [asks, setAsks] = React.useState(0);
  const upstream = (list: IJobDependency[]): string =>
    list.map(d => (d.job ? `${d.job}=${stateOf(d.job) ?? ''}` : '')).join(' ');
  const seen = React.useRef(''); // the upstream states when the list was read
  const told = (job.depends_on ?? [])
    .map(d => `${d.job}/${d.task ?? ''}/${d.satisfied}/${d.never}`)
    .join(' ');
  React.useEffect(() => {
    let live = true;
    fetchJob(job.id).then(
      got => {
        if (live) {
          seen.current = upstream(got.depends_on ?? []);
          setDeps(got.depends_on ?? []);
        }
      },
      () => live && setDeps(null)
    );
    return () => {
      live = false;
    };
  }, [job.id, job.state, job.reason, told, asks]);
  const now = deps ? upstream(deps) : '';
  React.useEffect(() => {
    if (deps && now !== seen.current) {
      seen.current = now;
      setAsks(n => n + 1); // a job it waits for moved: read the list again
    }
  }, [now]);
  if (!deps || deps.length === 0) {
    return null;
  }
  return (
    <div data-diamond-depends-on="">
      <strong>Depends on</strong>
      <ul className="jp-diamond-dependencies">
        {deps.map((d, i) => (
          <li
            key={`${d.job ?? ''}/${d.step ?? ''}/${i}`}
            className={d.never ? 'jp-diamond-error-text' : undefined}
            data-diamond-dependency={d.job ?? d.step ?? ''}
            data-diamond-dependency-state={
              d.satisfied ? 'satisfied' : d.never ? 'never' : 'waiting'
            }
          >
            {dependencyText(d)}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** What a row's badge says in its state's place while a lost submit's job is looked for
 * (its state stays UNKNOWN) or once it is closed as never submitted (FAILED). */
const LOOKOUT_BADGES: Record<string, string> = {
  looking: 'LOOKING',
  'never-submitted': 'NEVER SUBMITTED'
};

/** One job card: `[data-diamond-job=ID][data-diamond-state=STATE]`; a click on it, or
 * Enter/Space while it has the focus, shows its details `[data-diamond-job-details]` (again:
 * hides them). It takes part in the list's roving tab stop: `tabStop` (tabindex 0) on one
 * row only, `onFocus` tells the list which. Also
 * `[data-diamond-lookout=looking|found|never-submitted]` for a submit whose answer was lost;
 * a job held by its user `[data-diamond-release=held]` with a Release button, then
 * `sending`, `kept` (its stage-in still copying), `sent` or `refused`, said in
 * `[data-diamond-release-message]`. */
export function JobRow(props: {
  job: IJob;
  actions: IJobActions;
  timeZone: string;
  focused: boolean;
  tabStop: boolean;
  onFocus: () => void;
  /** the state of a job it waits for, as the sidebar holds it */
  stateOf?: StateOf;
}): JSX.Element {
  const { job, actions, timeZone, focused, tabStop, onFocus, stateOf } = props;
  const ref = React.useRef<HTMLLIElement>(null);
  const [open, setOpen] = React.useState(false);
  const onKeyDown = (e: React.KeyboardEvent<HTMLLIElement>): void => {
    // the row's own keys only: a button inside it handles its Enter/Space itself
    if (e.target === e.currentTarget && (e.key === 'Enter' || e.key === ' ')) {
      e.preventDefault();
      setOpen(!open);
    }
  };
  const onClick = (e: React.MouseEvent<HTMLLIElement>): void => {
    // a drag that selected text (the job's id, to copy it) is not a click on the row
    const selected = window.getSelection();
    const selecting = !!selected && !selected.isCollapsed && e.currentTarget.contains(selected.anchorNode);
    if (!selecting && !(e.target as HTMLElement).closest('button, a, [data-diamond-job-details]')) {
      setOpen(!open);
    }
  };
  const [copied, setCopied] = React.useState(false);
  const copyId = (): void => {
    Clipboard.copyToSystem(job.id);
    setCopied(true);
  };
  React.useEffect(() => {
    if (focused && ref.current) {
      ref.current.scrollIntoView({ block: 'nearest' });
      ref.current.focus();
    }
  }, [focused]);
  const label = job.name || job.id;
  const [verb, when] = job.ended_at
    ? ['ended', job.ended_at]
    : job.started_at
      ? ['started', job.started_at]
      : ['queued', job.submitted_at];
  const done = TERMINAL_STATES.has(job.state);
  const predicted =
    !done && !job.started_at ? fmtPredictedStart(job.predicted_start, Date.now()) : null;
  const attention = attentionNow(job);
  const lookout = job.lookout ?? null;
  const [release, setRelease] = React.useState<{ state: string; message: string | null }>();
  React.useEffect(() => {
    if (release?.state === 'sent' && !heldByUser(job)) {
      setRelease(undefined); // the scheduler has let it go: nothing more to say
    }
  }, [job.state, job.reason]);
  const releaseState = release?.state ?? (heldByUser(job) ? 'held' : undefined);
  const askRelease = (): void => {
    setRelease({ state: 'sending', message: null });
    actions.release(job).then(setRelease, (err: Error) =>
      setRelease({ state: 'refused', message: err.message })
    );
  };
  const badge = lookout ? LOOKOUT_BADGES[lookout.state] ?? job.state : job.state;
  return (
    <li
      ref={ref}
      tabIndex={tabStop ? 0 : -1}
      onFocus={e => e.target === e.currentTarget && onFocus()}
      onKeyDown={onKeyDown}
      onClick={onClick}
      className={`jp-diamond-job ${stateClass(job.state)}${focused ? ' jp-mod-focused' : ''}`}
      data-diamond-job={job.id}
      data-diamond-state={job.state}
      data-diamond-lookout={lookout?.state}
      data-diamond-release={done ? undefined : releaseState}
      aria-label={`${label}, ${badge} on ${job.site}`}
      data-diamond-details-open={open ? '' : undefined}
    >
      <div className="jp-diamond-job-main">
        <span className="jp-diamond-badge">{badge}</span>
        {/* dir="auto": a name in a right-to-left script reads in its own direction; one
            too long for the row is cut with an ellipsis: whole on hover */}
        <span className="jp-diamond-job-name" title={label} dir="auto">
          {label}
        </span>
        <span className="jp-diamond-muted">{job.site}</span>
      </div>
      <div className="jp-diamond-job-meta jp-diamond-muted">
        <span>{job.id}</span>
        <span>
          {verb} {fmtTime(when, timeZone)}
        </span>
        {job.exit_code !== null && job.exit_code !== undefined && (
          <span>exit {job.exit_code}</span>
        )}
        {job.reason && (
          <span title="reason" data-diamond-reason="">
            {job.reason}
          </span>
        )}
        {predicted && (
          <span
            title={predictionSource(job.predicted_start)}
            data-diamond-predicted=""
          >
            starts {predicted}
          </span>
        )}
      </div>
      {lookout && (
        <div
          className={lookout.state === 'never-submitted' ? 'jp-diamond-error-text' : 'jp-diamond-muted'}
          data-diamond-lookout-message=""
        >
          {lookout.message}
        </div>
      )}
      {!done && release && (
        <div
          className={release.state === 'refused' ? 'jp-diamond-error-text' : 'jp-diamond-muted'}
          title={release.message ?? undefined}
          data-diamond-release-message=""
        >
          {release.state === 'refused' ? release.message : RELEASE_SAID[release.state]}
        </div>
      )}
      {attention && (
        <div className="jp-diamond-attention" data-diamond-attention={attention.attention}>
          {attentionText(attention)}
        </div>
      )}
      {open && (
        <div data-diamond-job-details="">
          <button
            className="jp-mod-styled jp-diamond-small-button"
            aria-label={`Copy the id of ${label}: ${job.id}`}
            title={`Copy ${job.id}`}
            data-diamond-copy-id={job.id}
            data-diamond-copied={copied ? '' : undefined}
            onClick={copyId}
            onBlur={() => setCopied(false)}
          >
            <copyIcon.react tag="span" className="jp-diamond-inline-icon" />
            {copied ? 'Copied' : 'Copy id'}
          </button>
          {predicted && (
            // what the prediction rests on, in plain view (the row's title is hover-only)
            <div data-diamond-predicted-basis="">{predictionSource(job.predicted_start)}</div>
          )}
          <JobDetails job={job} timeZone={timeZone} />
          <Dependencies job={job} stateOf={stateOf ?? noState} />
        </div>
      )}
      <div className="jp-diamond-job-actions">
        <SmallButton label={`Show logs of ${label}`} icon={fileIcon} onClick={() => actions.logs(job)}>
          Logs
        </SmallButton>
        {done && (
          <SmallButton
            label={`Fetch results of ${label}`}
            icon={downloadIcon}
            onClick={() => void actions.fetch(job)}
          >
            Fetch
          </SmallButton>
        )}
        {job.origin?.path && (
          <SmallButton
            label={`Go to the cell that submitted ${label}`}
            title={`${job.origin.path}${job.origin.cell_id ? ` (cell ${job.origin.cell_id})` : ''}`}
            icon={notebookIcon}
            onClick={() => actions.openOrigin(job)}
          >
            Cell
          </SmallButton>
        )}
        {!done && heldByUser(job) && (!release || release.state === 'refused') && (
          <SmallButton
            label={`Release ${label}`}
            title={`Release ${label}: the scheduler may start it (kept until its input has arrived while its stage-in copies)`}
            icon={runIcon}
            onClick={askRelease}
          >
            Release
          </SmallButton>
        )}
        {!done && (
          <SmallButton
            label={`Cancel ${label}`}
            warn={true}
            icon={closeIcon}
            onClick={() => actions.cancel(job)}
          >
            Cancel
          </SmallButton>
        )}
      </div>
    </li>
  );
}
